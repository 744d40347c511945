"""Seals: signed checkpoints over every conversation's chain head.

A seal commits to the head (version and link hash) of every conversation at
one moment, through a Merkle tree, and is signed with a key only the operator
holds. Deleting a whole conversation, or the tail of one, or rewriting a chain
consistently (recomputing every link), no longer matches the last seal; a
seal edited or made without the key fails its signature.

Canonical forms (all SHA-256):

- leaf: ``0x00 || conversation id (16 bytes) || version (8 bytes, big-endian) || head hash (32 bytes)``,
  leaves sorted by conversation id bytes;
- node: ``0x01 || left || right``; an odd node is carried up unchanged;
  the root of no leaves is ``SHA-256(b"chatledger-seal/1 empty")``;
- body: the seal's fields as JSON with sorted keys, no spaces, ASCII only;
  the signature covers those bytes, and the seal's digest is their SHA-256.

Keys: HMAC-SHA-256 over a shared secret (the default; anyone who can verify
can also seal), or Ed25519 when the ``cryptography`` package is installed and
the key is a PEM file (seal with the private key, verify with the public one).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from chatledger.domain.errors import InvalidInputError

__all__ = [
    "SEAL_FORMAT",
    "Head",
    "Seal",
    "SealKey",
    "inclusion_proof",
    "merkle_root",
    "root_from_proof",
]

SEAL_FORMAT = "chatledger-seal/1"
_EMPTY = hashlib.sha256(b"chatledger-seal/1 empty").digest()
_MIN_SECRET = 16


@dataclass(frozen=True)
class Head:
    """One conversation's chain head, as a seal records it."""

    conversation: UUID
    version: int
    hash: bytes

    def leaf(self) -> bytes:
        """The Merkle leaf of this head."""
        return hashlib.sha256(
            b"\x00" + self.conversation.bytes + self.version.to_bytes(8, "big") + self.hash
        ).digest()


