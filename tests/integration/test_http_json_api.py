"""The JSON endpoints, the error mapping (``http/errors.py``), request reading
(``http/requests.py``) and the OpenAPI description (``http/openapi.py``).
"""

from __future__ import annotations

import json
from urllib.parse import quote

import pytest
from starlette.routing import Route

from chatledger import ConversationStore
from chatledger.adapters.http.app import create_app, openapi_document
from chatledger.adapters.responders import demo
from chatledger.adapters.responders.scripted import (
    ScriptedResponder,
    demo_responder,
)
from tests.integration.http_support import (
    answer_approval,
    client_of,
    error_of,
    send_body,
    sse_events,
    text_turn,
    user,
)

pytestmark = pytest.mark.anyio


async def test_json_endpoints_and_error_mapping(sqlite_store: ConversationStore) -> None:
    """Model messages, approvals, tool outputs; chatledger errors as status codes with typed JSON."""
    app = create_app(sqlite_store, responder=demo_responder())
    async with client_of(app) as client:
        error_of(await client.get("/api/chats/nope/messages"), 404, "ConversationNotFoundError")
        error_of(await client.get("/api/nowhere"), 404, "NotFoundError")
        error_of(await client.get("/api/chat"), 405, "MethodNotAllowedError")
        error_of(await client.get("/api/chat/nope/stream"), 404, "ConversationNotFoundError")
        error_of(
            await client.post(
                "/api/chat", content=b"{not json", headers={"content-type": "application/json"}
            ),
            400,
            "InvalidJSONError",
        )
        error_of(await client.post("/api/chat", json={"id": "x"}), 422, "InvalidRequestError")
        error_of(
            await client.post("/api/chat", json=send_body("x", [demo.USER_MESSAGE], trigger="go")),
            422,
            "InvalidRequestError",
        )
        bad_message = {"id": "u1", "role": "user", "parts": "not a list"}
        error_of(
            await client.post("/api/chat", json=send_body("x", [bad_message])),
            422,
            "InvalidMessageError",
        )

        sse_events(await client.post("/api/chat", json=send_body("j", [demo.USER_MESSAGE])))
        # A paused turn: the providers' formats refuse it unless asked to omit the call.
        paused = await client.get("/api/chats/j/model-messages", params={"format": "anthropic"})
        error_of(paused, 409, "UnansweredToolCallError")
        omitted = await client.get(
            "/api/chats/j/model-messages", params={"format": "anthropic", "unanswered": "omit"}
        )
        # Anthropic's system prompt and messages, side by side (not nested in "messages").
        anthropic = sqlite_store.model_messages("j", "anthropic", unanswered="omit")
        assert isinstance(anthropic, dict)
        assert omitted.json() == {"format": "anthropic", **anthropic}
        assert isinstance(omitted.json()["messages"], list)
        error_of(
            await client.get("/api/chats/j/model-messages", params={"format": "cobol"}),
            422,
            "InvalidRequestError",
        )
        error_of(
            await client.get("/api/chats/j/history", params={"kind": "gossip"}),
            422,
            "InvalidRequestError",
        )
        # Nothing to continue while the call awaits its approval.
        assistant = sqlite_store.messages("j")[-1]
        body = send_body("j", [demo.USER_MESSAGE, assistant], messageId=demo.MESSAGE_ID)
        error_of(await client.post("/api/chat", json=body), 409, "NothingToContinueError")
        # Tool outputs: unknown call, not ready, bad body.
        error_of(
            await client.post(
                "/api/chats/j/tool-outputs", json={"toolCallId": "ghost", "output": 1}
            ),
            404,
            "UnknownToolCallError",
        )
        error_of(
            await client.post("/api/chats/j/tool-outputs", json={"toolCallId": "x"}),
            422,
            "InvalidRequestError",
        )
        approve = {"approvalId": demo.APPROVAL_ID, "approved": True, "autoContinue": False}
        first = await client.post("/api/chats/j/approvals", json=approve)
        assert first.json()["changed"] is True and first.json()["state"] == "approval-responded"
        again = await client.post("/api/chats/j/approvals", json=approve)
        assert again.json()["changed"] is False
        error_of(
            await client.post("/api/chats/j/approvals", json={**approve, "approved": False}),
            409,
            "ApprovalConflictError",
        )
        # A contradicting answer inside messages is refused the same way.
        denied = answer_approval(assistant, demo.APPROVAL_ID, False, "no")
        body = send_body("j", [demo.USER_MESSAGE, denied], messageId=demo.MESSAGE_ID)
        error_of(await client.post("/api/chat", json=body), 409, "ApprovalConflictError")
        # The approved call ran on the client: its output, then the continuation.
        output = await client.post(
            "/api/chats/j/tool-outputs",
            json={
                "toolCallId": demo.TOOL_CALL_ID,
                "output": {"deleted": 12},
                "autoContinue": False,
            },
        )
        assert output.json() == {
            "toolCallId": demo.TOOL_CALL_ID,
            "changed": True,
            "state": "output-available",
            "continuationRequested": False,
        }
        assert (await client.get("/api/chats/j/status")).json()["status"] == "ready-to-continue"
        assert (await client.get("/api/approvals")).json() == {"approvals": [], "automatic": []}
        ai_sdk = await client.get("/api/chats/j/model-messages")
        assert ai_sdk.json()["messages"] == sqlite_store.model_messages("j")
        error_of(
            await client.get("/api/chats/j/messages", params={"atVersion": "x"}),
            422,
            "InvalidRequestError",
        )


async def test_chat_ids_with_slashes_and_body_limit(sqlite_store: ConversationStore) -> None:
    """Any chat id works in the paths (percent-encoded, as the SDK does); huge bodies get 413."""
    app = create_app(
        sqlite_store, responder=ScriptedResponder([text_turn("a1", "Hi.")]), max_body_bytes=5000
    )
    chat = "team/a b?c"
    async with client_of(app) as client:
        sse_events(await client.post("/api/chat", json=send_body(chat, [user("u1", "hi")])))
        path = quote(chat, safe="")
        shown = (await client.get(f"/api/chats/{path}/messages")).json()
        assert shown == {"id": chat, "messages": sqlite_store.messages(chat)}
        assert (await client.get(f"/api/chat/{path}/stream")).status_code == 204
        huge = send_body(chat, [user("u2", "x" * 6000)])
        error_of(await client.post("/api/chat", json=huge), 413, "RequestTooLargeError")


async def test_openapi_lists_every_route(sqlite_store: ConversationStore) -> None:
    """``GET /openapi.json`` describes each route and method of the app."""
    app = create_app(sqlite_store, responder=ScriptedResponder([]))
    async with client_of(app) as client:
        document = (await client.get("/openapi.json")).json()
    expected = openapi_document(app.state.chatledger.limits, authenticated=False)
    assert document == json.loads(json.dumps(expected))
    assert document["openapi"].startswith("3.")
    routes = [route for route in app.routes if isinstance(route, Route)]
    described = {
        (path, method.upper()) for path, item in document["paths"].items() for method in item
    }
    served = {
        (route.path.replace("{chat_id:path}", "{id}").replace(":path}", "}"), method)
        for route in routes
        for method in route.methods or ()
        if method != "HEAD"
    }
    assert served == described
