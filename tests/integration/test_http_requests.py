"""Bad requests get a named chatledger error, never a 500; each route bounds the work a body asks for."""

from __future__ import annotations

import json
from typing import Any

import pytest

from chatledger import ConversationStore
from chatledger.adapters.http.app import create_app
from chatledger.adapters.responders import demo
from chatledger.adapters.responders.scripted import demo_responder
from chatledger.domain.limits import NAME_LIMIT
from tests.integration.http_support import client_of, error_of, send_body, sse_events

pytestmark = pytest.mark.anyio

JSON = {"content-type": "application/json"}
USER = json.dumps(demo.USER_MESSAGE)

BAD_REQUESTS: list[tuple[str, str, str | None, int, str]] = [
    # (method, path, body, status, error type)
    (
        "POST",
        "/api/chat",
        '{"id":"c","messages":[],"x":' + "9" * 5000 + "}",
        422,
        "InvalidRequestError",
    ),
    (
        "POST",
        "/api/chat",
        '{"id":"c","messages":' + "[" * 2000 + "]" * 2000 + "}",
        422,
        "InvalidRequestError",
    ),
    (
        "POST",
        "/api/chat",
        '{"id":"c","messages":' + "[" * 200 + "]" * 200 + "}",
        422,
        "InvalidRequestError",
    ),
    (
        "POST",
        "/api/chats/c/tool-outputs",
        '{"toolCallId":"x","output":' + "1" * 4400 + "}",
        422,
        "InvalidRequestError",
    ),
    ("POST", "/api/chat", '{"id":"\\ud800","messages":[' + USER + "]}", 422, "InvalidInputError"),
    (
        "POST",
        "/api/chat",
        '{"id":"c","messages":[{"id":"u","role":"user","parts":"x"}]}',
        422,
        "InvalidMessageError",
    ),
    (
        "POST",
        "/api/chats/c/tool-outputs",
        '{"toolCallId":["x"],"output":1}',
        422,
        "InvalidRequestError",
    ),
    (
        "POST",
        "/api/chats/c/approvals",
        '{"toolCallId":"x","approved":true,"reason":5}',
        422,
        "InvalidRequestError",
    ),
    ("POST", "/api/chats/c/stop", "[1]", 422, "InvalidRequestError"),
    (
        "GET",
        "/api/chats/c/messages?atVersion=9223372036854775808",
        None,
        422,
        "InvalidRequestError",
    ),
    ("GET", "/api/chats/c/messages?atVersion=-5", None, 422, "InvalidRequestError"),
    ("GET", "/api/chats/c/history?after=9223372036854775808", None, 422, "InvalidRequestError"),
    ("GET", "/api/chats/c/history?limit=-1", None, 422, "InvalidRequestError"),
    ("GET", "/api/chats/c/history?limit=" + "9" * 30, None, 422, "InvalidRequestError"),
    ("GET", "/api/chats/c/model-messages?atVersion=1e3", None, 422, "InvalidRequestError"),
]


@pytest.mark.parametrize(("method", "path", "body", "status", "type_name"), BAD_REQUESTS)
async def test_bad_input_is_a_named_error_not_a_500(
    durable_backend: Any, method: str, path: str, body: str | None, status: int, type_name: str
) -> None:
    """Huge integers, deep nesting, lone surrogates, wrong types, out-of-range parameters."""
    store = durable_backend.open()
    app = create_app(store, responder=demo_responder())
    async with client_of(app) as client:
        sse_events(await client.post("/api/chat", json=send_body("c", [demo.USER_MESSAGE])))
        answer = await client.request(method, path, content=body, headers=JSON if body else {})
        error_of(answer, status, type_name)
        assert (await client.get("/api/chats/c/status")).json()["status"] == "awaiting-approval"


async def test_each_route_bounds_the_work_of_a_body(sqlite_store: ConversationStore) -> None:
    """Many tiny items, too many messages or parts, an action body that is too large: 413/422."""
    app = create_app(sqlite_store, responder=demo_responder(), max_body_bytes=40_000_000)
    async with client_of(app) as client:
        tiny_items = b'{"id":"c","messages":[' + b"0," * 15_000_000 + b"0]}"
        error_of(
            await client.post("/api/chat", content=tiny_items, headers=JSON),
            413,
            "RequestTooLargeError",
        )
        many = [{"id": f"m{i}", "role": "user"} for i in range(100_001)]
        error_of(
            await client.post("/api/chat", json=send_body("c", many)), 422, "InvalidRequestError"
        )
        parts = [{"type": "text", "text": ""}] * 10_001
        message = {"id": "u", "role": "user", "parts": parts}
        error_of(
            await client.post("/api/chat", json=send_body("c", [message])),
            422,
            "InvalidRequestError",
        )
        reason = "x" * 70_000
        approve = {"toolCallId": "x", "approved": False, "reason": reason}
        error_of(
            await client.post("/api/chats/c/approvals", json=approve),
            413,
            "RequestTooLargeError",
        )
    assert sqlite_store.operations.head() == 0


async def test_a_name_over_the_limit_is_a_422_naming_the_limit(
    sqlite_store: ConversationStore,
) -> None:
    """A 100,000-character chat id or message id is refused (422, the limit named); nothing is stored."""
    app = create_app(sqlite_store, responder=demo_responder())
    long = "x" * 100_000
    async with client_of(app) as client:
        message = error_of(
            await client.post("/api/chat", json=send_body(long, [demo.USER_MESSAGE])),
            422,
            "InvalidInputError",
        )
        assert str(NAME_LIMIT) in message and len(message) < 500
        named = {**demo.USER_MESSAGE, "id": long}
        message = error_of(
            await client.post("/api/chat", json=send_body("c", [named])),
            422,
            "InvalidMessageError",
        )
        assert str(NAME_LIMIT) in message and len(message) < 500
    assert sqlite_store.list_conversations().conversations == []
