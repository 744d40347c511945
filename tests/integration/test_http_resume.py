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
from tests.integration.http_support import client_of, send_body, sse_events, text_turn, user

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
