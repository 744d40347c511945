"""An open stream of a growing conversation snapshots once the bytes written since pay for it;
a conversation at rest loads from a snapshot and a few events, however long it is.

A snapshot holds the whole conversation: taken every 16 small batches of a
live answer, its cost grows with the conversation while the batches stay
small. Within a stream, once a snapshot's size is known, the next waits until
the events committed since reach ``SNAPSHOT_GROWTH`` times its stored bytes
(besides the counts), so the tail a load replays stays bounded relative to the
snapshot; closes keep the counts. Sizes are measured here independently of the
store's own accounting: the snapshots the log is handed, and the events'
stored rows read back.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

import pytest

from chatledger import ConversationStore
from chatledger.adapters.bootstrap import StoreOptions
from chatledger.adapters.persistence.chain import split_link
from chatledger.adapters.store.store import open_store
from chatledger.adapters.store.streams.policy import DEFAULT_BATCH_CHUNKS, BatchPolicy
from chatledger.domain.snapshot_cadence import (
    SNAPSHOT_CLOSE_AFTER,
    SNAPSHOT_EVERY,
    SNAPSHOT_GROWTH,
)
from tests.integration.conftest import Backend
from tests.support.ledger import (
    aggregate_id,
    load_with_snapshots,
    replay_from_scratch,
    stored_records,
)


@dataclass
class Commit:
    """One transaction of the conversation: its events' versions and the snapshot's bytes."""

    versions: list[int]
    snapshot: int | None = None


@dataclass
class Commits:
    """The conversation's commits seen by the log, and its events' stored bytes (read back)."""

    commits: list[Commit] = field(default_factory=list)
    sizes: dict[int, int] = field(default_factory=dict)

    def read_sizes(self, store: ConversationStore, chat: str) -> None:
        """The stored bytes of each event as the mapper wrote it (the chain link set aside)."""
        self.sizes = {v: len(split_link(state)[1]) for v, _, state in stored_records(store, chat)}

    def bytes_of(self, commit: Commit) -> int:
        return sum(self.sizes[v] for v in commit.versions)

    def snapshots(self) -> list[tuple[int, int]]:
        """(index of the commit, snapshot bytes) of each commit that took a snapshot."""
        return [(i, c.snapshot) for i, c in enumerate(self.commits) if c.snapshot is not None]


@contextmanager
def watching(store: ConversationStore, chat: str) -> Iterator[Commits]:
    """Record the commits of ``chat`` (both paths: ``record`` and the flusher's ``record_many``)."""
    log: Any = store.log  # the real log: its calls run, and are only seen
    real = log._put
    seen = Commits()
    target = aggregate_id(store, chat)

    def put(events: list[Any], **extra: Any) -> Any:
        written = real(events, **extra)
        mine = [e.originator_version for e in events if e.originator_id == target]
        snapshots = [s for s in [extra.get("snapshot"), *extra.get("snapshots", ())] if s]
        taken = [len(s.state) for s in snapshots if s.originator_id == target]
        if mine:
            seen.commits.append(Commit(mine, taken[0] if taken else None))
        return written

    log._put = put
    try:
        yield seen
    finally:
        log._put = real
    seen.read_sizes(store, chat)


def _user(message_id: str) -> dict[str, Any]:
    return {"id": message_id, "role": "user", "parts": [{"type": "text", "text": "hi"}]}


def _reply(turn: int, deltas: int) -> list[dict[str, Any]]:
    """A reply of ``deltas`` words that do not compress away (the state grows as a real one)."""
    words = [hashlib.sha256(f"{turn}.{i}".encode()).hexdigest()[:10] for i in range(deltas)]
    chunks: list[dict[str, Any]] = [{"type": "start"}, {"type": "start-step"}]
    chunks.append({"type": "text-start", "id": "t"})
    chunks += [{"type": "text-delta", "id": "t", "delta": f"{word} "} for word in words]
    chunks += [{"type": "text-end", "id": "t"}, {"type": "finish-step"}, {"type": "finish"}]
    return chunks


def _turns(store: ConversationStore, chat: str, first: int, count: int) -> list[int]:
    """Write ``count`` closed turns; the versions of their closes."""
    closes = []
    for turn in range(first, first + count):
        stream = store.open_stream(chat, user_message=_user(f"u{turn}"))
        for chunk in _reply(turn, 20):
            stream.append(chunk)
        stream.close()
        closes.append(stream.conversation.version)
    return closes


def _old_rule_closes(closes: list[int]) -> list[int]:
    """The closes the count rule alone snapshots: the first, then 12 events after the last."""
    taken: list[int] = []
    for version in closes:
        if not taken or version - taken[-1] >= SNAPSHOT_CLOSE_AFTER:
            taken.append(version)
    return taken


def _check_amortised_and_bounded(seen: Commits) -> None:
    """Each snapshot after the first waited for SNAPSHOT_GROWTH of the last one's bytes, and
    after every commit the tail is under that bound (plus the commit) or under the counts."""
    snapshots = seen.snapshots()
    for (i, size), (j, _) in pairwise(snapshots):
        between = sum(seen.bytes_of(c) for c in seen.commits[i + 1 : j])
        assert between >= SNAPSHOT_GROWTH * size, (i, j, between, size)
    last: tuple[int, int] | None = None
    tail_bytes = tail_events = 0
    for i, commit in enumerate(seen.commits):
        if commit.snapshot is not None:
            last, tail_bytes, tail_events = (i, commit.snapshot), 0, 0
            continue
        tail_bytes += seen.bytes_of(commit)
        tail_events += len(commit.versions)
        if last is not None:
            assert (
                tail_events < SNAPSHOT_EVERY
                or tail_bytes - seen.bytes_of(commit) < SNAPSHOT_GROWTH * last[1]
            ), (i, tail_events, tail_bytes, last)


@pytest.mark.parametrize("turns", [6, 60])
def test_a_conversation_at_rest_loads_from_a_snapshot_and_a_few_events(
    durable_backend: Backend, turns: int
) -> None:
    """Closed turns, few or many: closes snapshot by the counts alone (the first, then 12
    events after the last), however big the snapshot grew, so a load replays at most 12
    events and equals folding every event."""
    store = durable_backend.open(batch_ms=60_000)
    store.start_conversation("chat")
    with watching(store, "chat") as seen:
        closes = _turns(store, "chat", 0, turns)
    taken = [seen.commits[i].versions[-1] for i, _ in seen.snapshots()]
    assert taken == _old_rule_closes(closes) and len(taken) >= 2
    assert closes[-1] - taken[-1] < SNAPSHOT_CLOSE_AFTER
    replayed, loaded = replay_from_scratch(store, "chat"), load_with_snapshots(store, "chat")
    assert loaded.version == replayed.version == closes[-1]
    assert loaded.state.to_json() == replayed.state.to_json()


def test_a_long_open_stream_snapshots_less_often_through_group_commits(
    durable_backend: Backend,
) -> None:
    """After 40 turns, a stream committed two chunks at a time by the flusher's ticks: its
    snapshots (encoded by the writer, written with the group) come once the small batches
    add up to half the snapshot, not every 16 of them; the tail stays bounded by it."""
    store = open_store(
        durable_backend.url, StoreOptions(batch=BatchPolicy(DEFAULT_BATCH_CHUNKS, 600.0))
    )
    durable_backend.stores.append(store)
    store.start_conversation("chat")
    _turns(store, "chat", 0, 40)
    writer = store.open_stream("chat", user_message=_user("live"))
    for chunk in ({"type": "start"}, {"type": "start-step"}, {"type": "text-start", "id": "t"}):
        writer.append(chunk)
    ticks = 8 * SNAPSHOT_EVERY
    with watching(store, "chat") as seen:
        for tick in range(ticks):
            for j in range(2):
                writer.append({"type": "text-delta", "id": "t", "delta": f"{tick}.{j} "})
            store._services.flusher.commit_due(time.monotonic() + 3600.0)
    within = seen.snapshots()
    assert len(seen.commits) == ticks
    assert len(within) < ticks // SNAPSHOT_EVERY * 3 // 4, within  # the counts alone: 8
    _check_amortised_and_bounded(seen)
    writer.close()
    replayed, loaded = replay_from_scratch(store, "chat"), load_with_snapshots(store, "chat")
    assert loaded.state.to_json() == replayed.state.to_json()


def test_after_a_restart_the_first_close_snapshots_and_loads_as_before(
    durable_backend: Backend,
) -> None:
    """A new process knows no snapshot: its first close takes one (as the counts always did),
    whatever the last process wrote; the conversation loads the same from it."""
    first = durable_backend.open(batch_ms=60_000)
    first.start_conversation("chat")
    _turns(first, "chat", 0, 20)
    first.close()
    second = durable_backend.open(batch_ms=60_000)
    assert load_with_snapshots(second, "chat").state.to_json() == (
        replay_from_scratch(second, "chat").state.to_json()
    )
    with watching(second, "chat") as seen:
        closes = _turns(second, "chat", 20, 4)
    taken = [seen.commits[i].versions[-1] for i, _ in seen.snapshots()]
    assert taken[0] == closes[0]
    replayed, loaded = replay_from_scratch(second, "chat"), load_with_snapshots(second, "chat")
    assert loaded.version == replayed.version == closes[-1]
    assert loaded.state.to_json() == replayed.state.to_json()
