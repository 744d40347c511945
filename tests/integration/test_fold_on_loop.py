"""``StreamWriter.append_unless_due``: a chunk folded on the event loop only when that commits
nothing and waits for nothing; otherwise nothing is done and ``append`` (in a thread) takes it.

The turn runner folds most text deltas there instead of handing each to a worker thread.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

from chatledger import ConversationStore
from chatledger.adapters.store.turns.outbox import Outbox
from chatledger.adapters.store.turns.runner import _Batches
from chatledger.domain.aggregate import conversation_id
from tests.integration.conftest import Backend

Chunk = dict[str, Any]


def _delta(i: int) -> Chunk:
    return {"type": "text-delta", "id": "t", "delta": f"w{i} "}


def _opened(store: ConversationStore) -> Any:
    store.start_conversation("c")
    store.append_message(
        "c", {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "hi"}]}
    )
    stream = store.open_stream("c")
    for chunk in ({"type": "start"}, {"type": "start-step"}, {"type": "text-start", "id": "t"}):
        stream.append(chunk)
    stream.flush()
    return stream


def _version(store: ConversationStore) -> int:
    """The version of the last event of the conversation in the log."""
    log = store._services.parts.log
    return log.select_events(conversation_id("default", "c"), desc=True, limit=1)[
        0
    ].originator_version


def test_it_folds_without_committing_and_declines_what_would_commit(backend: Backend) -> None:
    """Deltas are folded and buffered, never committed; a full batch, a boundary and a held
    writer are declined with nothing folded, and ``append`` then stores everything in order."""
    store = backend.open(batch_chunks=3, batch_ms=60_000)
    stream = _opened(store)
    committed = _version(store)
    assert stream.append_unless_due(_delta(0)) is not None
    received, message = stream.append_unless_due(_delta(1))
    assert received.position == 4 and message["parts"][-1]["text"] == "w0 w1 "
    assert _version(store) == committed  # folded, not committed
    assert stream.append_unless_due(_delta(2)) is None  # the batch would be full: it commits
    assert stream.append_unless_due({"type": "text-end", "id": "t"}) is None  # a boundary
    stream.append(_delta(2))  # the usual path commits the full batch
    assert _version(store) > committed
    held = threading.Event()
    release = threading.Event()

    def hold() -> None:
        assert stream.try_hold()
        held.set()
        release.wait(30)
        stream.release()

    holder = threading.Thread(target=hold)
    holder.start()
    assert held.wait(30)
    try:
        assert stream.append_unless_due(_delta(3)) is None  # the flusher holds the writer
    finally:
        release.set()
        holder.join(30)
    stream.append(_delta(3))
    stream.append({"type": "text-end", "id": "t"})
    stream.close()
    text = store.messages("c")[-1]["parts"][-1]["text"]
    assert text == "w0 w1 w2 w3 "


def test_a_stale_or_closed_writer_declines(backend: Backend) -> None:
    """A closed writer folds nothing (``append`` raises why)."""
    store = backend.open()
    stream = _opened(store)
    stream.close()
    assert stream.append_unless_due(_delta(0)) is None


async def _run_batches(stream: Any, chunks: list[Chunk]) -> list[Any]:
    outbox = Outbox(limit=10_000)
    batches = _Batches(stream, outbox)
    for chunk in chunks:
        await batches.add(chunk)
    await batches.finish()
    return outbox.take()


def test_the_runner_keeps_the_order_across_the_loop_and_the_thread(backend: Backend) -> None:
    """Chunks folded on the loop and chunks stored in a thread (boundaries, full batches)
    reach the client and the log in the responder's order, each once."""
    import asyncio

    store = backend.open(batch_chunks=4, batch_ms=60_000)
    stream = _opened(store)
    chunks: list[Chunk] = []
    part = "t"
    for i in range(40):
        chunks.append({"type": "text-delta", "id": part, "delta": f"w{i} "})
        if i % 7 == 6:  # a boundary and a new part: stored through a thread
            chunks.append({"type": "text-end", "id": part})
            part = f"t{i}"
            chunks.append({"type": "text-start", "id": part})
    sent = asyncio.run(_run_batches(stream, chunks))
    assert sent == chunks
    stream.close()
    texts = "".join(
        part.get("text", "") for part in store.messages("c")[-1]["parts"] if part["type"] == "text"
    )
    assert texts == "".join(c["delta"] for c in chunks if c["type"] == "text-delta")


def test_a_chunk_behind_a_batch_in_a_thread_waits_for_it(
    backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While a batch is being stored in a thread (held there), the deltas after it are not
    folded on the loop ahead of it: the log and the client get them after the batch."""
    import asyncio

    from chatledger.adapters.store.turns import runner

    store = backend.open()
    stream = _opened(store)
    go = threading.Event()
    real = runner.deliver_all

    def held(writer: Any, chunks: list[Any]) -> Any:
        assert go.wait(30)
        return real(writer, chunks)

    monkeypatch.setattr(runner, "deliver_all", held)
    chunks: list[Chunk] = [
        {"type": "text-end", "id": "t"},
        {"type": "finish-step"},  # a boundary: stored in a thread
        {"type": "start-step"},
        {"type": "text-start", "id": "u"},
        *({"type": "text-delta", "id": "u", "delta": f"w{i} "} for i in range(5)),
    ]

    async def run() -> list[Any]:
        outbox = Outbox(limit=10_000)
        batches = _Batches(stream, outbox)
        for chunk in chunks:
            await batches.add(chunk)
        go.set()
        await batches.finish()
        return outbox.take()

    assert asyncio.run(run()) == chunks
    stream.close()
    assert _stored(store)[3:] == chunks  # in the log, in the order sent


def test_the_stream_in_route_keeps_the_order_behind_a_batch_in_a_thread(backend: Backend) -> None:
    """The stream-in route's storing: while a batch is stored in a thread (held there), the
    events after it wait for it; every chunk is counted once and stored in order."""
    import asyncio
    import json

    from chatledger.adapters.http.answers import AnswerReport, _Storing

    store = backend.open()
    stream = _opened(store)
    go = threading.Event()

    class HeldReport(AnswerReport):
        def take_all(self, chunks: list[Any], writer: Any) -> None:
            assert go.wait(30)
            super().take_all(chunks, writer)

    report = HeldReport()
    first = [_delta(0), {"type": "text-end", "id": "t"}, {"type": "finish-step"}]
    then = [{"type": "start-step"}, {"type": "text-start", "id": "u"}]
    then += [{"type": "text-delta", "id": "u", "delta": f"v{i} "} for i in range(4)]

    async def run() -> None:
        storing = _Storing(report, stream)
        storing.add([json.dumps(chunk) for chunk in first])  # finish-step goes to a thread
        storing.add([json.dumps(chunk) for chunk in then])  # must wait behind it
        assert storing.pending or storing.job is not None
        go.set()
        await storing.finish()

    asyncio.run(run())
    assert (report.received, report.applied, report.refused_count) == (9, 9, 0)
    stream.close()
    assert _stored(store)[3:] == [*first, *then]  # in the log, in the order sent


def _stored(store: ConversationStore) -> list[Chunk]:
    """The chunks of the conversation's last stream, in stream order, as the log holds them."""
    from chatledger.adapters.store.reads.follow import stream_reader

    reader = stream_reader(store._services.parts.log, "default", "c", None)
    assert reader is not None
    return [item.chunk for item in reader.read()[0]]
