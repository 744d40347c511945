"""Erasure: the ``ConversationErased`` event, and the tombstone an erased event leaves in the log.

Erasing a conversation replaces each of its stored events by a *tombstone*:
what the audit needs and nothing of the content::

    b"\\xeeerased/1\\n"     10 bytes: marks a tombstone
    digest                 32 bytes: SHA-256 of the event's JSON as it was
                           chained (``chatledger.domain.chain``)
    skeleton               UTF-8 JSON: ``{"kind", "actor", "time"}`` of the
                           event's audit timeline entry

The event's chain link stays in front of it, so the chain still verifies
(the link commits to the digest, which the tombstone keeps; the content
it was computed from is gone). Then a ``ConversationErased`` event records
who erased the conversation, when and why; it holds no content, so it stays
readable.

Everything here is pure.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from chatledger.domain.events import ConversationEvent
from chatledger.domain.timeline import TimelineEntry

__all__ = [
    "ERASED_KIND",
    "ERASED_SUMMARY",
    "PSEUDONYM_PREFIX",
    "TOMBSTONE",
    "ConversationErased",
    "Tombstone",
    "erased_entry",
    "is_tombstone",
    "pseudonym",
    "read_tombstone",
    "tombstone_bytes",
]

TOMBSTONE = b"\xeeerased/1\n"
"""The first bytes of a tombstone (after the chain link, if the event has one)."""
ERASED_KIND = "conversation-erased"
"""The timeline kind of ``ConversationErased``."""
ERASED_SUMMARY = "[erased]"
"""The summary of a timeline entry whose content was erased."""
_DIGEST = 32
PSEUDONYM_PREFIX = "subject:"
"""How a pseudonymised data subject is named in the audit skeleton: ``subject:<16 hex digits>``."""


class ConversationErased(ConversationEvent):
    """The conversation's content was destroyed (crypto-shredded and purged) on an operator's request.

    Its ``actor`` is who erased it; ``timestamp`` when. It is never folded
    into a conversation: loading an erased conversation raises
    ``ConversationErasedError``.
    """

    reason: str
    """Why (a ticket, a retention rule): shown in the audit timeline."""
    events: int
    """How many events were erased (versions 1 to ``events``)."""
    tenant: str
    """The tenant the conversation belonged to (kept for retention and audit; the chat id is not)."""
    removed: tuple[str, ...] = ()
    """The receipt: what the erasure removed from the store (empty in erasures recorded before it)."""
    outside: tuple[str, ...] = ()
    """The receipt: copies the store cannot reach, left to the operator (backups, replicas...)."""

    def apply_to(self, state: Any) -> None:
        """Nothing to fold: an erased conversation is never loaded."""


@dataclass(frozen=True)
class Tombstone:
    """What the log keeps of an erased event."""

    digest: bytes
    """SHA-256 of the event's JSON when it was chained (the chain still verifies over it)."""
    kind: str
    """Its timeline kind."""
    actor: str | None
    time: datetime

    def entry(self, position: int) -> TimelineEntry:
        """Its audit timeline entry: kind, actor and time, no content."""
        return TimelineEntry(
            position, self.time, self.actor, self.kind, ERASED_SUMMARY, {"erased": True}
        )


def tombstone_bytes(digest: bytes, entry: TimelineEntry) -> bytes:
    """The tombstone of an event with this chain digest and timeline entry."""
    assert len(digest) == _DIGEST
    skeleton = {"kind": entry.kind, "actor": entry.actor, "time": entry.time.isoformat()}
    return TOMBSTONE + digest + json.dumps(skeleton, separators=(",", ":")).encode("utf-8")


def is_tombstone(inner: bytes) -> bool:
    """Whether the codec's bytes of an event (its link stripped) are a tombstone."""
    return inner[: len(TOMBSTONE)] == TOMBSTONE


def read_tombstone(inner: bytes) -> Tombstone:
    """Decode ``tombstone_bytes`` (ValueError if damaged)."""
    if not is_tombstone(inner) or len(inner) < len(TOMBSTONE) + _DIGEST:
        raise ValueError("not a tombstone")
    start = len(TOMBSTONE)
    digest = bytes(inner[start : start + _DIGEST])
    skeleton = json.loads(bytes(inner[start + _DIGEST :]).decode("utf-8"))
    return Tombstone(
        digest,
        str(skeleton["kind"]),
        skeleton.get("actor"),
        datetime.fromisoformat(skeleton["time"]),
    )


def erased_entry(event: ConversationErased) -> TimelineEntry:
    """The audit timeline entry of the erasure itself."""
    return TimelineEntry(
        event.originator_version,
        event.timestamp,
        event.actor,
        ERASED_KIND,
        f"conversation erased by {event.actor}: {event.reason}"[:200],
        {
            "reason": event.reason,
            "events": event.events,
            **({"removed": list(event.removed)} if event.removed else {}),
            **({"outside": list(event.outside)} if event.outside else {}),
        },
    )


def pseudonym(secret: bytes, tenant: str, subject: str) -> str:
    """The stable name that replaces ``subject`` (a user id of ``tenant``) in the audit skeleton.

    An HMAC-SHA256 under the store's own secret: the same subject always gets
    the same pseudonym in a store, and it cannot be reversed by hashing
    guessed user ids without that secret.
    """
    mac = hmac.new(secret, f"{tenant}\0{subject}".encode("utf-8", "surrogatepass"), hashlib.sha256)
    return PSEUDONYM_PREFIX + mac.hexdigest()[:16]
