"""How many transactions a streamed turn costs, and that fewer of them widen no crash window.

A chunk that asks someone outside to act (tool input available, an approval
request) is committed at once. Any other boundary chunk (tool output,
finish-step, finish, error, abort) ends its batch: the batch is committed
before the writer takes the next plain chunk, together with the close when the
stream closes next, by the timer within the settle time (5 ms by default) when
nothing follows, and before anything else in the process decides on or reads
the conversation. So the end of a reply (``finish-step``, ``finish``, close)
is one transaction, not three.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import pairwise
from typing import Any

import pytest

from chatledger import ChatLedgerError, ConversationStore, Verdict
from chatledger.adapters.bootstrap import StoreOptions
from chatledger.adapters.store.store import open_store
from chatledger.adapters.store.streams.policy import (
    COMMIT_BUDGET,
    DEFAULT_BATCH_CHUNKS,
    BatchPolicy,
)
from chatledger.domain.errors import StoreConfigurationError
from chatledger.domain.snapshot_cadence import SNAPSHOT_CLOSE_AFTER
from tests.integration.conftest import Backend
from tests.support.ledger import load_with_snapshots, replay_from_scratch, stored_chunk_count


def _user(message_id: str) -> dict[str, Any]:
    return {"id": message_id, "role": "user", "parts": [{"type": "text", "text": "hi"}]}


def _delta(text: str) -> dict[str, Any]:
    return {"type": "text-delta", "id": "t", "delta": text}


def _reply(deltas: int, *, tool: bool = False) -> list[dict[str, Any]]:
    """A reply as the AI SDK streams it (optionally a tool call first), ``deltas`` text deltas."""
    chunks: list[dict[str, Any]] = [{"type": "start"}, {"type": "start-step"}]
    if tool:
        chunks += [
            {"type": "tool-input-start", "toolCallId": "c1", "toolName": "search"},
            {"type": "tool-input-available", "toolCallId": "c1", "toolName": "search", "input": {}},
            {"type": "tool-output-available", "toolCallId": "c1", "output": {"hits": 3}},
            {"type": "finish-step"},
            {"type": "start-step"},
        ]
    chunks.append({"type": "text-start", "id": "t"})
    chunks += [_delta(f"w{i} ") for i in range(deltas)]
    chunks += [{"type": "text-end", "id": "t"}, {"type": "finish-step"}, {"type": "finish"}]
    return chunks


@contextmanager
def counting_commits(store: ConversationStore) -> Iterator[list[int]]:
    """Count the transactions the store's log records (each ``record`` call is one)."""
    log = store.log  # the real log; only its calls are counted
    real = log.record
    count = [0]

    def record(*args: Any, **kwargs: Any) -> tuple[int, int]:
        count[0] += 1
        return real(*args, **kwargs)

    log.record = record  # type: ignore[method-assign]
    try:
        yield count
    finally:
        log.record = real  # type: ignore[method-assign]


def _untimed(max_chunks: int = DEFAULT_BATCH_CHUNKS) -> BatchPolicy:
    """A policy whose timers never fire in a test: the commits counted are the ones the chunks
    cause, not ones a 5 ms settle timer adds when a loaded machine pauses the test between two
    chunks."""
    return BatchPolicy(max_chunks, 600.0, settle=600.0)


def _open(backend: Backend, policy: BatchPolicy) -> ConversationStore:
    """A store with its own batch policy (memory://: a new, separate store)."""
    store = open_store(backend.url, StoreOptions(batch=policy))
    backend.stores.append(store)
    return store


def test_a_reply_without_tools_is_two_commits_plus_one_per_full_batch(backend: Backend) -> None:
    """User message, stream open, the full batches, then finish-step + finish + close at once."""
    store = _open(backend, _untimed(64))
    store.start_conversation("chat")
    with counting_commits(store) as commits:
        store.append_message("chat", _user("u1"))
        stream = store.open_stream("chat")
        chunks = _reply(150)  # 156 chunks: two full batches of 64, then 28 and the close
        for chunk in chunks:
            assert stream.append(chunk).verdict is Verdict.APPLIED
        stream.close()
    assert commits[0] == 5
    assert stored_chunk_count(store, "chat") == len(chunks)


