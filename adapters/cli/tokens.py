"""Where ``chatledger serve`` gets its bearer tokens: a file or the environment, never the command line.

A token given as a command-line argument is visible to every local user in
the process list, so ``serve`` reads ``TOKEN=TENANT`` or
``TOKEN=TENANT:USER`` entries from ``--token-file`` (one a line, ``#``
comments; default ``$CHATLEDGER_TOKEN_FILE``, else ``./chatledger.tokens``)
and from ``$CHATLEDGER_TOKENS`` (comma-separated). With none, the first start
generates a token for the tenant into that file (readable by its owner only)
and says so. That token names a user, so what it approves is recorded as
someone: ``$CHATLEDGER_USER``, else asked on a terminal, else the login name
(``user:<login>``). The file is read again whenever it changes
(``http/token_file.py``): a line added for a person works without a restart.
``--no-auth`` serves without tokens, on purpose and loudly; it is refused
only when tokens were configured on purpose (``--token-file``,
``$CHATLEDGER_TOKEN_FILE``, ``$CHATLEDGER_TOKENS``), not because a token was
once generated into ``./chatledger.tokens``.
"""

from __future__ import annotations

import getpass
import os
import secrets
import sys
from pathlib import Path
from typing import TextIO

from chatledger.adapters.http.auth import TokenTable, parse_token
from chatledger.adapters.http.token_file import TokenFile, read_token_file

__all__ = [
    "DEFAULT_TOKEN_FILE",
    "TOKENS_ENV",
    "TOKEN_FILE_ENV",
    "USER_ENV",
    "TokenError",
    "serve_tokens",
]

TOKENS_ENV = "CHATLEDGER_TOKENS"
TOKEN_FILE_ENV = "CHATLEDGER_TOKEN_FILE"
USER_ENV = "CHATLEDGER_USER"
"""Who the token generated at first start belongs to (recorded as the actor of its requests)."""
DEFAULT_TOKEN_FILE = "chatledger.tokens"


class TokenError(Exception):
    """The token configuration cannot be used as given (one line, exit 1)."""


def serve_tokens(
    token_file: str | None, *, no_auth: bool, tenant: str, out: TextIO, err: TextIO
) -> TokenTable | None:
    """The tokens ``serve`` checks (None with ``--no-auth``), generating one at first start."""
    explicit = token_file or os.environ.get(TOKEN_FILE_ENV)
    path = Path(explicit or DEFAULT_TOKEN_FILE).expanduser()
    entries = [e.strip() for e in os.environ.get(TOKENS_ENV, "").split(",") if e.strip()]
    found = _read(path) if path.is_file() else []
    if no_auth:
        if entries or (explicit and found):
            raise TokenError(
                f"--no-auth, but tokens are configured ({TOKENS_ENV} or {path}); drop one of them"
            )
        ignored = f" (the tokens in {path} are not used)" if found else ""
        print(
            "chatledger: WARNING: --no-auth: every request is served as tenant "
            f"{tenant!r} without a token{ignored}. Anyone who can reach this server reads and "
            "writes its conversations and approves its tool calls.",
            file=err,
            flush=True,
        )
        return None
    for entry in [*entries, *found]:
        try:
            parse_token(entry)
        except ValueError as error:
            raise TokenError(f"{error} (in {path} or ${TOKENS_ENV})") from None
    if not entries and not found:
        user = _first_user(tenant, err)
        token = _generate(path, tenant, user)
        print(
            f"chatledger: generated a token for {user} (tenant {tenant!r}) in {path} (first "
            f"start): send 'Authorization: Bearer {token}'. Add TOKEN=TENANT:USER lines there "
            "for other people (read again when it changes); --no-auth serves without tokens.",
            file=out,
            flush=True,
        )
    if not path.is_file():  # tokens from the environment only
        return TokenTable(dict(parse_token(e) for e in entries), where=f"${TOKENS_ENV}")
    return TokenFile(path, entries)


def _read(path: Path) -> list[str]:
    try:
        return read_token_file(path)
    except (OSError, UnicodeDecodeError) as error:
        raise TokenError(f"cannot read the token file {path}: {error}") from None


def _first_user(tenant: str, err: TextIO) -> str:
    """Who the first token is for: ``$CHATLEDGER_USER``, else asked on a terminal, else the login."""
    given = os.environ.get(USER_ENV, "").strip()
    if given:
        return given
    try:
        login = getpass.getuser()
    except (KeyError, OSError):  # no name for this uid (a bare container)
        login = "operator"
    default = f"user:{login}"
    if sys.stdin.isatty():
        print(
            f"chatledger: first start: who are you? What this token approves is recorded as you "
            f"(tenant {tenant!r}) [{default}]: ",
            end="",
            file=err,
            flush=True,
        )
        answer = sys.stdin.readline().strip()
        if answer and ":" not in answer:
            answer = f"user:{answer}"
        return answer or default
    return default


def _generate(path: Path, tenant: str, user: str) -> str:
    """A new token for ``user`` of ``tenant``, written to a new file only its owner can read."""
    token = secrets.token_urlsafe(32)
    try:
        parse_token(f"{token}={tenant}:{user}")
    except ValueError as error:
        raise TokenError(f"cannot make a token for {user!r}: {error}") from None
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as error:
        raise TokenError(f"cannot create the token file {path}: {error}") from None
    with os.fdopen(descriptor, "w", encoding="utf-8") as file:
        file.write(
            "# chatledger serve: bearer tokens, one a line: TOKEN=TENANT or TOKEN=TENANT:USER\n"
            "# (USER is recorded as the actor of what the token does; edits apply without a "
            "restart)\n"
            f"{token}={tenant}:{user}\n"
        )
    return token
