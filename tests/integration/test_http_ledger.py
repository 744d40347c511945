"""Compaction and usage over HTTP: the JSON routes, tenant-scoped, with 4xx for bad input."""

from __future__ import annotations

import pytest

from chatledger import ConversationStore
from chatledger.adapters.http.app import create_app
from chatledger.adapters.responders.scripted import ScriptedResponder
from tests.integration.http_support import client_of, send_body
from tests.integration.test_compaction import _talk

pytestmark = pytest.mark.anyio


async def test_compact_and_read_usage_over_http(store: ConversationStore) -> None:
    """POST a compaction, see it in model messages and GET; record and read usage."""
    _talk(store, "c", 7)
    app = create_app(store, responder=ScriptedResponder([]), tokens={"t": "default"})
    async with client_of(app, "t") as client:
        made = await client.post(
            "/api/chats/c/compactions",
            json={"fromMessageId": "u1", "toMessageId": "a2", "summary": "S", "reason": "long"},
        )
        assert made.status_code == 201, made.text
        assert made.json()["count"] == 4
        assert made.json()["compaction"]["messageIds"] == ["u1", "a1", "u2", "a2"]
        model = (await client.get("/api/chats/c/model-messages?format=openai-chat")).json()
        assert model["messages"][0] == {"role": "system", "content": "S"}
        listed = (await client.get("/api/chats/c/compactions")).json()["compactions"]
        assert (
            listed[0]["reason"] == "long"
            and listed[0]["actor"] == made.json()["compaction"]["actor"]
        )
        before = await client.get(f"/api/chats/c/compactions?atVersion={listed[0]['version'] - 1}")
        assert before.json()["compactions"] == []
        bad = await client.post(
            "/api/chats/c/compactions",
            json={"fromMessageId": "u1", "toMessageId": "a3", "summary": "S"},
        )
        assert bad.status_code == 422 and "latest message" in bad.text
        missing = await client.post("/api/chats/c/compactions", json={"fromMessageId": "u1"})
        assert missing.status_code == 422

        recorded = await client.post(
            "/api/chats/c/usage",
            json={"inputTokens": 12, "outputTokens": 3, "model": "gpt-4o", "step": 1,
                  "source": "openai-agents", "messageId": "a3"},
        )  # fmt: skip
        assert recorded.status_code == 201, recorded.text
        usage = (await client.get("/api/chats/c/usage")).json()
        assert usage["total"]["totalTokens"] == 15 and usage["total"]["models"] == ["gpt-4o"]
        assert usage["entries"][0]["source"] == "openai-agents"
        for body, says in (
            ({"inputTokens": -1}, "must not be negative"),
            ({"inputTokens": 1, "step": "two"}, "'step' must be a whole number"),
            ({"inputTokens": 1, "price": 3}, "unknown field"),
            ({"inputTokens": 1, "source": "bank"}, "unknown usage source"),
        ):
            refused = await client.post("/api/chats/c/usage", json=body)
            assert refused.status_code == 422 and says in refused.text, refused.text
        assert (await client.get("/api/chats/nope/usage")).status_code == 404


async def test_the_responder_of_a_use_chat_turn_reads_the_summary(store: ConversationStore) -> None:
    """POST /api/chat after a compaction: the responder is asked with the summary in place."""
    _talk(store, "c", 7)
    store.compact("c", from_message_id="u1", to_message_id="a2", summary="S", actor="user:alice")
    responder = ScriptedResponder([[
        {"type": "start"}, {"type": "text-start", "id": "t"},
        {"type": "text-delta", "id": "t", "delta": "ok"}, {"type": "text-end", "id": "t"},
        {"type": "finish"},
    ]])  # fmt: skip
    app = create_app(store, responder=responder, tokens={"t": "default"})
    ask = {"id": "u4", "role": "user", "parts": [{"type": "text", "text": "And Madrid?"}]}
    async with client_of(app, "t") as client:
        sent = await client.post("/api/chat", json=send_body("c", [*store.messages("c"), ask]))
        assert sent.status_code == 200, sent.text
    [request] = responder.requests
    assert [m["id"] for m in request.messages] == [
        f"compaction-{store.compactions('c')[0]['version']}",
        "u3",
        "a3",
        "u4",
    ]
    assert request.messages[0]["parts"] == [{"type": "text", "text": "S"}]
    assert [m["id"] for m in store.messages("c")][:4] == ["u1", "a1", "u2", "a2"]