def test_by_default_a_reply_is_committed_on_age_not_every_few_dozen_chunks(
    backend: Backend,
) -> None:
    """The default batch size is a cap (1,024 chunks), not the usual trigger: a 156-chunk reply
    written within the batch age is the open (with its user message) and the close, two commits;
    a reply longer than the cap commits each full batch on count."""
    store = _open(backend, _untimed())  # the age never fires here; the count is the default
    store.start_conversation("chat")
    with counting_commits(store) as commits:
        stream = store.open_stream("chat", user_message=_user("u1"))
        for chunk in _reply(150):
            stream.append(chunk)
        stream.close()
    assert commits[0] == 2
    cap = store.batch.max_chunks
    with counting_commits(store) as commits:
        stream = store.open_stream("chat", user_message=_user("u2"))
        chunks = _reply(cap + 10)  # one full batch, then the rest with the close
        for chunk in chunks:
            stream.append(chunk)
        stream.close()
    assert commits[0] == 3
    assert stored_chunk_count(store, "chat") == len(_reply(150)) + len(chunks)


def test_a_tool_step_commits_once_before_the_next_step_goes_on(backend: Backend) -> None:
    """Tool input available is committed at once; the tool output and the step's end are one
    commit, made before the next step's first plain chunk is taken; the reply's end and the
    close are one more. (The settle timer is set far off: the test checks what waits for
    the next chunk, which a 5 ms timer on a loaded machine would commit under its feet.)"""
    store = _open(backend, _untimed(1000))
    reader = backend.other_store(store)
    store.start_conversation("chat")
    store.append_message("chat", _user("u1"))
    chunks = _reply(10, tool=True)
    with counting_commits(store) as commits:
        stream = store.open_stream("chat")
        step_end = chunks.index({"type": "finish-step"})
        asked = next(i for i, c in enumerate(chunks) if c["type"] == "tool-input-available")
        for chunk in chunks[: asked + 1]:
            stream.append(chunk)
        assert stored_chunk_count(reader, "chat") == asked + 1, "the tool input, at once"
        for chunk in chunks[asked + 1 : step_end + 1]:
            stream.append(chunk)
        assert stored_chunk_count(reader, "chat") == asked + 1, "the tool step's end waits"
        stream.append(chunks[step_end + 1])  # start-step: the tool step is committed first
        assert stored_chunk_count(reader, "chat") == step_end + 1
        for chunk in chunks[step_end + 2 :]:
            stream.append(chunk)
        stream.close()
    assert commits[0] == 4  # open, the tool input, the tool step's end, the rest with the close
    assert stored_chunk_count(reader, "chat") == len(chunks)


def test_a_boundary_with_nothing_after_it_is_committed_within_the_settle_time(
    backend: Backend,
) -> None:
    """A boundary the model does not follow up (it is slow to start its next step) is
    committed by the timer after the settle time, not after the batch age (here 10 minutes)."""
    store = _open(backend, BatchPolicy(1000, 600, settle=0.005))
    reader = backend.other_store(store)
    store.start_conversation("chat")
    store.append_message("chat", _user("u1"))
    stream = store.open_stream("chat")
    stream.append({"type": "start-step"})
    stream.append({"type": "finish-step"})
    deadline = time.monotonic() + 5
    while stored_chunk_count(reader, "chat") < 2 and time.monotonic() < deadline:
        time.sleep(0.002)
    assert stored_chunk_count(reader, "chat") == 2
    stream.close()


def test_settle_zero_commits_every_boundary_at_once(backend: Backend) -> None:
    """``BatchPolicy(settle=0)``: the previous cadence, a commit right after each boundary."""
    store = _open(backend, BatchPolicy(1000, 600, settle=0.0))
    store.start_conversation("chat")
    with counting_commits(store) as commits:
        stream = store.open_stream("chat")
        for chunk in _reply(3):
            stream.append(chunk)
        stream.close()
    assert commits[0] == 4  # open, finish-step, finish, close


@pytest.mark.parametrize("bad", [-0.001, 0.051])
def test_a_settle_time_outside_the_batch_age_is_refused(bad: float) -> None:
    """The settle time may not be negative nor longer than the batch age (the crash window)."""
    with pytest.raises(StoreConfigurationError, match="settle"):
        BatchPolicy(64, 0.05, settle=bad)