def _node(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def _sorted(heads: Sequence[Head]) -> list[Head]:
    return sorted(heads, key=lambda head: head.conversation.bytes)


def merkle_root(heads: Sequence[Head]) -> bytes:
    """The root over ``heads`` (in any order)."""
    level = [head.leaf() for head in _sorted(heads)]
    if not level:
        return _EMPTY
    while len(level) > 1:
        level = [
            _node(level[i], level[i + 1]) if i + 1 < len(level) else level[i]
            for i in range(0, len(level), 2)
        ]
    return level[0]


def inclusion_proof(heads: Sequence[Head], conversation: UUID) -> list[tuple[str, str]]:
    """The siblings on the way from ``conversation``'s leaf to the root: ``[(side, hex)]``."""
    ordered = _sorted(heads)
    index = next(i for i, head in enumerate(ordered) if head.conversation == conversation)
    level = [head.leaf() for head in ordered]
    proof: list[tuple[str, str]] = []
    while len(level) > 1:
        sibling = index ^ 1
        if sibling < len(level):
            proof.append(("left" if sibling < index else "right", level[sibling].hex()))
        level = [
            _node(level[i], level[i + 1]) if i + 1 < len(level) else level[i]
            for i in range(0, len(level), 2)
        ]
        index //= 2
    return proof


def root_from_proof(head: Head, proof: Sequence[Sequence[str]]) -> bytes:
    """The root a head and its inclusion proof lead to."""
    node = head.leaf()
    for side, sibling in proof:
        other = bytes.fromhex(sibling)
        node = _node(other, node) if side == "left" else _node(node, other)
    return node


class SealKey:
    """The operator's sealing key: an HMAC secret, or an Ed25519 key (PEM)."""

    def __init__(
        self, algorithm: str, secret: bytes = b"", private: Any = None, public: Any = None
    ):
        self.algorithm = algorithm
        self._secret = secret
        self._private = private
        self._public = public

    @classmethod
    def from_text(cls, text: str, *, where: str = "the seal key") -> SealKey:
        """Read a key: a PEM Ed25519 key (private or public), else an HMAC secret of 16+ bytes."""
        stripped = text.strip()
        if stripped.startswith("-----BEGIN"):
            return cls._from_pem(stripped.encode(), where)
        secret = stripped.encode("utf-8")
        if len(secret) < _MIN_SECRET:
            raise InvalidInputError(
                f"{where} is too short: an HMAC secret needs at least {_MIN_SECRET} bytes "
                "(make one with: python -c 'import secrets; print(secrets.token_hex(32))')"
            )
        return cls("hmac-sha256", secret=secret)

    @classmethod
    def _from_pem(cls, pem: bytes, where: str) -> SealKey:
        try:
            from cryptography.hazmat.primitives import serialization
            from cryptography.hazmat.primitives.asymmetric import ed25519
        except ImportError:
            raise InvalidInputError(
                f"{where} is a PEM key: Ed25519 seals need the 'cryptography' package "
                "(pip install cryptography), or use an HMAC secret"
            ) from None
        try:
            if b"PRIVATE" in pem:
                private = serialization.load_pem_private_key(pem, password=None)
                if not isinstance(private, ed25519.Ed25519PrivateKey):
                    raise ValueError("not an Ed25519 key")
                return cls("ed25519", private=private, public=private.public_key())
            public = serialization.load_pem_public_key(pem)
            if not isinstance(public, ed25519.Ed25519PublicKey):
                raise ValueError("not an Ed25519 key")
            return cls("ed25519", public=public)
        except ValueError as error:
            raise InvalidInputError(f"{where} is not a usable Ed25519 PEM key: {error}") from None

    @property
    def key_id(self) -> str:
        """A short public name for the key (tells which key made a seal)."""
        if self.algorithm == "ed25519":
            from cryptography.hazmat.primitives import serialization

            material = self._public.public_bytes(
                serialization.Encoding.Raw, serialization.PublicFormat.Raw
            )
        else:
            material = hmac.new(self._secret, b"chatledger-seal key id", "sha256").digest()
        return hashlib.sha256(b"chatledger-seal-key\n" + material).hexdigest()[:16]

    @property
    def can_sign(self) -> bool:
        """False for an Ed25519 public key (it only verifies)."""
        return self.algorithm == "hmac-sha256" or self._private is not None

    def sign(self, body: bytes) -> str:
        """The signature of ``body`` (base64)."""
        if self.algorithm == "ed25519":
            if self._private is None:
                raise InvalidInputError(
                    "this Ed25519 key is a public key: sealing needs the private key"
                )
            signature = self._private.sign(body)
        else:
            signature = hmac.new(self._secret, body, "sha256").digest()
        return base64.b64encode(signature).decode("ascii")

    def verifies(self, body: bytes, signature: str) -> bool:
        """Whether ``signature`` is this key's signature of ``body``."""
        try:
            raw = base64.b64decode(signature, validate=True)
        except (ValueError, TypeError):
            return False
        if self.algorithm == "ed25519":
            from cryptography.exceptions import InvalidSignature

            try:
                self._public.verify(raw, body)
            except InvalidSignature:
                return False
            return True
        return hmac.compare_digest(raw, hmac.new(self._secret, body, "sha256").digest())


def canonical(value: dict[str, Any]) -> bytes:
    """The canonical JSON bytes of a seal body (sorted keys, compact, ASCII)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


@dataclass(frozen=True)
class Seal:
    """A signed checkpoint: its body fields and the signature over their canonical bytes."""

    seq: int
    sealed_at: str
    algorithm: str
    key_id: str
    previous: str | None
    """Digest of the seal before it (seals form a chain of their own)."""
    chain_start: int
    conversations: int
    root: str
    signature: str = ""

    def body(self) -> dict[str, Any]:
        """The signed fields."""
        return {
            "format": SEAL_FORMAT,
            "seq": self.seq,
            "sealed_at": self.sealed_at,
            "algorithm": self.algorithm,
            "key_id": self.key_id,
            "previous": self.previous,
            "chain_start": self.chain_start,
            "conversations": self.conversations,
            "root": self.root,
        }

    def body_bytes(self) -> bytes:
        """What the signature covers."""
        return canonical(self.body())

    @property
    def digest(self) -> str:
        """SHA-256 of the body (hex): keep it outside the store to pin this seal."""
        return hashlib.sha256(self.body_bytes()).hexdigest()

    def to_json(self) -> dict[str, Any]:
        """Body and signature, for storing and exporting."""
        return {**self.body(), "signature": self.signature}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Seal:
        """Read what ``to_json`` wrote (InvalidInputError if it is not a seal)."""
        if data.get("format") != SEAL_FORMAT:
            raise InvalidInputError(f"not a {SEAL_FORMAT} seal: format {data.get('format')!r}")
        try:
            return cls(
                int(data["seq"]),
                str(data["sealed_at"]),
                str(data["algorithm"]),
                str(data["key_id"]),
                data["previous"],
                int(data["chain_start"]),
                int(data["conversations"]),
                str(data["root"]),
                str(data["signature"]),
            )
        except (KeyError, TypeError, ValueError) as error:
            raise InvalidInputError(f"a seal field is missing or malformed: {error}") from None
