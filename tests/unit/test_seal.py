"""Seal keys (HMAC and Ed25519), the Merkle root over heads and its inclusion proofs, the chain's canonical form."""

from __future__ import annotations

import hashlib
import uuid

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519

from chatledger.domain.chain import GENESIS, link_hash
from chatledger.domain.errors import InvalidInputError
from chatledger.domain.seal import Head, SealKey, inclusion_proof, merkle_root, root_from_proof


def test_the_link_hash_is_the_documented_canonical_form() -> None:
    """Anyone can recompute a link from the module docstring's recipe."""
    conversation = uuid.UUID(int=7)
    digest = hashlib.sha256(b'{"a":1}').digest()
    expected = hashlib.sha256(
        b"chatledger-chain/1\n"
        + conversation.bytes
        + (3).to_bytes(8, "big")
        + (5).to_bytes(4, "big")
        + b"x.y:Z"
        + digest
        + bytes(16)
    ).digest()[:16]
    assert bytes(16) == GENESIS
    assert link_hash(conversation, 3, "x.y:Z", digest, GENESIS) == expected


def test_an_hmac_key_signs_and_verifies_and_another_key_does_not() -> None:
    key = SealKey.from_text("a secret of at least sixteen bytes\n")
    signature = key.sign(b"body")
    assert key.verifies(b"body", signature)
    assert not key.verifies(b"bodY", signature)
    other = SealKey.from_text("another secret, sixteen bytes+")
    assert not other.verifies(b"body", signature)
    assert key.key_id != other.key_id and len(key.key_id) == 16
    assert not key.verifies(b"body", "not base64!")


def test_a_short_hmac_secret_is_refused_with_how_to_make_one() -> None:
    with pytest.raises(InvalidInputError, match=r"at least 16 bytes.*secrets\.token_hex"):
        SealKey.from_text("short")


def test_an_ed25519_private_key_seals_and_its_public_key_only_verifies() -> None:
    private = ed25519.Ed25519PrivateKey.generate()
    private_pem = private.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    public_pem = (
        private.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    sealer = SealKey.from_text(private_pem)
    checker = SealKey.from_text(public_pem)
    assert sealer.algorithm == checker.algorithm == "ed25519"
    assert sealer.key_id == checker.key_id
    signature = sealer.sign(b"body")
    assert checker.verifies(b"body", signature) and not checker.verifies(b"other", signature)
    assert not checker.can_sign
    with pytest.raises(InvalidInputError, match="public key"):
        checker.sign(b"body")


@pytest.mark.parametrize("count", [1, 2, 3, 5, 8, 13])
def test_every_head_proves_its_way_to_the_root(count: int) -> None:
    heads = [Head(uuid.uuid4(), i + 1, hashlib.sha256(bytes([i])).digest()) for i in range(count)]
    root = merkle_root(heads)
    assert merkle_root(list(reversed(heads))) == root
    for head in heads:
        assert root_from_proof(head, inclusion_proof(heads, head.conversation)) == root
    changed = Head(heads[0].conversation, heads[0].version + 1, heads[0].hash)
    assert root_from_proof(changed, inclusion_proof(heads, changed.conversation)) != root
