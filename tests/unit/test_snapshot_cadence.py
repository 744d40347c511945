"""The snapshot rule alone (``chatledger.domain.snapshot_cadence``): counts, and bytes within a stream."""

from __future__ import annotations

from dataclasses import dataclass

from chatledger.domain.events import StreamClosed
from chatledger.domain.snapshot_cadence import (
    SNAPSHOT_CLOSE_AFTER,
    SNAPSHOT_EVERY,
    SNAPSHOT_GROWTH,
    LastSnapshot,
    snapshot_due,
)


@dataclass
class _Event:
    """Stands for any event that is not a close: the rule reads only its version."""

    originator_version: int


def _close(version: int) -> StreamClosed:
    return StreamClosed.model_construct(originator_version=version)


def test_with_no_snapshot_known_the_counts_decide_as_they_always_did() -> None:
    assert snapshot_due(None, [_Event(SNAPSHOT_EVERY)])
    assert not snapshot_due(None, [_Event(SNAPSHOT_EVERY + 1)])
    assert snapshot_due(None, [_Event(3), _close(4)])  # the first close this process writes


def test_within_a_stream_a_snapshot_waits_for_its_share_of_bytes() -> None:
    """Past SNAPSHOT_EVERY events, an open stream's snapshot also waits until the events since
    amount to SNAPSHOT_GROWTH of the last snapshot's bytes."""
    size = 10_000
    short = int(SNAPSHOT_GROWTH * size) - 1
    late = [_Event(100 + SNAPSHOT_EVERY), _Event(100 + 4 * SNAPSHOT_EVERY)]
    assert not snapshot_due(LastSnapshot(100, size, written=short), late)
    assert snapshot_due(LastSnapshot(100, size, written=short + 1), late)


def test_a_close_snapshots_by_the_counts_alone() -> None:
    """A conversation at rest loads from its snapshot and at most SNAPSHOT_CLOSE_AFTER events,
    however big the snapshot and few the bytes since."""
    last = LastSnapshot(100, 10_000_000, written=1)
    assert not snapshot_due(last, [_close(100 + SNAPSHOT_CLOSE_AFTER - 1)])
    assert snapshot_due(last, [_close(100 + SNAPSHOT_CLOSE_AFTER)])
    assert snapshot_due(last, [_Event(100 + SNAPSHOT_EVERY), _close(100 + SNAPSHOT_EVERY + 1)])


def test_past_the_bytes_the_counts_still_space_snapshots() -> None:
    last = LastSnapshot(100, 1_000, written=1_000_000)
    assert not snapshot_due(last, [_Event(100 + SNAPSHOT_EVERY - 1)])
    assert snapshot_due(last, [_Event(100 + SNAPSHOT_EVERY)])
    assert not snapshot_due(last, [_close(100 + SNAPSHOT_CLOSE_AFTER - 1)])
    assert snapshot_due(last, [_close(100 + SNAPSHOT_CLOSE_AFTER)])


def test_a_snapshot_of_unknown_size_leaves_the_counts_alone() -> None:
    """A fork writes none (its prefix is its origin's): size 0, the counts decide."""
    assert snapshot_due(LastSnapshot(100, 0), [_close(100 + SNAPSHOT_CLOSE_AFTER)])