@pytest.mark.parametrize(
    "asking",
    [
        {"type": "tool-input-available", "toolCallId": "c9", "toolName": "rm", "input": {}},
        {"type": "tool-approval-request", "approvalId": "ap9", "toolCallId": "c9"},
    ],
    ids=["tool-input-available", "tool-approval-request"],
)
def test_a_chunk_asking_someone_to_act_is_committed_at_once(
    backend: Backend, asking: dict[str, Any]
) -> None:
    """Another process may act on it (run the tool, answer the approval) before the writer's
    next call: it is committed before ``append`` returns."""
    store = backend.open(batch_chunks=1000, batch_ms=600_000)
    reader = backend.other_store(store)
    store.start_conversation("chat")
    store.append_message("chat", _user("u1"))
    stream = store.open_stream("chat")
    stream.append({"type": "start-step"})
    if asking["type"] == "tool-approval-request":
        stream.append(
            {"type": "tool-input-available", "toolCallId": "c9", "toolName": "rm", "input": {}}
        )
    stream.append({"type": "text-start", "id": "t"})
    stream.append(asking)
    before = 3 if asking["type"] == "tool-approval-request" else 2
    assert stored_chunk_count(reader, "chat") == before + 1
    stream.close()


def test_what_this_process_decides_on_sees_a_boundary_not_yet_settled(backend: Backend) -> None:
    """An action on the conversation in the writer's own process first commits the batch a
    boundary ended, as if it had been committed at once (here: an approval answered right
    after the tool input, and a read right after a finish-step)."""
    store = backend.open(batch_chunks=1000, batch_ms=600_000)
    store.start_conversation("chat")
    store.append_message("chat", _user("u1"))
    stream = store.open_stream("chat")
    stream.append({"type": "start-step"})
    stream.append({"type": "text-start", "id": "t"})
    stream.append(_delta("thinking"))
    stream.append({"type": "text-end", "id": "t"})
    stream.append({"type": "finish-step"})
    parts = store.messages("chat")[-1]["parts"]
    assert [part["type"] for part in parts] == ["step-start", "text"]
    assert parts[1]["state"] == "done"
    stream.close()


def test_a_user_message_opened_with_its_stream_is_one_commit(backend: Backend) -> None:
    """``open_stream(user_message=...)``: the user message and the stream open in one
    transaction, so a reply without tools costs four commits in all."""
    store = _open(backend, _untimed(64))
    store.start_conversation("chat")
    with counting_commits(store) as commits:
        stream = store.open_stream("chat", user_message=_user("u1"), user_actor="user:alice")
        for chunk in _reply(150):
            stream.append(chunk)
        stream.close()
    assert commits[0] == 4
    messages = store.messages("chat")
    assert [m["role"] for m in messages] == ["user", "assistant"]
    assert messages[0]["id"] == "u1"


def test_a_refused_user_message_opens_no_stream(backend: Backend) -> None:
    """Both or neither: a user message refused (a duplicate id) leaves no stream open."""
    store = backend.open()
    store.start_conversation("chat")
    store.append_message("chat", _user("u1"))
    with pytest.raises(ChatLedgerError, match="already in the conversation"):
        store.open_stream("chat", user_message=_user("u1"))
    assert store.status("chat").status != "streaming"
    store.open_stream("chat").close()


def test_a_close_snapshots_the_first_time_then_once_every_few_turns(backend: Backend) -> None:
    """A snapshot holds the whole conversation and replaces the last one: one per closed turn
    costs bytes that grow with the conversation. The first close snapshots, later ones only
    once ``SNAPSHOT_CLOSE_AFTER`` events came since; loading still equals folding every event."""
    store = backend.open(batch_ms=60_000)
    store.start_conversation("chat")
    taken: list[int] = []
    real = store.log.record

    def record(conversation: Any, *, snapshot: bool = False) -> tuple[int, int]:
        written = real(conversation, snapshot=snapshot)
        if snapshot:
            taken.append(conversation.version)
        return written

    store.log.record = record  # type: ignore[method-assign]
    closes: list[int] = []
    for turn in range(8):
        stream = store.open_stream("chat", user_message=_user(f"u{turn}"))
        for chunk in _reply(5):
            stream.append(chunk)
        stream.close()
        closes.append(stream.conversation.version)
    store.log.record = real  # type: ignore[method-assign]
    assert taken[0] == closes[0]
    assert set(taken) <= set(closes)
    assert 1 < len(taken) < len(closes)
    turn_events = closes[1] - closes[0]
    assert all(
        v - max(t for t in taken if t <= v) < SNAPSHOT_CLOSE_AFTER + turn_events for v in closes
    )
    replayed, loaded = replay_from_scratch(store, "chat"), load_with_snapshots(store, "chat")
    assert loaded.version == replayed.version == closes[-1]
    assert loaded.state.to_json() == replayed.state.to_json()


