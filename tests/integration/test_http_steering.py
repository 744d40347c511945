"""``POST /api/chat`` while an answer streams (``store/turns/steering.py``): AI SDK 7 steering over HTTP.

The running answer is written by another store on the same database (as by
another server process); the app learns of its end from the log. The request
is made straight through ASGI so the test sees the response start (the
message is recorded by then) before the running answer goes on.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from starlette.applications import Starlette

from chatledger.adapters.http.app import create_app
from chatledger.adapters.responders.scripted import ScriptedResponder
from tests.integration.conftest import Backend
from tests.integration.http_support import client_of, error_of, send_body, text_turn, user

pytestmark = pytest.mark.anyio


class _Post:
    """One POST through the app's ASGI interface: its status once it starts, its body at the end."""

    def __init__(self, app: Starlette, path: str, body: dict[str, Any]) -> None:
        self.started = asyncio.Event()
        self.status: int | None = None
        self.chunks: list[bytes] = []
        self.task = asyncio.ensure_future(self._run(app, path, json.dumps(body).encode()))

    async def _run(self, app: Starlette, path: str, payload: bytes) -> None:
        sent = False

        async def receive() -> dict[str, Any]:
            nonlocal sent
            if sent:
                await asyncio.Event().wait()  # no disconnect: the client stays
            sent = True
            return {"type": "http.request", "body": payload, "more_body": False}

        async def send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                self.status = message["status"]
                self.started.set()
            elif message["type"] == "http.response.body":
                self.chunks.append(message.get("body", b""))

        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": "POST",
            "scheme": "http",
            "path": path,
            "raw_path": path.encode(),
            "query_string": b"",
            "root_path": "",
            "headers": [(b"host", b"localhost"), (b"content-type", b"application/json")],
            "client": ("127.0.0.1", 1234),
            "server": ("localhost", 80),
        }
        await app(scope, receive, send)

    async def events(self) -> list[dict[str, Any]]:
        """The answer's chunks, once it ended (checked to end with ``[DONE]``)."""
        await asyncio.wait_for(self.task, 60)
        text = b"".join(self.chunks).decode()
        data = [
            line.removeprefix("data: ")
            for event in text.split("\n\n")
            for line in event.split("\n")
            if line.startswith("data: ")
        ]
        assert data and data[-1] == "[DONE]", text
        return [json.loads(item) for item in data[:-1]]


STEER = user("u2", "and Rome?")


def _running(writer: Any, chat: str) -> Any:
    """Another writer's answer to u1, open after its first text (no finish yet)."""
    stream = writer.open_stream(chat, actor="agent:elsewhere")
    for chunk in text_turn("a1", "Paris is sunny.")[:-2]:
        stream.append(chunk)
    stream.flush()
    return stream


async def test_a_message_the_answer_does_not_take_gets_its_own_answer_after_it(
    durable_backend: Backend,
) -> None:
    """Recorded as steering at once; the answer ends without it: it is the next turn, answered."""
    store = durable_backend.open()
    store.start_conversation("steer", ai_sdk=7)
    store.append_message("steer", user("u1", "weather in Paris?"))
    app = create_app(store, responder=ScriptedResponder([text_turn("a2", "Rome is rainy.")]))
    writer = durable_backend.other_store(store)
    stream = _running(writer, "steer")
    client_view = [user("u1", "weather in Paris?"), {"id": "a1", "role": "assistant", "parts": []}]
    post = _Post(app, "/api/chat", send_body("steer", [*client_view, STEER]))
    await asyncio.wait_for(post.started.wait(), 30)
    assert post.status == 200
    assert store.steering("steer") == [STEER]
    [queued] = store.history("steer", kinds=["steering-queued"])
    assert queued.actor == f"http-client:{store.tenant}"
    assert not post.task.done()  # it waits for the running answer
    await asyncio.to_thread(stream.append, {"type": "finish-step"})
    await asyncio.to_thread(stream.close)
    events = await post.events()
    stored = store.messages("steer")
    assert [(m["id"], m["role"]) for m in stored] == [
        ("u1", "user"),
        ("a1", "assistant"),
        ("u2", "user"),
        (events[0]["messageId"], "assistant"),
    ]
    assert stored[-1]["parts"][-1]["text"] == "Rome is rainy."
    assert [e["type"] for e in events] == [c["type"] for c in text_turn("a2", "")]
    assert store.steering("steer") == []


async def test_a_message_the_running_answer_takes_gets_no_second_answer(
    durable_backend: Backend,
) -> None:
    """The answer takes it at a step boundary (a ``steering-message`` part): the request's answer is empty."""
    store = durable_backend.open()
    store.start_conversation("taken", ai_sdk=7)
    store.append_message("taken", user("u1", "weather in Paris?"))
    responder = ScriptedResponder([text_turn("never", "not asked")])
    app = create_app(store, responder=responder)
    writer = durable_backend.other_store(store)
    stream = _running(writer, "taken")
    post = _Post(app, "/api/chat", send_body("taken", [user("u1", "weather in Paris?"), STEER]))
    await asyncio.wait_for(post.started.wait(), 30)
    steering_chunk = {"type": "steering-message", "id": "u2", "parts": STEER["parts"]}
    for chunk in [{"type": "finish-step"}, steering_chunk, *text_turn("a1", "Rome: rain.")[1:]]:
        await asyncio.to_thread(stream.append, chunk)
    await asyncio.to_thread(stream.close)
    assert await post.events() == []
    stored = store.messages("taken")
    assert [m["id"] for m in stored] == ["u1", "a1"]
    assert {"type": "steering-message", "id": "u2", "parts": STEER["parts"]} in stored[1]["parts"]
    assert responder.remaining == 1


async def test_only_a_new_user_message_of_a_v7_conversation_is_taken_mid_answer(
    durable_backend: Backend,
) -> None:
    """An edit mid-answer, or any send to an AI SDK 6 conversation mid-answer, is refused: 409."""
    store = durable_backend.open()
    for chat, version in (("v7", 7), ("v6", 6)):
        store.start_conversation(chat, ai_sdk=version)
        store.append_message(chat, user("u1", "hi"))
    writer = durable_backend.other_store(store)
    streams = [_running(writer, "v7"), _running(writer, "v6")]
    app = create_app(store, responder=ScriptedResponder([]))
    async with client_of(app) as client:
        edit = await client.post("/api/chat", json=send_body("v7", [user("u1", "edited")]))
        error_of(edit, 409, "StreamAlreadyOpenError")
        v6 = await client.post("/api/chat", json=send_body("v6", [user("u1", "hi"), STEER]))
        error_of(v6, 409, "StreamAlreadyOpenError")
    for stream in streams:
        stream.close()
    assert store.steering("v7") == [] and store.steering("v6") == []
    assert [m["id"] for m in store.messages("v6")] == ["u1", "a1"]
