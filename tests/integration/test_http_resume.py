"""GET /api/chat/{id}/stream: resuming the open stream from the log, keep-alives."""

from __future__ import annotations

import asyncio
import time

import pytest

from chatledger import ConversationStore
from chatledger.adapters.http.app import create_app
from chatledger.adapters.responders import demo
from chatledger.adapters.responders.scripted import (
    ScriptedResponder,
)
from tests.integration.conftest import Backend
from tests.integration.http_support import client_of, send_body, sse_events, text_turn, user
from tests.support.transactions import recorded_inserts

pytestmark = pytest.mark.anyio


async def test_resume_replays_the_open_stream_from_its_start(
    sqlite_store: ConversationStore,
) -> None:
    """``GET /api/chat/{id}/stream`` while the answer streams: the whole answer, from the log."""
    responder = ScriptedResponder([demo.first_turn_chunks()], delay=0.02)
    app = create_app(sqlite_store, responder=responder)
    async with client_of(app) as client:
        sending = asyncio.create_task(
            client.post("/api/chat", json=send_body("live", [demo.USER_MESSAGE]))
        )
        for _ in range(500):
            status = await client.get("/api/chats/live/status")
            if status.status_code == 200 and status.json()["status"] == "streaming":
                break
            await asyncio.sleep(0.01)
        else:
            pytest.fail("the answer never started streaming")
        resumed = await client.get("/api/chat/live/stream")
        sent = sse_events(await sending)
        assert sse_events(resumed) == sent == demo.first_turn_chunks()
        assert "\nid: " in "\n" + resumed.text  # every resumed event carries its cursor

        # A cursor resumes after it, even once the stream has closed.
        cursors = [line[4:] for line in resumed.text.split("\n") if line.startswith("id: ")]
        rest = await client.get("/api/chat/live/stream", params={"after": cursors[4]})
        assert sse_events(rest) == sent[5:]
        assert (await client.get("/api/chat/live/stream")).status_code == 204


async def test_quiet_streams_send_keep_alive_comments(sqlite_store: ConversationStore) -> None:
    """While nothing arrives, both the send and the resume answer send SSE comments, then go on."""
    responder = ScriptedResponder([text_turn("a1", "Slow.")], delay=0.15)
    app = create_app(sqlite_store, responder=responder, keepalive_seconds=0.05)
    async with client_of(app) as client:
        sent = await client.post("/api/chat", json=send_body("k", [user("u1", "hi")]))
        assert ": keep-alive\n\n" in sent.text
        assert sse_events(sent) == text_turn("a1", "Slow.")

        sqlite_store.append_message("k", user("u2", "more"))
        stream = sqlite_store.open_stream("k")

        def write_slowly() -> None:
            for chunk in text_turn("a2", "Later."):
                time.sleep(0.12)
                stream.append(chunk)
            stream.close()

        writer = asyncio.get_running_loop().run_in_executor(None, write_slowly)
        resumed = await client.get("/api/chat/k/stream")
        await writer
        assert ": keep-alive\n\n" in resumed.text
        assert sse_events(resumed) == text_turn("a2", "Later.")


@pytest.mark.parametrize("first_turn", [True, False], ids=["new chat", "next turn"])
async def test_a_sent_message_is_stored_with_its_answers_stream_never_alone(
    durable_backend: Backend, first_turn: bool
) -> None:
    """A user's new message and the open of its answer's stream are one transaction.

    Another server (another store on the same database) resuming the chat
    can then never find the message without a stream: it answered 204 for
    an answer about to stream when it read between the two (seen with two
    workers under load). Checked at the store's real recorder, on SQLite and
    PostgreSQL, for a chat's first turn and a later one.
    """
    store = durable_backend.open()
    app = create_app(
        store, responder=ScriptedResponder([text_turn("a1", "one"), text_turn("a2", "two")])
    )
    first = user("u1", "hi")
    async with client_of(app) as client:
        if not first_turn:
            assert (await client.post("/api/chat", json=send_body("c", [first]))).status_code == 200
        sent = [first] if first_turn else [first, *store.messages("c")[1:], user("u2", "again")]
        with recorded_inserts(store, lambda events: [event.topic for event in events]) as inserts:
            response = await client.post("/api/chat", json=send_body("c", sent))
    assert response.status_code == 200
    with_message = [topics for topics in inserts if any("MessageAppended" in t for t in topics)]
    assert len(with_message) == 1, inserts
    assert any("StreamOpened" in topic for topic in with_message[0]), inserts
    other = durable_backend.other_store(store)
    assert [m["role"] for m in other.messages("c")] == ["user", "assistant"] * (
        1 if first_turn else 2
    )
