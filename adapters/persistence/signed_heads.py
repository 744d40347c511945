"""Signed writes, the writing side: the new chain heads of a commit signed and stored in its transaction.

See ``chatledger.domain.signed_writes``. One row per conversation in
``chatledger_head_signatures`` (its newest signed head), replaced by each
commit; a row is never moved back to an older version.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any
from uuid import UUID

from psycopg import sql

from chatledger.domain.seal import SealKey
from chatledger.domain.signed_writes import head_message

__all__ = ["SIGN_WRITES_ENV", "HeadSigner", "sign_writes_key"]

_UPSERT = (
    "INSERT INTO {table} (originator_id, originator_version, signature) VALUES ({p}, {p}, {p}) "
    "ON CONFLICT (originator_id) DO UPDATE SET originator_version = "
    "excluded.originator_version, signature = excluded.signature "
    "WHERE excluded.originator_version > {name}.originator_version"
)


class HeadSigner:
    """Signs the heads a commit makes and writes them with the commit's cursor (one backend)."""

    def __init__(self, key: SealKey, backend: str, schema: str | None = None) -> None:
        self.key = key
        self._postgres = backend == "postgres"
        if self._postgres:
            self._statement: Any = sql.SQL(
                _UPSERT.format(table="{table}", p="%s", name="chatledger_head_signatures")
            ).format(table=sql.Identifier(schema or "public", "chatledger_head_signatures"))
        else:
            self._statement = _UPSERT.format(
                table="chatledger_head_signatures", p="?", name="chatledger_head_signatures"
            )

    def write(self, cursor: Any, heads: dict[UUID, tuple[int, bytes]]) -> None:
        """Sign each new head and store it (in the transaction of ``cursor``)."""
        if not heads:
            return
        rows = [
            (
                key if self._postgres else key.hex,
                version,
                self.key.sign(head_message(key, version, link)),
            )
            for key, (version, link) in sorted(heads.items(), key=lambda item: item[0].bytes)
        ]  # in id order: two commits of a group never lock the same rows the other way round
        cursor.executemany(self._statement, rows)


SIGN_WRITES_ENV = "CHATLEDGER_SIGN_WRITES"
"""Set to 1 to sign writes with the seal key of the environment."""


def sign_writes_key(given: SealKey | None) -> SealKey | None:
    """The key writers sign heads with: ``given``, else the seal key when ``$CHATLEDGER_SIGN_WRITES`` is 1.

    The seal key then comes from ``$CHATLEDGER_SEAL_KEY_FILE`` (a file), else
    ``$CHATLEDGER_SEAL_KEY`` (the secret); StoreConfigurationError when neither
    is set or the key cannot sign.
    """
    from chatledger.domain.errors import StoreConfigurationError

    key = given
    if key is None:
        flag = os.environ.get(SIGN_WRITES_ENV, "").strip().lower()
        if flag in ("", "0", "no", "false", "off"):
            return None
        path = os.environ.get("CHATLEDGER_SEAL_KEY_FILE")
        secret = os.environ.get("CHATLEDGER_SEAL_KEY")
        try:
            if path:
                key = SealKey.from_text(Path(path).read_text(encoding="utf-8"), where=repr(path))
            elif secret:
                key = SealKey.from_text(secret, where="$CHATLEDGER_SEAL_KEY")
        except OSError as error:
            raise StoreConfigurationError(
                f"${SIGN_WRITES_ENV} is set but the seal key file {path!r} cannot be read: "
                f"{error.strerror or error}"
            ) from None
        if key is None:
            raise StoreConfigurationError(
                f"${SIGN_WRITES_ENV} is set but there is no seal key to sign with: set "
                "$CHATLEDGER_SEAL_KEY_FILE or $CHATLEDGER_SEAL_KEY (or unset it)"
            )
    if not key.can_sign:
        raise StoreConfigurationError(
            "signed writes need the seal key that signs (an HMAC secret or an Ed25519 "
            "private key), not an Ed25519 public key"
        )
    return key
