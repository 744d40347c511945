"""Signed writes: each commit's chain heads signed with the seal key, so the unsealed tail cannot be extended unseen.

The hash chain has no secret: whoever can write the database can append an
event after the newest seal and compute its link as a writer would. With
signed writes on, every writer signs, in the transaction that commits
events, the conversation's new head (conversation, version, link) with the
seal key, and keeps one signature per conversation (the newest, replacing
the one before). ``verify`` with the key then requires, for every
conversation whose head the newest seal does not cover, a signature of that
exact head: an event appended without the key leaves a head nobody signed
(``unsigned-tail``).

The signed message is ``b"chatledger-head/1\\n" || conversation id (16 bytes)
|| version (8 bytes, big-endian) || link (16 bytes)``, signed like a seal
body (HMAC-SHA-256, or Ed25519 with the private key).

Events from before signed writes were turned on are covered by the next seal:
seal once right after turning it on, and only heads after that seal need a
signature. What it does not catch: cutting the unsealed tail back to a head
that was signed before (its signature replayed from an earlier copy); seals
and a witness bound that.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from uuid import UUID

from chatledger.domain.seal import SealKey

__all__ = ["HEAD_FORMAT", "HeadSignature", "head_message", "unsigned_heads"]

HEAD_FORMAT = b"chatledger-head/1\n"


def head_message(conversation: UUID, version: int, link: bytes) -> bytes:
    """The bytes a writer signs for a conversation's head."""
    return HEAD_FORMAT + conversation.bytes + version.to_bytes(8, "big") + link


@dataclass(frozen=True)
class HeadSignature:
    """The newest signed head of one conversation, as stored."""

    version: int
    signature: str


def unsigned_heads(
    heads: Mapping[UUID, tuple[int, bytes | None]],
    sealed: Mapping[UUID, int],
    signatures: Mapping[UUID, HeadSignature],
    key: SealKey,
) -> list[tuple[UUID, int, int, str]]:
    """Conversations whose head is neither sealed nor signed: (id, first unsealed version, head, why).

    ``heads``: every conversation's (head version, head link); ``sealed``:
    the version the newest trusted seal covers per conversation.
    """
    found = []
    for conversation, (version, link) in sorted(heads.items(), key=lambda item: str(item[0])):
        covered = sealed.get(conversation, 0)
        if version == 0 or version <= covered:
            continue
        signed = signatures.get(conversation)
        if signed is None:
            why = "no signature is stored for it"
        elif signed.version != version:
            why = f"the newest signature is of version {signed.version}"
        elif link is None or not key.verifies(
            head_message(conversation, version, link), signed.signature
        ):
            why = "its signature does not verify under the seal key"
        else:
            continue
        found.append((conversation, covered + 1, version, why))
    return found
