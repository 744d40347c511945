"""Where ``chatledger serve`` gets its bearer tokens: a file or the environment, never the command line.

A token given as a command-line argument is visible to every local user in
the process list, so ``serve`` reads ``TOKEN=TENANT`` or
``TOKEN=TENANT:USER`` entries from ``--token-file`` (one a line, ``#``
comments; default ``$CHATLEDGER_TOKEN_FILE``, else ``./chatledger.tokens``)
and from ``$CHATLEDGER_TOKENS`` (comma-separated). With none, the first start
generates a token for the tenant into that file (readable by its owner only)
and says so; ``--no-auth`` serves without tokens, on purpose and loudly.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import TextIO

from chatledger.adapters.http.auth import Identity, parse_token

__all__ = ["DEFAULT_TOKEN_FILE", "TOKENS_ENV", "TOKEN_FILE_ENV", "TokenError", "serve_tokens"]

TOKENS_ENV = "CHATLEDGER_TOKENS"
TOKEN_FILE_ENV = "CHATLEDGER_TOKEN_FILE"
DEFAULT_TOKEN_FILE = "chatledger.tokens"


class TokenError(Exception):
    """The token configuration cannot be used as given (one line, exit 1)."""


def serve_tokens(
    token_file: str | None, *, no_auth: bool, tenant: str, out: TextIO, err: TextIO
) -> dict[str, Identity] | None:
    """The token table ``serve`` uses (None with ``--no-auth``), generating one at first start."""
    explicit = token_file or os.environ.get(TOKEN_FILE_ENV)
    path = Path(explicit or DEFAULT_TOKEN_FILE).expanduser()
    entries = [e for e in os.environ.get(TOKENS_ENV, "").split(",") if e.strip()]
    if path.is_file():
        entries += _read(path)
    if no_auth:
        if entries:
            raise TokenError(
                f"--no-auth, but tokens are configured ({TOKENS_ENV} or {path}); drop one of them"
            )
        print(
            "chatledger: WARNING: --no-auth: every request is served as tenant "
            f"{tenant!r} without a token. Anyone who can reach this server reads and writes "
            "its conversations and approves its tool calls.",
            file=err,
            flush=True,
        )
        return None
    tokens: dict[str, Identity] = {}
    for entry in entries:
        try:
            token, identity = parse_token(entry)
        except ValueError as error:
            raise TokenError(str(error)) from None
        tokens[token] = identity
    if tokens:
        return tokens
    token = _generate(path, tenant)
    print(
        f"chatledger: generated a token for tenant {tenant!r} in {path} (first start): "
        f"send 'Authorization: Bearer {token}'. Add TOKEN=TENANT:USER lines there for people; "
        "--no-auth serves without tokens.",
        file=out,
        flush=True,
    )
    return {token: Identity(tenant)}


def _read(path: Path) -> list[str]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise TokenError(f"cannot read the token file {path}: {error}") from None
    lines = (line.strip() for line in text.splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def _generate(path: Path, tenant: str) -> str:
    """A new token for ``tenant``, written to a new file only its owner can read."""
    token = secrets.token_urlsafe(32)
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as error:
        raise TokenError(f"cannot create the token file {path}: {error}") from None
    with os.fdopen(descriptor, "w", encoding="utf-8") as file:
        file.write(
            "# chatledger serve: bearer tokens, one a line: TOKEN=TENANT or TOKEN=TENANT:USER\n"
            f"{token}={tenant}\n"
        )
    return token
