"""When a commit takes a snapshot: counts of events, and, within an open stream, bytes written
against the last snapshot's size.

A snapshot holds the whole conversation, so its cost grows with the
conversation while the events between two snapshots stay small. A close
snapshots by counts alone (the first close a process writes, then once
``SNAPSHOT_CLOSE_AFTER`` events came since the last snapshot): a conversation
at rest loads from one snapshot and at most that many events, however long it
is. Within an open stream, where a live answer commits a few chunks every few
dozen milliseconds, ``SNAPSHOT_EVERY`` events is a lower bound: once a
snapshot's size is known, the next one also waits until the events written
since amount to ``SNAPSHOT_GROWTH`` times that size, so a long conversation's
live answer does not re-encode the whole conversation every 16 small batches;
loading it mid-answer (another process resuming it) replays at most about
``SNAPSHOT_GROWTH`` times the snapshot's bytes. Sizes are the stored
(compressed) bytes the commit path computes anyway. With none known (a new
process, or a forgotten conversation) the counts alone decide. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from chatledger.domain.events import StreamClosed

__all__ = [
    "SNAPSHOT_CLOSE_AFTER",
    "SNAPSHOT_EVERY",
    "SNAPSHOT_GROWTH",
    "LastSnapshot",
    "snapshot_due",
]

SNAPSHOT_EVERY = 16
"""Events between snapshots while a stream stays open, at least (16 batches: about 30 chunks of a
live answer at 50 chunks a second, up to 1,000 when batches fill).

Counted from the last snapshot (at multiples of it while none is known); a
long conversation's snapshot also waits for ``SNAPSHOT_GROWTH`` of its size."""
SNAPSHOT_CLOSE_AFTER = 12
"""Events since the last snapshot of a conversation before a close takes another.

A snapshot holds the whole conversation and replaces the previous one (a
deleted row: on PostgreSQL a dead tuple until vacuum, on SQLite a free page),
so one per closed turn costs bytes that grow with the conversation. A close
snapshots when no snapshot of the conversation is known (the first close this
process writes), and then when at least this many events (about three turns)
came since: loading a conversation at rest replays at most this many events."""
SNAPSHOT_GROWTH = 0.5
"""Within an open stream, how many times the last snapshot's stored bytes the events written
since must reach before another snapshot is taken (besides ``SNAPSHOT_EVERY``).

Each such snapshot is then paid for by at least half its bytes of events,
however long the conversation. Loading an open stream replays at most about
this many times the snapshot's bytes after it (plus one commit's), or fewer
events than the counts. Replaying a stored byte of events (folding its
chunks) costs 20 to 40 times decoding a byte of snapshot, which is why closes
keep the counts alone: a larger tail at rest would make every later load of
a long conversation several times slower (``bench/snapshot_cadence.py``)."""


@dataclass(slots=True)
class LastSnapshot:
    """What a writer knows of the newest snapshot of a conversation it wrote."""

    version: int
    """The version the snapshot was taken at."""
    size: int
    """Its stored bytes (0 when not known: the counts alone then decide)."""
    written: int = 0
    """Stored bytes of the events this writer committed after it."""


def snapshot_due(last: LastSnapshot | None, pending: Iterable[Any]) -> bool:
    """Whether committing the ``pending`` events (a conversation's, in order) takes a snapshot.

    With no ``last`` snapshot known: at a multiple of ``SNAPSHOT_EVERY`` or
    at a close. After one: at a close ``SNAPSHOT_CLOSE_AFTER`` events after
    it, or, within the stream, at the first event ``SNAPSHOT_EVERY`` after it
    once the events written since reach ``SNAPSHOT_GROWTH`` times its size.
    Counting from the last one, not from version 0, a close's snapshot is not
    followed a few events later by another at the next multiple of
    ``SNAPSHOT_EVERY``.
    """
    if last is None:
        return any(
            event.originator_version % SNAPSHOT_EVERY == 0 or isinstance(event, StreamClosed)
            for event in pending
        )
    grown = last.written >= SNAPSHOT_GROWTH * last.size
    for event in pending:
        since = event.originator_version - last.version
        if isinstance(event, StreamClosed):
            if since >= SNAPSHOT_CLOSE_AFTER:
                return True
        elif grown and since >= SNAPSHOT_EVERY:
            return True
    return False
