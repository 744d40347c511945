"""The stop race: an answer, however it ends, closes its stream and ends its response.

Each interleaving is forced (a responder that waits on an event, a stop given
before the answer's task ever ran, a stream closed by another process, a
shutdown) on a real SQLite store; the response must end with ``[DONE]`` and
the conversation must not be left ``streaming``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from starlette.responses import StreamingResponse

from chatledger import ConversationStore, StreamAlreadyOpenError
from chatledger.adapters.bootstrap import StoreOptions
from chatledger.adapters.http.sse import DONE, sse_body, sse_response
from chatledger.adapters.responders.scripted import ResponderRequest
from chatledger.adapters.store.store import open_store
from chatledger.adapters.store.streams.policy import BatchPolicy
from chatledger.adapters.store.turns.runner import TurnRunner
from chatledger.domain.events import StreamOpened
from tests.integration.http_support import user
from tests.support.ledger import stored_events

pytestmark = pytest.mark.anyio


class Gated:
    """A responder that yields a few chunks, says so, then waits until it is released."""

    actor = "agent:gated"

    def __init__(self, before: int = 3, *, fail: bool = False) -> None:
        self.before = before
        self.fail = fail
        self.reached = asyncio.Event()
        self.release = asyncio.Event()

    async def respond(self, request: ResponderRequest) -> AsyncIterator[dict[str, Any]]:
        yield {"type": "start"}
        yield {"type": "text-start", "id": "t"}
        for i in range(self.before):
            yield {"type": "text-delta", "id": "t", "delta": f"{i} "}
        self.reached.set()
        await self.release.wait()
        if self.fail:
            raise RuntimeError("the model went away")
        yield {"type": "text-end", "id": "t"}
        yield {"type": "finish"}


async def body_of(response: Any) -> str:
    """The whole SSE body (it must end)."""
    assert isinstance(response, StreamingResponse)
    pieces = [piece async for piece in response.body_iterator]
    return "".join(str(p) for p in pieces)


def begin(store: ConversationStore, runner: TurnRunner, chat: str) -> tuple[Any, str]:
    store.start_conversation(chat)
    store.append_message(chat, user("u1", "hi"))
    turn = store.turns.open(chat, actor="agent:gated", trigger="submit-message")
    return sse_response(sse_body(runner.start(turn), 0.05)), turn.writer.stream_id


async def test_a_stop_before_the_answer_ever_ran(sqlite_store: ConversationStore) -> None:
    """Stopped in the same loop step as it started: the responder's task never ran a line."""
    responder = Gated()
    runner = TurnRunner(responder)
    response, stream_id = begin(sqlite_store, runner, "c")
    assert await runner.stop(stream_id, "alice", "too early")  # no await in between: not started
    body = await body_of(response)
    assert body.endswith(DONE)
    assert '"type":"abort","reason":"stopped by alice: too early"' in body
    status = sqlite_store.status("c")
    assert (status.status, status.last_outcome) == ("idle", "aborted")
    assert not responder.reached.is_set()


async def test_a_stop_mid_answer(sqlite_store: ConversationStore) -> None:
    responder = Gated()
    runner = TurnRunner(responder)
    response, stream_id = begin(sqlite_store, runner, "c")
    reading = asyncio.create_task(body_of(response))
    await responder.reached.wait()
    assert await runner.stop(stream_id, "alice", None)
    body = await reading
    assert body.endswith(DONE) and '"reason":"stopped by alice"' in body
    assert sqlite_store.status("c").last_outcome == "aborted"
    text = sqlite_store.messages("c")[-1]["parts"][-1]["text"]
    assert text == "0 1 2 "  # what was written before the stop is kept


async def test_a_failing_responder_mid_answer(sqlite_store: ConversationStore) -> None:
    responder = Gated(fail=True)
    runner = TurnRunner(responder)
    response, _ = begin(sqlite_store, runner, "c")
    reading = asyncio.create_task(body_of(response))
    await responder.reached.wait()
    responder.release.set()
    body = await reading
    assert body.endswith(DONE) and '"type":"error"' in body
    status = sqlite_store.status("c")
    assert (status.status, status.last_outcome) == ("idle", "errored")


