"""The hash chain of a conversation's events: its canonical form, and finding the first broken link.

Every stored event carries a *link*, 16 bytes: the first half of
``SHA-256(canonical form)``, the canonical form being these bytes,
concatenated::

    b"chatledger-chain/1\n"
    conversation id        16 bytes (the UUID's bytes)
    version                 8 bytes, unsigned big-endian
    len(topic)              4 bytes, unsigned big-endian
    topic                  UTF-8 (the event's class path)
    digest                 32 bytes: SHA-256 of the event's JSON exactly as the
                           codec writes it, before compression and encryption
    previous link          16 bytes (the link of version - 1; 16 zero bytes
                           for the first chained event of the conversation)

So the link commits to the event's content, type and place, and to every
event before it; the head's link commits to the whole conversation. Turning
compression or encryption on or off, or changing the store key, changes no
digest. 128 bits keep a second preimage out of reach (2^128 work) at half
the bytes per event.

Events written before the store kept chains have no link: a conversation's
chain then starts at a later version, and only events recorded after the
store-wide chain start (a log position) must have one.

Everything here is pure: the adapters read rows and hand them over.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from uuid import UUID

__all__ = [
    "FORMAT",
    "GENESIS",
    "LINK_BYTES",
    "Break",
    "ChainReport",
    "EventRow",
    "check_chain",
    "content_digest",
    "link_hash",
]

FORMAT = b"chatledger-chain/1\n"
"""Prefix of the canonical form: a new format gets a new prefix."""
LINK_BYTES = 16
"""Length of a link."""
GENESIS = bytes(LINK_BYTES)
"""The previous link of a chain's first link."""

KINDS = ("changed", "missing", "reordered", "truncated", "unchained", "deleted")
"""Kinds of damage a chain check names (seals add ``forged`` and ``rewritten``)."""


def content_digest(content: bytes) -> bytes:
    """SHA-256 of the event's plain JSON bytes."""
    return hashlib.sha256(content).digest()


def link_hash(
    conversation: UUID, version: int, topic: str, digest: bytes, previous: bytes
) -> bytes:
    """One link (see the module docstring for the canonical form)."""
    name = topic.encode("utf-8")
    return hashlib.sha256(
        FORMAT
        + conversation.bytes
        + version.to_bytes(8, "big")
        + len(name).to_bytes(4, "big")
        + name
        + digest
        + previous
    ).digest()[:LINK_BYTES]


@dataclass(frozen=True)
class EventRow:
    """One stored event as the chain check sees it."""

    version: int
    topic: str
    digest: bytes | None
    """SHA-256 of its plain content; None when it cannot be decoded."""
    position: int
    """Its position in the store-wide log (notification id)."""
    link: bytes | None
    """The link stored with it (None: written before chains, or stripped)."""


@dataclass(frozen=True)
class Break:
    """The first bad event of a conversation's chain."""

    kind: str
    """One of ``KINDS``."""
    version: int
    what: str

    def __str__(self) -> str:
        return f"{self.kind} at version {self.version}: {self.what}"


@dataclass(frozen=True)
class ChainReport:
    """The outcome of checking one conversation's chain."""

    head: int
    """Last version stored (0 when no event is left)."""
    head_hash: bytes | None
    """The head's link (None when the head has none)."""
    chained_from: int | None
    """First version with a link (None: no links at all)."""
    broken: Break | None


def check_chain(conversation: UUID, events: Sequence[EventRow], chain_start: int) -> ChainReport:
    """Check a conversation's events (in version order) against their links; report the first bad one.

    ``chain_start`` is the log position after which every event must have a link.
    """
    head = events[-1].version if events else 0
    first = next((event.version for event in events if event.link is not None), None)
    head_hash = events[-1].link if events else None
    return ChainReport(head, head_hash, first, _first_break(conversation, events, chain_start))


def _first_break(conversation: UUID, events: Sequence[EventRow], chain_start: int) -> Break | None:
    previous: bytes | None = None
    expected = 1
    for index, event in enumerate(events):
        if event.version != expected:
            gone = expected if expected == event.version - 1 else f"{expected}-{event.version - 1}"
            return Break("missing", expected, f"event(s) {gone} are not in the log")
        expected += 1
        if event.link is None:
            if previous is not None or event.position > chain_start:
                return Break(
                    "unchained",
                    event.version,
                    "the event has no link although the chain covers it "
                    "(inserted by hand, or its link was stripped)",
                )
            continue
        if event.digest is None:
            return Break(
                "changed",
                event.version,
                "its stored content no longer decodes (decryption or decompression fails)",
            )
        prior = previous or GENESIS
        if link_hash(conversation, event.version, event.topic, event.digest, prior) != event.link:
            return _mismatch(conversation, events, index, prior)
        previous = event.link
    return None


def _mismatch(conversation: UUID, events: Sequence[EventRow], index: int, prior: bytes) -> Break:
    """Name a link that does not match: another event's row moved here, or a change in place."""
    event = events[index]
    copied = next((o for o in events if o is not event and o.link == event.link), None)
    if copied is not None:
        return Break(
            "changed",
            event.version,
            f"it carries the link of version {copied.version}: a copy inserted by hand",
        )
    for other in events:
        if other is event or other.digest is None or other.link is None:
            continue
        if link_hash(conversation, event.version, other.topic, other.digest, prior) == other.link:
            return Break(
                "reordered",
                event.version,
                f"the event chained at version {event.version} is at version {other.version}",
            )
    return Break(
        "changed",
        event.version,
        "its content, type or link differs from what was chained",
    )
