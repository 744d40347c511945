"""``GET /api/chats`` and the pages' fragments, in-process (the browser tests drive the real server)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
import pytest
from starlette.applications import Starlette

from chatledger import ConversationStore
from chatledger.adapters.http.app import create_app
from chatledger.adapters.http.pages import CLIP
from chatledger.adapters.responders.scripted import demo_responder
from chatledger.domain.limits import NAME_LIMIT
from tests.integration.conftest import Backend
from tests.integration.hitl_support import Call, paused_turn, user

pytestmark = pytest.mark.anyio

TOKENS = {"acme-token": "acme", "globex-token": "globex"}
XSS = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned=2">'


@asynccontextmanager
async def client_of(app: Starlette, token: str | None) -> AsyncIterator[httpx.AsyncClient]:
    headers = {"authorization": f"Bearer {token}"} if token else {}
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(
        transport=transport, base_url="http://localhost", headers=headers
    ) as client:
        yield client


def _seed(store: ConversationStore) -> None:
    paused_turn(store, "waiting", tenant="acme")
    store.start_conversation("evil", tenant="acme")
    store.append_message("evil", user("u1", XSS), tenant="acme")
    store.start_conversation("theirs", tenant="globex")
    store.append_message("theirs", user("u1", "globex only secret"), tenant="globex")


async def test_api_chats_is_tenant_scoped_searchable_and_paged(durable_backend: Backend) -> None:
    store = durable_backend.open()
    _seed(store)
    app = create_app(store, responder=demo_responder(), tokens=TOKENS)
    async with client_of(app, "acme-token") as acme, client_of(app, None) as anonymous:
        assert (await anonymous.get("/api/chats")).status_code == 401
        page = (await acme.get("/api/chats")).json()
        assert [row["id"] for row in page["conversations"]] == ["evil", "waiting"]
        waiting = page["conversations"][1]
        assert waiting["pendingApprovals"] == 1 and waiting["status"] == "awaiting-approval"
        found = (await acme.get("/api/chats", params={"q": "secret"})).json()
        assert found["conversations"] == []
        first = (await acme.get("/api/chats", params={"limit": 1})).json()
        rest = await acme.get("/api/chats", params={"limit": 1, "cursor": first["nextCursor"]})
        assert [row["id"] for row in rest.json()["conversations"]] == ["waiting"]
        status = (await acme.get("/api/chats", params={"status": "awaiting-approval"})).json()
        assert [row["id"] for row in status["conversations"]] == ["waiting"]
        bad = await acme.get("/api/chats", params={"status": "busy"})
        assert bad.status_code == 422 and "unknown status" in bad.json()["error"]["message"]
        bad = await acme.get("/api/chats", params={"updatedAfter": "yesterday"})
        assert bad.status_code == 422 and "updatedAfter" in bad.json()["error"]["message"]


async def test_fragments_escape_content_and_hide_other_tenants(
    sqlite_store: ConversationStore,
) -> None:
    _seed(sqlite_store)
    app = create_app(sqlite_store, responder=demo_responder(), tokens=TOKENS)
    async with client_of(app, "acme-token") as acme, client_of(app, None) as anonymous:
        shell = await anonymous.get("/")  # the shell needs no token; its content does
        assert shell.status_code == 200 and 'id="token-form"' in shell.text
        assert (await anonymous.get("/ui/list")).status_code == 401
        listing = await acme.get("/ui/list")
        assert "&lt;script&gt;" in listing.text and "<script>" not in listing.text
        view = await acme.get("/ui/conversation", params={"id": "evil"})
        assert view.status_code == 200
        assert "&lt;script&gt;window.__pwned" in view.text and "<script" not in view.text
        assert "onerror=" not in view.text.replace("onerror=&#34;", "")
        other = await acme.get("/ui/conversation", params={"id": "theirs"})
        assert other.status_code == 404
        past = await acme.get("/ui/conversation", params={"id": "waiting", "at": 2})
        assert 'data-message-id="u1"' in past.text and 'data-message-id="a1"' not in past.text
        assert (
            await acme.get("/ui/conversation", params={"id": "waiting", "at": 99})
        ).status_code == 422
        inbox = await acme.get("/ui/approvals")
        assert 'data-tool-call-id="call_del"' in inbox.text
        verify = await acme.get("/ui/verify", params={"id": "waiting"})
        assert "Verified." in verify.text
        assert (await acme.get("/static/htmx-2.0.11.min.js")).status_code == 200


async def test_pages_cut_long_names_visibly(sqlite_store: ConversationStore) -> None:
    """Names at the length limit (chat id, tool call id, tool name, actor) are shown cut, never whole."""
    longest = "c" * NAME_LIMIT
    call = Call("k" * NAME_LIMIT, "t" * NAME_LIMIT, {"path": "/x"}, approval_id="appr")
    paused_turn(sqlite_store, longest, [call])
    app = create_app(sqlite_store, responder=demo_responder())
    async with client_of(app, None) as client:
        pages = [
            (await client.get("/ui/list")).text,
            (await client.get("/ui/approvals")).text,
            (await client.get("/ui/conversation", params={"id": longest})).text,
            (await client.get("/conversation", params={"id": longest})).text,
        ]
    for html in pages:
        shown = re.sub(r'"[^"]*"', '""', html)  # attribute values keep the whole name
        assert "c" * (CLIP + 1) not in shown and "k" * (CLIP + 1) not in shown
        assert "t" * (CLIP + 1) not in shown
        assert f"({NAME_LIMIT} characters)" in shown
