"""The store key as one value: where it comes from, that it is checked once, and what is derived from it."""

from __future__ import annotations

from pathlib import Path

import pytest
from eventsourcing.cryptography import AESCipher
from eventsourcing.utils import Environment

from chatledger import CipherKeyError
from chatledger.adapters.persistence.keys import ColumnKey, check_value
from chatledger.adapters.persistence.store_key import KEY_ENV, KEY_FILE_ENV, StoreKey

KEY = "q3JQ2n6VbJm0r0x6o3m3o3o3b3n3q3JQ2n6VbJm0r0w="


def test_the_key_given_comes_first_then_the_environment_then_its_file(tmp_path: Path) -> None:
    """``cipher_key=`` wins over ``CHATLEDGER_CIPHER_KEY``, which wins over the file; none: None."""
    given, env, filed = (AESCipher.create_key(16) for _ in range(3))
    path = tmp_path / "key"
    path.write_text(f"{filed}\n")
    environ = {KEY_ENV: env, KEY_FILE_ENV: str(path)}
    assert StoreKey.resolve(given, environ) == StoreKey.parse(given)
    assert StoreKey.resolve(None, environ) == StoreKey.parse(env)
    assert StoreKey.resolve("", {KEY_FILE_ENV: str(path)}) == StoreKey.parse(filed)
    assert StoreKey.resolve(None, {}) is None


def test_a_malformed_key_is_refused_when_it_is_made() -> None:
    with pytest.raises(CipherKeyError, match="base64"):
        StoreKey.parse("not a key!")
    with pytest.raises(CipherKeyError, match="16, 24 or 32 bytes"):
        StoreKey.resolve(None, {KEY_ENV: "YWJj"})


def test_the_key_never_shows_in_its_repr() -> None:
    key = StoreKey.parse(f"  {KEY}\n")
    assert key.text == KEY
    assert KEY not in repr(key) and KEY not in str(key)


def test_what_is_derived_from_the_key_is_what_stores_already_hold() -> None:
    """Stores written before keep opening: the check value, lookup tags and digests are unchanged."""
    key = StoreKey.parse(KEY)
    assert check_value(key) == "v1:4581c490e484af2317988877ec5f88b7"
    column = ColumnKey(key)
    assert column.tag("tenant-a") == (
        "t1:b3f102f2f641c219130f0c9f6ebf0666671b5d10b374495d29655c3783a2639b"
    )
    assert column.digest("x") == 8091985281007168895


def test_the_event_cipher_is_eventsourcings_aes_cipher_under_the_key() -> None:
    """Events encrypted with the store key before data keys existed still decrypt."""
    written = AESCipher(Environment(env={"CIPHER_KEY": KEY})).encrypt(b"an old event")
    assert StoreKey.parse(KEY).cipher().decrypt(written) == b"an old event"
