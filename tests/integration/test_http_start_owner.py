"""``POST /api/chats`` with an ``owner``: a conversation an external server writes is its own.

The app runs its continuations (as ``chatledger serve`` does), yet an approval
of a conversation started as ``client:node`` is not answered by its responder:
the request waits for ``client:node``, whose claim takes it.
"""

from __future__ import annotations

import pytest

from chatledger import ConversationStore
from chatledger.adapters.http.app import create_app
from chatledger.adapters.responders.scripted import ScriptedResponder
from tests.integration.conftest import Backend
from tests.integration.http_support import client_of, error_of
from tests.integration.stream_in_support import SSE, body, text_answer
from tests.support.builders import user

pytestmark = pytest.mark.anyio

PAUSED = [
    *text_answer("a1", "Refunding")[:-2],
    {"type": "tool-input-available", "toolCallId": "call-1", "toolName": "refund", "input": {}},
    {"type": "tool-approval-request", "approvalId": "ap-1", "toolCallId": "call-1"},
    {"type": "finish-step"},
    {"type": "finish"},
]


async def test_an_owned_conversation_is_left_to_its_owner(durable_backend: Backend) -> None:
    """Started with ``owner``: the app's own continuations leave it; the owner's claim takes it."""
    durable_store = durable_backend.open()
    responder = ScriptedResponder([])
    app = create_app(durable_store, responder=responder, continuation_poll_seconds=0.05)
    async with client_of(app) as client:
        started = await client.post("/api/chats", json={"id": "c", "owner": "client:node"})
        assert started.status_code == 201, started.text
        await client.post("/api/chats/c/messages", json={"message": user("u1")})
        report = await client.post("/api/chats/c/answers", content=body(PAUSED), headers=SSE)
        assert report.json()["outcome"] == "finished"
        approved = await client.post(
            "/api/chats/c/approvals", json={"approvalId": "ap-1", "approved": True}
        )
        assert approved.json()["continuationRequested"] is True
        status = (await client.get("/api/chats/c/status")).json()
        assert (status["status"], status["owner"]) == ("ready-to-continue", "client:node")
        other = await client.post("/api/continuations/claim", json={"owner": "client:other"})
        assert other.status_code == 204
        mine = await client.post("/api/continuations/claim", json={"owner": "client:node"})
        assert mine.status_code == 200, mine.text
        assert (mine.json()["request"]["chatId"], mine.json()["request"]["owner"]) == (
            "c",
            "client:node",
        )
        again = await client.post("/api/chats", json={"id": "c", "owner": "client:else"})
        assert again.json() == {"id": "c", "created": False}
    assert responder.requests == []  # the app's responder never answered it
    assert durable_store.status("c").owner == "client:node"  # a second start keeps the owner
    (started_event,) = durable_store.history("c", kinds=["conversation-started"], full=True)
    assert started_event.details.get("owner") == "client:node"


async def test_without_an_owner_the_conversation_is_anyones(
    sqlite_store: ConversationStore,
) -> None:
    app = create_app(sqlite_store, responder=ScriptedResponder([]), run_continuations=False)
    async with client_of(app) as client:
        await client.post("/api/chats", json={"id": "c"})
    assert sqlite_store.status("c").owner == "any"


@pytest.mark.parametrize("owner", ["", " ", 7, None, "bad\x00name"])
async def test_a_bad_owner_is_refused_and_nothing_starts(
    sqlite_store: ConversationStore, owner: object
) -> None:
    app = create_app(sqlite_store, responder=ScriptedResponder([]), run_continuations=False)
    async with client_of(app) as client:
        refused = await client.post("/api/chats", json={"id": "c", "owner": owner})
        message = error_of(refused, 422, "InvalidRequestError")
        assert "'owner'" in message
        created = await client.post("/api/chats", json={"id": "c"})
        assert created.status_code == 201  # the refused start recorded nothing
