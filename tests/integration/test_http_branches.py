"""Branches and forks over HTTP: list a message's branches, switch them (audited), read a path,
fork; the useChat server answers on the active path. SQLite and PostgreSQL, AI SDK 6 and 7."""

from __future__ import annotations

import pytest

from chatledger.adapters.http.app import create_app
from chatledger.adapters.responders.scripted import ScriptedResponder
from tests.integration.conftest import Backend
from tests.integration.http_support import (
    client_of,
    error_of,
    send_body,
    sse_events,
    text_turn,
    user,
)

pytestmark = pytest.mark.anyio


def _texts(messages: list[dict]) -> list[str]:  # type: ignore[type-arg]
    return [p["text"] for m in messages for p in m["parts"] if p["type"] == "text"]


@pytest.mark.parametrize("ai_sdk", [6, 7])
async def test_branches_over_http(durable_backend: Backend, ai_sdk: int) -> None:
    store = durable_backend.open(ai_sdk=ai_sdk)
    turns = [text_turn("a1", "one"), text_turn("a2", "two"), text_turn("a3", "three")]
    app = create_app(store, responder=ScriptedResponder(turns))
    chat = "c/1"
    async with client_of(app) as client:
        sse_events(await client.post("/api/chat", json=send_body(chat, [user("u1", "hi")])))
        shown = (await client.get(f"/api/chats/{chat}/messages")).json()["messages"]
        regenerate = send_body(chat, shown, trigger="regenerate-message", messageId="a1")
        sse_events(await client.post("/api/chat", json=regenerate))

        listed = (await client.get(f"/api/chats/{chat}/branches")).json()["messages"]
        assert [(m["key"], m["index"], m["total"]) for m in listed] == [("u1", 1, 1), ("a2", 2, 2)]
        one = (await client.get(f"/api/chats/{chat}/branches", params={"message": "a1"})).json()
        assert [b["key"] for b in one["branches"]] == ["a1", "a2"]
        path = (await client.get(f"/api/chats/{chat}/messages", params={"leaf": "a1"})).json()
        assert _texts(path["messages"]) == ["hi", "one"]

        switched = await client.post(
            f"/api/chats/{chat}/branches", json={"to": "a1", "reason": "the first was better"}
        )
        assert switched.status_code == 200, switched.text
        body = switched.json()
        assert (body["switched"], body["leaf"]) == (True, "a1")
        assert _texts(body["messages"]) == ["hi", "one"]
        audit = await client.get(f"/api/chats/{chat}/history", params={"kind": "branch-switched"})
        entry = audit.json()["entries"][0]
        assert entry["actor"].startswith("http-client:")
        assert entry["details"]["reason"] == "the first was better"

        # The useChat server answers on the active path: the next turn follows a1.
        follow = [*body["messages"], user("u2", "more")]
        sse_events(await client.post("/api/chat", json=send_body(chat, follow)))
        assert _texts(store.messages(chat)) == ["hi", "one", "more", "three"]

        # Bad input: a JSON error naming what was wrong; nothing recorded.
        version = store.version(chat)
        error_of(
            await client.post(f"/api/chats/{chat}/branches", json={"to": "nope"}),
            422,
            "InvalidMessageError",
        )
        error_of(
            await client.post(f"/api/chats/{chat}/branches", json={}), 422, "InvalidRequestError"
        )
        assert store.version(chat) == version

        forked = await client.post(
            f"/api/chats/{chat}/forks", json={"chatId": "c/2", "leaf": "a2", "reason": "explore"}
        )
        assert forked.status_code == 201, forked.text
        assert forked.json() == {"id": "c/2", "origin": chat, "leaf": "a2"}
        assert _texts((await client.get("/api/chats/c/2/messages")).json()["messages"]) == [
            "hi",
            "two",
        ]
        again = await client.post(f"/api/chats/{chat}/forks", json={"chatId": "c/2"})
        error_of(again, 409, "ConversationExistsError")

        # While an answer streams, the path cannot change under it.
        store.append_message(chat, user("u3", "again"))
        store.open_stream(chat, message_id="a9")
        busy = await client.post(f"/api/chats/{chat}/branches", json={"to": "a2"})
        error_of(busy, 409, "StreamAlreadyOpenError")
