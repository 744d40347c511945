"""``POST /api/chat`` while an answer streams, under the policies ``drop`` and ``latest``.

``drop``: the running answer is written by another store (as by another
server process) and the send is refused with 409. ``latest``: the app's own
runner writes the running answer (a responder that hangs after its first
text); the new send stops it through the runner and is answered at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from chatledger.adapters.http.app import create_app
from chatledger.adapters.responders.scripted import ScriptedResponder
from chatledger.adapters.store.turns.service import ResponderRequest
from chatledger.domain.concurrency import parse_concurrency
from tests.integration.conftest import Backend
from tests.integration.http_support import client_of, error_of, send_body, text_turn, user
from tests.integration.test_http_steering import _Post, _running

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("ai_sdk", [6, 7])
async def test_drop_answers_409_and_the_audit_shows_it(
    durable_backend: Backend, ai_sdk: int
) -> None:
    store = durable_backend.open()
    store.start_conversation("c", ai_sdk=ai_sdk)
    store.set_metadata("c", {"messageConcurrency": "drop"}, actor="user:alice")
    store.append_message("c", user("u1", "hi"))
    stream = _running(durable_backend.other_store(store), "c")
    app = create_app(store, responder=ScriptedResponder([]))
    async with client_of(app) as client:
        seen = [user("u1", "hi"), {"id": "a1", "role": "assistant", "parts": []}]
        sent = await client.post("/api/chat", json=send_body("c", [*seen, user("u2", "x")]))
        assert "'drop'" in error_of(sent, 409, "MessageDroppedError")
        history = await client.get("/api/chats/c/history")
        page = await client.get("/ui/conversation", params={"id": "c"})
    stream.close()
    assert page.status_code == 200 and "policy drop: dropped" in page.text  # the audit on the page
    assert [m["id"] for m in store.messages("c")] == ["u1", "a1"]
    [entry] = store.history("c", kinds=["mid-answer-message"])
    assert entry.details["outcome"] == "dropped" and entry.actor.startswith("http-client:")
    assert "mid-answer-message" in history.text


class Hanging:
    """Answers the first request with some text and then nothing (until stopped); the next ones fully."""

    actor = "agent:bot"

    def __init__(self) -> None:
        self.asked: list[ResponderRequest] = []

    async def respond(self, request: ResponderRequest) -> AsyncIterator[dict[str, Any]]:
        self.asked.append(request)
        if len(self.asked) == 1:
            for chunk in text_turn("a1", "Paris is")[:-3]:
                yield chunk
            await asyncio.Event().wait()  # until the runner cancels it
        for chunk in text_turn("a2", "Rome is rainy."):
            yield chunk


@pytest.mark.parametrize("ai_sdk", [6, 7])
async def test_latest_stops_the_answer_this_server_writes_and_answers_the_newest(
    durable_backend: Backend, ai_sdk: int
) -> None:
    store = durable_backend.open()
    store.turns.mid_answer.default = parse_concurrency("latest")  # as serve --message-concurrency
    responder = Hanging()
    app = create_app(store, responder=responder)
    first = _Post(app, "/api/chat", send_body("c", [user("u1", "weather in Paris?")]))
    await asyncio.wait_for(first.started.wait(), 30)
    assert store.status("c").status == "streaming"
    async with client_of(app) as client:
        second = await client.post(
            "/api/chat", json=send_body("c", [user("u1", "weather in Paris?"), user("u2", "Rome?")])
        )
    assert second.status_code == 200 and "Rome is rainy." in second.text
    await asyncio.wait_for(first.task, 30)  # the stopped answer's response ended
    stored = store.messages("c")
    assert [m["role"] for m in stored] == ["user", "assistant", "user", "assistant"]
    assert stored[2]["id"] == "u2" and stored[3]["parts"][-1]["text"] == "Rome is rainy."
    [closed, _] = store.history("c", kinds=["stream-closed"])
    assert closed.details["outcome"] == "aborted"
    [entry] = store.history("c", kinds=["mid-answer-message"])
    assert entry.details["policy"] == "latest" and entry.details["messageIds"] == ["u2"]
    assert responder.asked[1].messages[-1]["id"] == "u2"