def test_a_stream_opened_while_the_timer_runs_is_still_committed_on_age(backend: Backend) -> None:
    """A new stream no longer wakes a running timer thread (it checks every writer within its
    period): a stream opened while another is watched still has its quiet batch committed."""
    store = backend.open(batch_chunks=1000, batch_ms=100)
    reader = backend.other_store(store)
    for chat in ("first", "second"):
        store.start_conversation(chat)
    first = store.open_stream("first", user_message=_user("u1"))
    first.append({"type": "start"})  # the timer thread now runs, checking on its period
    second = store.open_stream("second", user_message=_user("u2"))
    started = time.monotonic()
    second.append({"type": "start"})
    second.append({"type": "start-step"})
    while stored_chunk_count(reader, "second") < 2 and time.monotonic() - started < 5:
        time.sleep(0.005)
    assert stored_chunk_count(reader, "second") == 2
    assert time.monotonic() - started < 1.5
    first.close()
    second.close()


def test_a_conversation_just_started_is_written_to_without_loading_it(backend: Backend) -> None:
    """``start_conversation`` keeps what it saved: the first turn decides on it without reading
    the log back (two queries on PostgreSQL); a clash with another writer is still caught."""
    store = backend.open()
    loads: list[str] = []
    real = store.log.load

    def load(*args: Any, **kwargs: Any) -> Any:
        loads.append(args[2])
        return real(*args, **kwargs)

    store.log.load = load  # type: ignore[method-assign]
    store.start_conversation("chat")
    with store.open_stream("chat", user_message=_user("u1")) as stream:
        stream.append({"type": "start"})
    store.log.load = real  # type: ignore[method-assign]
    assert loads == []
    assert [m["role"] for m in store.messages("chat")] == ["user", "assistant"]


def test_snapshots_are_spaced_from_the_last_one_not_also_at_every_multiple(
    backend: Backend,
) -> None:
    """The within-stream snapshot counts SNAPSHOT_EVERY events from this process's last
    snapshot: a close's snapshot is not followed a few events later by another at the next
    multiple of SNAPSHOT_EVERY (each holds the whole conversation)."""
    store = backend.open(batch_ms=60_000)
    store.start_conversation("chat")
    taken: list[int] = []
    real = store.log.record

    def record(conversation: Any, *, snapshot: bool = False) -> tuple[int, int]:
        written = real(conversation, snapshot=snapshot)
        if snapshot:
            taken.append(conversation.version)
        return written

    store.log.record = record  # type: ignore[method-assign]
    for turn in range(16):
        stream = store.open_stream("chat", user_message=_user(f"u{turn}"))
        for chunk in _reply(3, tool=turn % 2 == 1):
            stream.append(chunk)
        stream.close()
    store.log.record = real  # type: ignore[method-assign]
    assert len(taken) > 2
    gaps = [b - a for a, b in pairwise(taken)]
    assert min(gaps) >= SNAPSHOT_CLOSE_AFTER, taken
    replayed, loaded = replay_from_scratch(store, "chat"), load_with_snapshots(store, "chat")
    assert loaded.state.to_json() == replayed.state.to_json()


def test_a_batch_begun_right_after_a_tick_is_committed_with_the_commit_budget_left(
    backend: Backend,
) -> None:
    """A chunk is durable within ``batch_ms``: its batch is taken when the chunk is
    ``commit_age`` old (``batch_ms`` less the commit budget), at the moment the flusher asks
    to be woken, not at a tick up to ``batch_ms`` later (then the commit ended past the bound).
    Worst case: the chunk is appended right after a tick. The ticks run at explicit moments
    (``commit_due(now)``), following the flusher's own schedule; its thread is stopped."""
    store = backend.open(batch_chunks=1000, batch_ms=60_000)  # the moments decide, not the clock
    policy = BatchPolicy(max_delay=60.0)
    reader = backend.other_store(store)
    flusher = store._services.flusher
    flusher.stop()  # no thread: only the ticks below commit
    store.start_conversation("chat")
    stream = store.open_stream("chat", user_message=_user("u1"))
    tick = time.monotonic()
    assert flusher.commit_due(tick) is None  # a tick, nothing buffered
    stream.append({"type": "start"})
    now, taken_at = tick, None
    for _ in range(1000):
        due = flusher.commit_due(now)
        if stored_chunk_count(reader, "chat"):
            taken_at = now
            break
        now = min(due if due is not None else float("inf"), now + flusher._period)
    assert taken_at is not None
    age = taken_at - tick  # at least the chunk's age (it was appended after the tick)
    assert policy.commit_age <= age <= policy.commit_age + 1.0  # not before: a due one is alone
    assert policy.commit_age <= policy.max_delay * (1 - COMMIT_BUDGET)
    stream.close()
