"""Bearer tokens from a file that is read again when it changes, so adding a user needs no restart.

``TokenFile`` is a ``TokenTable`` over ``TOKEN=TENANT`` / ``TOKEN=TENANT:USER``
lines (``#`` comments) plus fixed entries (``$CHATLEDGER_TOKENS``). Before
each authentication it compares the file's modification time, size and
inode with what it read last (one ``stat``); when they differ it reads the
file again. A file that cannot be read or holds a malformed line keeps the
tokens read before, and the problem is logged: a half-written edit never
locks everyone out.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Sequence
from pathlib import Path

from starlette.requests import Request

from chatledger.adapters.http.auth import Identity, TokenTable, parse_token

__all__ = ["TokenFile", "read_token_file"]

log = logging.getLogger("chatledger.http")


def read_token_file(path: Path) -> list[str]:
    """The entries of a token file (blank lines and ``#`` comments left out); OSError if unreadable."""
    text = path.read_text(encoding="utf-8")
    lines = (line.strip() for line in text.splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def _parse(entries: Sequence[str]) -> dict[str, Identity]:
    """Token -> identity of each entry; ValueError naming a malformed one."""
    return dict(parse_token(entry) for entry in entries)


class TokenFile(TokenTable):
    """The tokens of ``path`` (read again whenever it changes) and the fixed ``entries``."""

    def __init__(self, path: Path, entries: Sequence[str] = ()) -> None:
        self.path = path.expanduser().absolute()
        self.entries = list(entries)
        self._lock = threading.Lock()
        self._stamp = self._stat()
        super().__init__(self._read(), where=str(self.path))

    def __call__(self, request: Request) -> Identity:
        self.refresh()
        return super().__call__(request)

    def refresh(self) -> None:
        """Read the file again if it changed since it was last read (keep the old tokens if it cannot be)."""
        stamp = self._stat()
        if stamp == self._stamp:
            return
        with self._lock:
            if stamp == self._stamp:
                return
            try:
                tokens = self._read()
            except (OSError, UnicodeDecodeError, ValueError) as error:
                log.warning(
                    "token file %s not reloaded (the tokens before stay): %s", self.path, error
                )
                return
            finally:
                self._stamp = stamp
            self.tokens = TokenTable(tokens).tokens
            log.info("token file %s reloaded: %d token(s)", self.path, len(self.tokens))

    def _read(self) -> dict[str, Identity]:
        found = read_token_file(self.path) if self.path.is_file() else []
        return _parse([*self.entries, *found])

    def _stat(self) -> tuple[int, int, int] | None:
        try:
            found = os.stat(self.path)
        except OSError:
            return None
        return (found.st_mtime_ns, found.st_size, found.st_ino)
