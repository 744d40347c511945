"""What the store key seals besides events, and the check that a store is opened with its own key.

The read models hold the same content as the events (messages, tool inputs,
ids, actors), so with a store key they are sealed too, by a ``ColumnKey``
derived from it:

- ``seal``/``unseal``: AES-GCM over one column value, stored as text;
- ``tag``: a keyed hash, for the columns looked up by equality (the tenant).

A *key check value* (a keyed hash of a fixed text) is stored when the store
is created. Every open compares it before anything is read or written, so a
wrong key, a missing key, or a key given to a store created without one, is
refused with ``CipherKeyError``: a process with the wrong key can neither
read nor write events others could not read.

The key itself (where it comes from, what is derived from it) is a
``StoreKey`` (``store_key``).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import re
from typing import Any

from chatledger.adapters.persistence.store_key import KEY_ENV, KEY_FILE_ENV, StoreKey
from chatledger.domain.errors import CipherKeyError

__all__ = ["PLAIN", "ColumnKey", "check_store_key", "check_value"]

NO_KEY_CHECK = "none"
"""The check value of a store created without a key."""

_CHECK_FORM = re.compile(r"v1:[0-9a-f]{32}")
"""The form of a key's check value (``StoreKey.check_value``)."""

_SEAL_PREFIX = "k1:"
_SEALED_BYTES = b"\x02"
"""The leading byte of sealed bytes (packed read-model values start with 0x00, 0x01 or '{')."""
_NONCE = 12


def check_value(key: StoreKey | None) -> str:
    """What the store keeps to recognise its key (``none`` without one); reveals nothing of the key."""
    return NO_KEY_CHECK if key is None else key.check_value()


class ColumnKey:
    """Seals read-model column values with a key derived from the store's key (identity without one)."""

    def __init__(self, key: StoreKey | None) -> None:
        self.enabled = key is not None
        """Whether values are sealed."""
        if key is not None:
            from cryptography.hazmat.primitives.ciphers.aead import AESGCM

            self._aead: Any = AESGCM(key.derive(b"read-models-v1"))
            self._tag_key = key.derive(b"lookup-v1")

    def seal(self, value: str | None) -> str | None:
        """The value encrypted (base64 text), or as is without a key."""
        if value is None or not self.enabled:
            return value
        nonce = os.urandom(_NONCE)
        sealed = self._aead.encrypt(nonce, value.encode("utf-8", "surrogatepass"), None)
        return _SEAL_PREFIX + base64.b64encode(nonce + sealed).decode("ascii")

    def unseal(self, value: str | None) -> str | None:
        """Undo ``seal``; CipherKeyError if the value was sealed with another key or is damaged."""
        if value is None or not self.enabled:
            return value
        if not value.startswith(_SEAL_PREFIX):
            raise CipherKeyError(
                "a read-model value is not encrypted although the store has a key: "
                "run `chatledger rebuild` to write the read models again"
            )
        from cryptography.exceptions import InvalidTag

        data = base64.b64decode(value[len(_SEAL_PREFIX) :])
        try:
            plain = self._aead.decrypt(data[:_NONCE], data[_NONCE:], None)
        except InvalidTag:
            raise CipherKeyError(
                "a read-model value cannot be decrypted with this key (damaged, or written with "
                "another key): run `chatledger rebuild` with the store's key"
            ) from None
        return bytes(plain).decode("utf-8", "surrogatepass")

    def seal_bytes(self, data: bytes) -> bytes:
        """Bytes encrypted (tagged with a leading 0x02), or as they are without a key."""
        if not self.enabled:
            return data
        nonce = os.urandom(_NONCE)
        sealed: bytes = self._aead.encrypt(nonce, data, None)
        return _SEALED_BYTES + nonce + sealed

    def unseal_bytes(self, data: bytes) -> bytes:
        """Undo ``seal_bytes``; CipherKeyError as ``unseal`` for values not sealed with this key."""
        if not self.enabled:
            return data
        if data[:1] != _SEALED_BYTES:
            raise CipherKeyError(
                "a read-model value is not encrypted although the store has a key: "
                "run `chatledger rebuild` to write the read models again"
            )
        from cryptography.exceptions import InvalidTag

        try:
            return bytes(self._aead.decrypt(data[1 : 1 + _NONCE], data[1 + _NONCE :], None))
        except InvalidTag:
            raise CipherKeyError(
                "a read-model value cannot be decrypted with this key (damaged, or written with "
                "another key): run `chatledger rebuild` with the store's key"
            ) from None

    def digest(self, value: str) -> int:
        """A signed 64-bit hash of the value (keyed with a key), to tell whether it changed."""
        data = value.encode("utf-8", "surrogatepass")
        hashed = hashlib.blake2b(data, digest_size=8, key=self._tag_key if self.enabled else b"")
        return int.from_bytes(hashed.digest(), "big", signed=True)

    def tag(self, value: str) -> str:
        """A keyed hash of the value, for equality lookups (the value itself without a key)."""
        if not self.enabled:
            return value
        return (
            "t1:"
            + hmac.new(self._tag_key, value.encode("utf-8", "surrogatepass"), "sha256").hexdigest()
        )


def check_store_key(settings: Any, key: StoreKey | None, log: Any) -> bool:
    """Refuse a key that is not the store's (CipherKeyError), before anything is read or written.

    ``settings`` keeps the check value (``setting``/``stored_setting``); a
    new store records the key's. A store created before check values existed
    records it once its first event has been read with the key given; then
    True is returned (its read models, written unsealed, must be rebuilt).
    """
    expected = check_value(key)
    stored = settings.stored_setting("key_check")
    older = False
    if stored is None:
        older = log.head() > 0
        if older:
            _check_first_event(log, key)
        stored = settings.setting("key_check", expected)  # concurrent creators agree on one
    if stored == expected:
        return older
    if stored != NO_KEY_CHECK and not _CHECK_FORM.fullmatch(stored):
        raise CipherKeyError(
            f"the store's key check value ({stored[:40]!r}, in its settings table) is not one "
            "chatledger writes: the settings were damaged or edited by hand; restore that table "
            "from a backup (nothing was read or written)"
        )
    if stored == NO_KEY_CHECK:
        raise CipherKeyError(
            "this store was created without encryption: open it without a cipher key "
            "(an existing store cannot be encrypted in place)"
        )
    if key is None:
        raise CipherKeyError(
            f"this store is encrypted: give its key ({KEY_ENV}, {KEY_FILE_ENV}, "
            "--cipher-key-file, or cipher_key=)"
        )
    raise CipherKeyError(
        "the cipher key given is not this store's key (its key check value differs); "
        "nothing was read or written"
    )


def _check_first_event(log: Any, key: StoreKey | None) -> None:
    """Decode the store's first event with ``key`` (a store older than check values)."""
    first = log.recorder.select_notifications(start=1, limit=1)
    if not first:
        return
    try:
        log.decode(first[0])
    except Exception:  # a wrong key shows as a failed decryption, decompression or parse
        what = "with the cipher key given" if key is not None else "without a cipher key"
        raise CipherKeyError(
            f"the store's events cannot be read {what}: give the store's key "
            f"({KEY_ENV}, {KEY_FILE_ENV}, --cipher-key-file, or cipher_key=)"
        ) from None


PLAIN = ColumnKey(None)
"""No key: values are stored as they are."""
