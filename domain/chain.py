"""The hash chain of a conversation's events: its canonical form, and finding the first broken link.

Every stored event gets a *link*: two SHA-256 values kept next to it.

- ``digest = SHA-256(content)``, where ``content`` is the event's JSON exactly
  as the codec writes it, before compression and encryption (so turning
  compression or encryption on or off, or changing the store key, changes no
  digest).
- ``hash = SHA-256(canonical form)``, the canonical form being these bytes,
  concatenated::

      b"chatledger-chain/1\\n"
      conversation id        16 bytes (the UUID's bytes)
      version                 8 bytes, unsigned big-endian
      len(topic)              4 bytes, unsigned big-endian
      topic                  UTF-8 (the event's class path)
      digest                 32 bytes
      previous hash          32 bytes (the link of version - 1; 32 zero bytes
                             for the first chained event of the conversation)

A conversation's chain runs from its first chained version to its head; the
head hash commits to every event before it. Events written before the store
kept chains have no links: the chain then starts at a later version, and only
events recorded after the store-wide chain start may lack one.

Everything here is pure: the adapters read rows and hand them over.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from uuid import UUID

__all__ = [
    "FORMAT",
    "GENESIS",
    "Break",
    "ChainReport",
    "EventRow",
    "Link",
    "check_chain",
    "content_digest",
    "link_hash",
]

FORMAT = b"chatledger-chain/1\n"
"""Prefix of the canonical form: a new format gets a new prefix."""
GENESIS = bytes(32)
"""The previous hash of a chain's first link."""

KINDS = ("changed", "missing", "reordered", "truncated", "unchained", "deleted")
"""Kinds of damage a chain check names (seals add ``forged`` and ``rewritten``)."""


def content_digest(content: bytes) -> bytes:
    """SHA-256 of the event's plain JSON bytes."""
    return hashlib.sha256(content).digest()


def link_hash(
    conversation: UUID, version: int, topic: str, digest: bytes, previous: bytes
) -> bytes:
    """The hash of one link (see the module docstring for the canonical form)."""
    name = topic.encode("utf-8")
    return hashlib.sha256(
        FORMAT
        + conversation.bytes
        + version.to_bytes(8, "big")
        + len(name).to_bytes(4, "big")
        + name
        + digest
        + previous
    ).digest()


@dataclass(frozen=True)
class Link:
    """What the store keeps beside one event."""

    digest: bytes
    hash: bytes


@dataclass(frozen=True)
class EventRow:
    """One stored event as the chain check sees it."""

    version: int
    topic: str
    digest: bytes | None
    """SHA-256 of its plain content; None when it cannot be read (erased, undecodable)."""
    position: int
    """Its position in the store-wide log (notification id)."""


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
    """Hash of the head's link (None when the head has none)."""
    chained_from: int | None
    """First version with a link (None: no links at all)."""
    broken: Break | None


def check_chain(
    conversation: UUID,
    events: Sequence[EventRow],
    links: Mapping[int, Link],
    chain_start: int,
) -> ChainReport:
    """Check a conversation's events against its links; report the first bad event.

    ``events`` are in version order; ``chain_start`` is the log position after
    which every event must have a link.
    """
    head = events[-1].version if events else 0
    last_link = max(links, default=0)
    first = min(links, default=None)
    broken = _first_break(conversation, events, links, chain_start)
    head_hash = links[head].hash if head in links else None
    if broken is None and last_link > head:
        broken = _tail_break(head, last_link, events)
    return ChainReport(head, head_hash, first, broken)


def _tail_break(head: int, last_link: int, events: Sequence[EventRow]) -> Break:
    if not events:
        return Break("deleted", 1, f"every event is gone; links remain up to version {last_link}")
    return Break(
        "truncated",
        head + 1,
        f"the log ends at version {head}, links remain up to version {last_link}",
    )


def _first_break(
    conversation: UUID,
    events: Sequence[EventRow],
    links: Mapping[int, Link],
    chain_start: int,
) -> Break | None:
    by_digest = {link.digest: version for version, link in links.items()}
    previous: bytes | None = None
    expected = 1
    for event in events:
        if event.version != expected:
            gone = expected if expected == event.version - 1 else f"{expected}-{event.version - 1}"
            return Break("missing", expected, f"event(s) {gone} are not in the log")
        expected += 1
        link = links.get(event.version)
        if link is None:
            if previous is not None or event.position > chain_start:
                return Break(
                    "unchained",
                    event.version,
                    "the event has no link although the chain covers it "
                    "(inserted by hand, or its link was deleted)",
                )
            continue
        if event.digest is not None and event.digest != link.digest:
            moved = by_digest.get(event.digest)
            if moved is not None:
                return Break(
                    "reordered",
                    event.version,
                    f"it holds the content chained at version {moved}",
                )
            return Break("changed", event.version, "its content differs from what was chained")
        recomputed = link_hash(
            conversation, event.version, event.topic, link.digest, previous or GENESIS
        )
        if recomputed != link.hash:
            return Break(
                "changed",
                event.version,
                "its link does not match (the event type, its link, or an earlier link was edited)",
            )
        previous = link.hash
    return None
