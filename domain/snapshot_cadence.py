"""When a commit takes a snapshot: counts of events, and bytes written against the last snapshot's size.

A snapshot holds the whole conversation, so its cost grows with the
conversation while the events between two snapshots stay small. The counts
(``SNAPSHOT_EVERY`` within a stream, ``SNAPSHOT_CLOSE_AFTER`` at a close) are
lower bounds; once a snapshot's size is known, the next one also waits until
the events written since amount to ``SNAPSHOT_GROWTH`` times that size. The
snapshots' bytes are then bounded per byte of events written, however long
the conversation, and loading replays at most about ``SNAPSHOT_GROWTH`` times
the snapshot's bytes after it (or fewer events than the counts). Sizes are
the stored (compressed) bytes the commit path computes anyway. With none
known (a new process, or a forgotten conversation) the counts alone decide,
as they always did. Pure: no I/O.
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
"""Events between snapshots while a stream stays open (16 batches: about 1,000 chunks), at least.

Counted from the last snapshot (at multiples of it while none is known); a
long conversation's snapshot also waits for ``SNAPSHOT_GROWTH`` of its size."""
SNAPSHOT_CLOSE_AFTER = 12
"""Events since the last snapshot of a conversation before a close takes another, at least.

A snapshot holds the whole conversation and replaces the previous one (a
deleted row: on PostgreSQL a dead tuple until vacuum, on SQLite a free page),
so one per closed turn costs bytes that grow with the conversation. A close
snapshots when no snapshot of the conversation is known (the first close this
process writes), and then when at least this many events (about three turns)
came since and their bytes reach ``SNAPSHOT_GROWTH`` of the last snapshot's."""
SNAPSHOT_GROWTH = 0.5
"""How many times the last snapshot's stored bytes the events written since must reach
before another snapshot is taken (besides the counts).

Each snapshot is then paid for by at least half its bytes of events: the
snapshots written stay under ``1 / SNAPSHOT_GROWTH`` times the events' bytes
whatever the conversation's length (the counts alone wrote ever more: 7 MB of
snapshots for 300 turns of the peers' workload). Loading replays at most about
this many times the snapshot's bytes after it (plus one commit's), or fewer
events than the counts. Replaying a stored byte of events (folding its
chunks) costs 20 to 40 times decoding a byte of snapshot, so that tail, not
the snapshot, is most of a long conversation's load (``bench/snapshot_cadence.py``):
a larger value writes fewer snapshots and loads slower."""


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
    at a close. After one: once the events written since reach
    ``SNAPSHOT_GROWTH`` times its size, and then at the first pending event
    ``SNAPSHOT_EVERY`` events after it, or a close ``SNAPSHOT_CLOSE_AFTER``
    after it. Counting from the last one, not from version 0, a close's
    snapshot is not followed a few events later by another at the next
    multiple of ``SNAPSHOT_EVERY``.
    """
    if last is None:
        return any(
            event.originator_version % SNAPSHOT_EVERY == 0 or isinstance(event, StreamClosed)
            for event in pending
        )
    if last.written < SNAPSHOT_GROWTH * last.size:
        return False
    for event in pending:
        since = event.originator_version - last.version
        if since >= SNAPSHOT_EVERY or (
            since >= SNAPSHOT_CLOSE_AFTER and isinstance(event, StreamClosed)
        ):
            return True
    return False