async def test_a_stream_closed_by_another_process(sqlite_store: ConversationStore) -> None:
    """Another server stops the answer by closing the stream in the log: this one ends quietly."""
    responder = Gated()
    runner = TurnRunner(responder)
    response, stream_id = begin(sqlite_store, runner, "c")
    reading = asyncio.create_task(body_of(response))
    await responder.reached.wait()
    assert sqlite_store.status("c").status == "streaming"  # its open is in the log now
    other = ConversationStore.open(sqlite_store.config.display)
    try:
        other.close_stream("c", stream_id, "aborted", "stopped elsewhere", actor="bob")
    finally:
        other.close()
    responder.release.set()
    body = await reading
    assert body.endswith(DONE) and "the stream was closed" in body
    status = sqlite_store.status("c")
    assert (status.status, status.last_reason) == ("idle", "stopped elsewhere")


async def test_another_process_cannot_open_a_stream_while_an_answer_is_pending(
    tmp_path: Path,
) -> None:
    """An answer's open is stored before the answer streams (``open_stream``'s default), even
    with the batch timers set far off: another process opening a stream on the chat meanwhile
    is refused at once, and the answer is recorded whole."""
    url = f"sqlite:///{tmp_path / 'chatledger.db'}"
    store = open_store(url, StoreOptions(batch=BatchPolicy(1000, 600.0, settle=600.0)))
    try:
        responder = Gated()
        runner = TurnRunner(responder)
        response, stream_id = begin(store, runner, "c")
        reading = asyncio.create_task(body_of(response))
        await responder.reached.wait()
        other = ConversationStore.open(url)
        try:
            with pytest.raises(StreamAlreadyOpenError):
                other.open_stream("c", user_message=user("u2", "me first"))
        finally:
            other.close()
        responder.release.set()
        body = await reading
        assert body.endswith(DONE) and "the stream was closed" not in body
        status = store.status("c")
        assert (status.status, status.last_outcome) == ("idle", "finished")
        opened = [e.stream_id for e in stored_events(store, "c") if isinstance(e, StreamOpened)]
        assert opened == [stream_id]
        assert [m["role"] for m in store.messages("c")] == ["user", "assistant"]
        assert store.operations.verify().ok
    finally:
        store.close()


async def test_a_shutdown_mid_answer(sqlite_store: ConversationStore) -> None:
    responder = Gated()
    runner = TurnRunner(responder)
    response, _ = begin(sqlite_store, runner, "c")
    reading = asyncio.create_task(body_of(response))
    await responder.reached.wait()
    await runner.shutdown(timeout=0.01)
    body = await reading
    assert body.endswith(DONE) and "the server stopped the response" in body
    status = sqlite_store.status("c")
    assert (status.status, status.last_outcome) == ("idle", "aborted")
    assert runner.tasks == set() and runner.turns == {}


async def test_a_shutdown_before_the_answer_ever_ran(sqlite_store: ConversationStore) -> None:
    responder = Gated()
    runner = TurnRunner(responder)
    response, _ = begin(sqlite_store, runner, "c")
    await runner.shutdown(timeout=0)
    body = await body_of(response)
    assert body.endswith(DONE)
    assert sqlite_store.status("c").status == "idle"


async def test_a_client_that_stops_reading_is_dropped_to_the_log(
    sqlite_store: ConversationStore,
) -> None:
    """Past the limit of unread events the client's events are dropped, not held in memory.

    The answer is stored whole all the same; the response ends with an error
    telling the client to resume from the log, where the whole answer is.
    """
    responder = Gated(before=200)
    runner = TurnRunner(responder, max_waiting=20)
    response, _ = begin(sqlite_store, runner, "c")  # nobody reads it yet
    await responder.reached.wait()
    responder.release.set()
    while runner.tasks:  # the answer runs to its end without its client
        await asyncio.wait(set(runner.tasks))
    assert sqlite_store.status("c").last_outcome == "finished"
    stored = sqlite_store.messages("c")[-1]["parts"][-1]["text"]
    assert stored == "".join(f"{i} " for i in range(200))
    body = await body_of(response)
    assert "the client fell behind the answer" in body
    assert '"delta"' not in body and not body.endswith(DONE)
