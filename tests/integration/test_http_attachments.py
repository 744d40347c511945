"""Attachments by URL over HTTP: messages with links, the authenticated route, and links sent back."""

from __future__ import annotations

import base64
import os
from typing import Any

import pytest

from chatledger.adapters.http.app import create_app
from chatledger.adapters.http.auth import Identity, unauthorized
from chatledger.adapters.responders.scripted import ScriptedResponder
from chatledger.domain.attachments import blob_digest
from tests.integration.conftest import Backend
from tests.integration.http_support import client_of, error_of, send_body, text_turn, user
from tests.integration.test_shards import _one_chat_per_shard
from tests.integration.test_shards import three_databases as three_databases  # the fixture

pytestmark = pytest.mark.anyio

PNG = b"\x89PNG" + os.urandom(5000)
URL = f"data:image/png;base64,{base64.b64encode(PNG).decode()}"
PICTURE = {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "this?"},
           {"type": "file", "mediaType": "image/png", "url": URL}]}  # fmt: skip


def by_header(request: Any) -> Identity:
    tenant = request.headers.get("x-tenant")
    if not tenant:
        raise unauthorized()
    return Identity(tenant, "user:alice")


async def test_links_the_route_answers_to_its_tenant_only(durable_backend: Backend) -> None:
    store = durable_backend.open()
    store.start_conversation("pics/1", tenant="t1")
    store.append_message("pics/1", PICTURE, tenant="t1")
    app = create_app(store, responder=ScriptedResponder([text_turn("a2", "A cat.")]),
                     authenticate=by_header)  # fmt: skip
    mine = {"x-tenant": "t1"}
    async with client_of(app) as client:
        inline = (await client.get("/api/chats/pics/1/messages", headers=mine)).json()
        assert inline["messages"][0]["parts"][1]["url"] == URL  # as before, by default
        linked = (
            await client.get("/api/chats/pics/1/messages?attachments=url", headers=mine)
        ).json()
        link = linked["messages"][0]["parts"][1]["url"]
        assert link == f"/api/chats/pics%2F1/attachments/{blob_digest(PNG)}?type=image%2Fpng"
        got = await client.get(link, headers=mine)
        assert got.status_code == 200 and got.content == PNG
        assert got.headers["content-type"] == "image/png"
        assert got.headers["x-content-type-options"] == "nosniff"
        error_of(await client.get(link), 401, "UnauthorizedError")
        other = await client.get(link, headers={"x-tenant": "t2"})
        assert other.status_code == 404  # another tenant's chat of that name does not exist
        missing = await client.get(link.replace(blob_digest(PNG), "0" * 64), headers=mine)
        assert missing.status_code == 404
        error_of(await client.get("/api/chats/pics/1/attachments/xyz", headers=mine), 422,
                 "InvalidRequestError")  # fmt: skip
        html = await client.get(link.replace("image%2Fpng", "text%2Fhtml"), headers=mine)
        assert html.headers["content-type"] == "application/octet-stream"
        # The client sends its copy back, links and all, with a new message: a new turn, no edit.
        body = send_body("pics/1", [*linked["messages"], user("u2", "and this?")])
        sent = await client.post("/api/chat", json=body, headers=mine)
        assert sent.status_code == 200 and "A cat." in sent.text
    stored = store.messages("pics/1", tenant="t1")
    assert [m["id"] for m in stored][:2] == ["u1", "u2"] and stored[0]["parts"][1]["url"] == URL
    assert store.history("pics/1", tenant="t1", kinds=["messages-cut"]) == []


@pytest.mark.postgres
@pytest.mark.usefixtures("three_databases")
async def test_a_sharded_store_links_and_serves_each_chat_from_its_shard(
    request: pytest.FixtureRequest,
) -> None:
    from chatledger import ConversationStore

    store = ConversationStore.open(request.getfixturevalue("three_databases"))
    chats = _one_chat_per_shard("default", 3)
    for chat in chats:
        store.start_conversation(chat)
        store.append_message(chat, PICTURE)
    app = create_app(store, responder=ScriptedResponder([]))
    try:
        async with client_of(app) as client:
            for chat in chats:
                found = await client.get(f"/api/chats/{chat}/messages?attachments=url")
                link = found.json()["messages"][0]["parts"][1]["url"]
                assert link.startswith(f"/api/chats/{chat}/attachments/")
                assert (await client.get(link)).content == PNG
    finally:
        store.close()
