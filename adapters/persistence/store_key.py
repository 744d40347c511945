"""The store's encryption key as one value: where it comes from, checked once, and what is derived from it.

With a key (``cipher_key``, or ``CHATLEDGER_CIPHER_KEY`` / ``CHATLEDGER_CIPHER_KEY_FILE``),
events and snapshots are encrypted (``eventsourcing``'s AES-GCM cipher, and
a data key per conversation wrapped by a key derived from this one), and so
are the read models' columns. The composition root makes one ``StoreKey``
(``StoreKey.resolve``) and hands it to the log, the data keys and the read
models; none of them parses or looks up the key again.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chatledger.domain.errors import CipherKeyError, StoreConfigurationError

__all__ = [
    "KEY_ENV",
    "KEY_FILE_ENV",
    "StoreKey",
    "decode_key",
    "key_from_environment",
    "read_key_file",
]

KEY_ENV = "CHATLEDGER_CIPHER_KEY"
"""Environment variable holding the key (base64 of 16, 24 or 32 bytes)."""
KEY_FILE_ENV = "CHATLEDGER_CIPHER_KEY_FILE"
"""Environment variable naming a file that holds the key."""


def decode_key(key: str) -> bytes:
    """The raw bytes of a base64 key; CipherKeyError if it is not one."""
    try:
        raw = base64.b64decode(key.strip().encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        raise CipherKeyError(
            "the cipher key is not base64 text (make one with "
            "`python -c 'from eventsourcing.cryptography import AESCipher; "
            "print(AESCipher.create_key(32))'`)"
        ) from None
    if len(raw) not in (16, 24, 32):
        raise CipherKeyError(
            f"the cipher key is {len(raw)} bytes; an AES key is 16, 24 or 32 bytes (base64)"
        )
    return raw


@dataclass(frozen=True, repr=False)
class StoreKey:
    """The store's key, checked: base64 text of 16, 24 or 32 bytes, and those bytes.

    Its ``repr`` shows nothing of the key, so that it never lands in a log
    line or a traceback.
    """

    text: str
    """The key as base64 text (surrounding whitespace removed)."""
    raw: bytes
    """The key's bytes."""

    @classmethod
    def parse(cls, text: str) -> StoreKey:
        """The key in ``text``: StoreConfigurationError without ``cryptography``, CipherKeyError if malformed."""
        # The missing package first: whatever the key, nothing can be encrypted without it.
        _require_cryptography()
        return cls(text.strip(), decode_key(text))

    @classmethod
    def resolve(cls, given: str | None, environ: Any = None) -> StoreKey | None:
        """The key ``given``, else the one the environment names (see ``key_from_environment``), else None."""
        if given:
            return cls.parse(given)
        environ = os.environ if environ is None else environ
        text = environ.get(KEY_ENV)
        if text:
            return cls.parse(str(text))
        path = environ.get(KEY_FILE_ENV)
        return cls.parse(_read_text(path)) if path else None

    def derive(self, purpose: bytes) -> bytes:
        """A 32-byte key for one purpose (sealing columns, wrapping data keys, ...), derived from this one."""
        return hmac.new(self.raw, b"chatledger/" + purpose, hashlib.sha256).digest()

    def check_value(self) -> str:
        """What the store keeps to recognise this key; reveals nothing of the key."""
        return "v1:" + self.derive(b"key-check-v1").hex()[:32]

    def cipher(self) -> Any:
        """``eventsourcing``'s AES-GCM cipher under this key (events and snapshots without a data key)."""
        from eventsourcing.cryptography import AESCipher
        from eventsourcing.utils import Environment

        return AESCipher(Environment(env={AESCipher.CIPHER_KEY: self.text}))

    def __repr__(self) -> str:
        return "StoreKey(...)"


def read_key_file(path: str | Path) -> str:
    """The key held in a file (surrounding whitespace ignored); CipherKeyError if unreadable."""
    return StoreKey.parse(_read_text(path)).text


def key_from_environment(environ: Any = None) -> str | None:
    """The key from ``CHATLEDGER_CIPHER_KEY``, else from the file ``CHATLEDGER_CIPHER_KEY_FILE`` names."""
    key = StoreKey.resolve(None, environ)
    return None if key is None else key.text


def _read_text(path: str | Path) -> str:
    try:
        return Path(path).read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError) as error:
        raise CipherKeyError(f"cannot read the cipher key file {str(path)!r}: {error}") from None


def _require_cryptography() -> None:
    """Encryption at rest needs the ``cryptography`` package (the ``crypto`` extra)."""
    try:
        import cryptography  # noqa: F401
    except ImportError:
        raise StoreConfigurationError(
            "cipher_key needs the cryptography package, which is not installed: "
            "pip install 'chatledger[crypto]'"
        ) from None
