"""A responder that pauses mid-answer: what it yielded before the pause is stored (and sent) at once.

Chunks yielded while an earlier batch was being stored used to wait for the
responder's next chunk, so a model that paused (thinking, a slow tool) hid its
last words from the log, from resumes and from every page following it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from starlette.concurrency import run_in_threadpool

from chatledger import ConversationStore
from chatledger.adapters.http.app import create_app
from chatledger.adapters.responders.scripted import ResponderRequest

pytestmark = pytest.mark.anyio


class PausingResponder:
    """Streams a few chunks quickly, then waits for ``go`` before finishing."""

    actor = "agent:pausing"

    def __init__(self) -> None:
        self.go = asyncio.Event()

    async def respond(self, request: ResponderRequest) -> AsyncIterator[dict[str, Any]]:
        yield {"type": "start"}
        yield {"type": "start-step"}
        yield {"type": "text-start", "id": "t1"}
        for word in ("Thinking", " about", " it"):
            yield {"type": "text-delta", "id": "t1", "delta": word}
        await self.go.wait()
        yield {"type": "text-delta", "id": "t1", "delta": ": done."}
        yield {"type": "text-end", "id": "t1"}
        yield {"type": "finish-step"}
        yield {"type": "finish", "finishReason": "stop"}


def _text(store: ConversationStore, chat: str) -> str:
    try:
        messages = store.messages(chat)
    except Exception:
        return ""
    parts = [p for m in messages if m["role"] == "assistant" for p in m["parts"]]
    return "".join(p.get("text", "") for p in parts if p["type"] == "text")


async def test_chunks_before_a_pause_reach_the_log_during_the_pause(
    sqlite_store: ConversationStore,
) -> None:
    responder = PausingResponder()
    app = create_app(sqlite_store, responder=responder, continuation_poll_seconds=None)
    body = {
        "id": "paused",
        "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "hi"}]}],
    }
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
        sending = asyncio.create_task(client.post("/api/chat", json=body))
        deadline = asyncio.get_running_loop().time() + 10
        while "Thinking about it" not in await run_in_threadpool(_text, sqlite_store, "paused"):
            assert asyncio.get_running_loop().time() < deadline, "the paused words never got stored"
            assert not sending.done()
            await asyncio.sleep(0.02)  # polling the log while the responder is held
        assert not sending.done()  # still paused: the words were stored during the pause
        responder.go.set()
        response = await sending
    assert response.status_code == 200
    assert _text(sqlite_store, "paused") == "Thinking about it: done."
