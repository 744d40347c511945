"""``store.follow_async``: the same chunks as ``follow``, waiting on the event loop, no thread per follower.

And ``GET /api/chat/{id}/stream`` built on it: a resumed client costs a
coroutine (no OS thread each), and a resume never runs the projection.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from chatledger import ConversationStore
from chatledger.adapters.http.app import create_app
from chatledger.adapters.responders.scripted import ScriptedResponder
from chatledger.domain.conversation import Verdict
from chatledger.domain.errors import (
    ConversationNotFoundError,
    FollowTimeoutError,
    InvalidInputError,
)
from tests.integration.conftest import Backend
from tests.integration.http_support import client_of, sse_events

pytestmark = pytest.mark.anyio

Chunk = dict[str, Any]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _text(deltas: int) -> list[Chunk]:
    return [
        {"type": "start"},
        {"type": "start-step"},
        {"type": "text-start", "id": "t"},
        *({"type": "text-delta", "id": "t", "delta": f"w{i} "} for i in range(deltas)),
        {"type": "text-end", "id": "t"},
        {"type": "finish-step"},
        {"type": "finish"},
    ]


def _new_chat(store: ConversationStore, chat: str) -> None:
    store.start_conversation(chat)
    store.append_message(
        chat, {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "hi"}]}
    )


async def _collect(store: ConversationStore, chat: str, **options: Any) -> list[Any]:
    follower = await store.follow_async(chat, **options)
    return [item async for item in follower]


async def test_follow_async_yields_what_follow_yields_live_until_the_close(
    durable_backend: Backend,
) -> None:
    """A follower started before the chunks gets every applied chunk, live, then ends at the close."""
    store = durable_backend.open()
    _new_chat(store, "c")
    stream = store.open_stream("c")
    follower = await store.follow_async("c")
    subscribed = asyncio.Event()
    got: list[Any] = []

    async def read() -> None:
        async for item in follower:
            got.append(item)
            subscribed.set()

    reading = asyncio.create_task(read())
    stream.append({"type": "start"})
    stream.flush()
    await asyncio.wait_for(subscribed.wait(), 30)  # it is reading live, not a finished log
    for chunk in _text(40)[1:]:
        stream.append(chunk)
    await asyncio.to_thread(stream.close)
    await asyncio.wait_for(reading, 30)
    assert [item.chunk for item in got] == _text(40)
    assert got == list(store.follow("c"))  # cursors and positions too
    assert store._services.news.followers == 0  # it unsubscribed at the close

    rest = await _collect(store, "c", after=got[9].cursor)
    assert [item.chunk for item in rest] == _text(40)[10:]


async def test_take_ready_takes_the_rest_of_the_read_in_order(durable_backend: Backend) -> None:
    """After a chunk, ``take_ready`` gives the rest of what that read found, then nothing is lost."""
    store = durable_backend.open()
    _new_chat(store, "c")
    stream = store.open_stream("c")
    for chunk in _text(5):
        stream.append(chunk)
    stream.flush()
    follower = await store.follow_async("c")
    first = await follower.__anext__()
    rest = follower.take_ready()
    assert [first.chunk, *(item.chunk for item in rest)] == _text(5)  # one read: every chunk
    assert follower.take_ready() == []
    stream.append({"type": "start-step"})
    stream.close()
    assert [item.chunk async for item in follower] == [{"type": "start-step"}]


async def test_follow_async_errors_are_raised_when_awaited(durable_backend: Backend) -> None:
    """Unknown chat and foreign cursors fail at once; a quiet stream times out with its cursor."""
    store = durable_backend.open()
    with pytest.raises(ConversationNotFoundError):
        await store.follow_async("nope")
    _new_chat(store, "c")
    assert await _collect(store, "c") == []  # never a stream: nothing
    with pytest.raises(InvalidInputError):
        await store.follow_async("c", after="s_x:1:2")
    stream = store.open_stream("c")
    assert stream.append({"type": "start"}).verdict is Verdict.APPLIED
    stream.flush()
    follower = await store.follow_async("c", timeout=0.2)
    first = await follower.__anext__()
    with pytest.raises(FollowTimeoutError) as raised:
        await follower.__anext__()
    assert raised.value.cursor == first.cursor
    assert store._services.news.followers == 0
    stream.close()


@pytest.mark.timeout(180)
async def test_resumed_clients_cost_no_thread_each(durable_backend: Backend) -> None:
    """Fifty more clients resuming an open answer add no thread apiece; each gets the whole answer.

    The first fifty fill the worker pools up (their threads are shared and
    bounded: at most 40 for the status reads); the next fifty must find their
    threads there.
    """
    store = durable_backend.open()
    app = create_app(store, responder=ScriptedResponder([]))
    _new_chat(store, "c")
    stream = store.open_stream("c")
    stream.append({"type": "start"})
    stream.flush()
    wave = 50
    resumes: list[asyncio.Task[Any]] = []

    async def resume_more() -> int:
        resumes.extend(asyncio.create_task(client.get("/api/chat/c/stream")) for _ in range(wave))
        # Every resume is following the log now.
        while store._services.news.followers < len(resumes):
            done = [task for task in resumes if task.done()]
            assert not done, done[0].result().text
            await asyncio.sleep(0.01)
        return threading.active_count()

    async with client_of(app) as client:
        warmed = await resume_more()
        added = await resume_more() - warmed
        for chunk in _text(30)[1:]:
            stream.append(chunk)
        await asyncio.to_thread(stream.close)
        answers = await asyncio.gather(*resumes)
    assert added < wave // 5, f"{added} threads more for {wave} more resumed clients"
    expected = [{**_text(30)[0], "messageId": stream.message_id}, *_text(30)[1:]]
    for answer in answers:
        assert sse_events(answer) == expected


async def test_a_resume_never_runs_the_projection(sqlite_store: ConversationStore) -> None:
    """Chunks whose form depends on the message (start, tool results) are shaped from the log.

    The read models stay where they were: resuming never catches them up
    (which would make every resumed client wait on the projector).
    """
    store = sqlite_store
    _new_chat(store, "c")
    call = {"toolCallId": "call_1", "toolName": "search"}
    answer = [
        {"type": "start"},
        {"type": "start-step"},
        {"type": "tool-input-available", **call, "input": {"q": "x"}},
        {"type": "tool-output-available", "toolCallId": "call_1", "output": {"hits": 1}},
        {"type": "finish-step"},
        {"type": "finish"},
    ]
    with store.open_stream("c") as stream:
        for chunk in answer:
            stream.append(chunk)
    cursors = [item.cursor for item in store.follow("c")]
    app = create_app(store, responder=ScriptedResponder([]))
    async with client_of(app) as client:
        resumed = await client.get("/api/chat/c/stream", params={"after": cursors[0]})
    assert sse_events(resumed) == answer[1:]
    assert (
        store.operations.catch_up() == store.operations.head()
    )  # nothing was projected by the resume


async def test_a_resume_while_the_turn_is_being_recorded_waits_for_its_stream(
    sqlite_store: ConversationStore,
) -> None:
    """The request's message is committed, its stream not yet open: a resume then is no 204.

    Forced: the real ``open_stream`` (of the store's streams service, which the
    turn opens through) is held at its start until the resume has read the
    status (which shows the message and no stream), as when a loaded server
    records a turn's steps far apart.
    """
    store = sqlite_store
    at_open, status_read = threading.Event(), threading.Event()
    release = threading.Event()
    open_stream, status = store.streams.open_stream, store.reads.status

    def held_open(*args: Any, **kwargs: Any) -> Any:
        at_open.set()
        assert release.wait(30)
        return open_stream(*args, **kwargs)

    def noted_status(*args: Any, **kwargs: Any) -> Any:
        found = status(*args, **kwargs)
        status_read.set()
        return found

    store.streams.open_stream = held_open  # type: ignore[method-assign]
    store.reads.status = noted_status  # type: ignore[method-assign]
    app = create_app(store, responder=ScriptedResponder([_text(5)]))
    body = {"id": "c", "trigger": "submit-message", "messages": [_user_message()]}
    async with client_of(app) as client:
        posting = asyncio.create_task(client.post("/api/chat", json=body))
        assert await asyncio.to_thread(at_open.wait, 30)
        resuming = asyncio.create_task(client.get("/api/chat/c/stream"))
        assert await asyncio.to_thread(status_read.wait, 30)
        assert status("c").stream_id is None  # what the resume saw: a message, no stream
        release.set()
        sent, resumed = await posting, await resuming
    assert resumed.status_code == 200, resumed.status_code
    assert sse_events(resumed) == sse_events(sent)


def _user_message() -> Chunk:
    return {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "hi"}]}
