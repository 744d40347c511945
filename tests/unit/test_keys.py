"""The store key's column sealing, lookup tags and check values (no database)."""

from __future__ import annotations

from pathlib import Path

import pytest
from eventsourcing.cryptography import AESCipher

from chatledger import CipherKeyError
from chatledger.adapters.persistence.keys import PLAIN, ColumnKey, check_value
from chatledger.adapters.persistence.store_key import StoreKey, key_from_environment


def test_sealed_values_round_trip_and_hide_the_text() -> None:
    """Any text (lone surrogates too) seals to printable ASCII and back; each seal differs."""
    key = ColumnKey(StoreKey.parse(AESCipher.create_key(32)))
    for text in ("", "secret", "ünï\u0000code", "lone \ud800 surrogate"):
        sealed = key.seal(text)
        assert sealed is not None and sealed.isascii() and "secret" not in sealed
        assert key.unseal(sealed) == text
        assert key.seal(text) != sealed  # a fresh nonce every time
    assert key.seal(None) is None and key.unseal(None) is None
    assert PLAIN.seal("x") == "x" and PLAIN.tag("x") == "x"


def test_tags_are_stable_per_key_and_say_nothing() -> None:
    """Equal values tag equally under one key; another key tags differently."""
    one, two = (ColumnKey(StoreKey.parse(AESCipher.create_key(16))) for _ in range(2))
    assert one.tag("tenant-a") == one.tag("tenant-a") != one.tag("tenant-b")
    assert one.tag("tenant-a") != two.tag("tenant-a")
    assert "tenant" not in one.tag("tenant-a")


def test_another_key_cannot_unseal_and_check_values_differ() -> None:
    """A value sealed under one key is refused by another; check values tell keys apart."""
    first, second = (StoreKey.parse(AESCipher.create_key(32)) for _ in range(2))
    sealed = ColumnKey(first).seal("x")
    with pytest.raises(CipherKeyError, match="cannot be decrypted"):
        ColumnKey(second).unseal(sealed)
    with pytest.raises(CipherKeyError, match="not encrypted"):
        ColumnKey(first).unseal("plain")
    assert check_value(first) == check_value(first) != check_value(second)
    assert check_value(None) == "none" and first.text not in check_value(first)


def test_the_key_comes_from_the_environment_or_a_file(tmp_path: Path) -> None:
    """CHATLEDGER_CIPHER_KEY first, then the file CHATLEDGER_CIPHER_KEY_FILE names; bad keys refused."""
    key = AESCipher.create_key(24)
    assert key_from_environment({}) is None
    assert key_from_environment({"CHATLEDGER_CIPHER_KEY": key}) == key
    path = tmp_path / "key"
    path.write_text(f"  {key}\n")
    assert key_from_environment({"CHATLEDGER_CIPHER_KEY_FILE": str(path)}) == key
    with pytest.raises(CipherKeyError, match="base64"):
        key_from_environment({"CHATLEDGER_CIPHER_KEY": "not a key!"})
    with pytest.raises(CipherKeyError, match="16, 24 or 32 bytes"):
        key_from_environment({"CHATLEDGER_CIPHER_KEY": "YWJj"})
    with pytest.raises(CipherKeyError, match="cannot read"):
        key_from_environment({"CHATLEDGER_CIPHER_KEY_FILE": str(path) + ".missing"})
