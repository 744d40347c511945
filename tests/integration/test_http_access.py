"""Who may call the app (``http/app.py``): tenants by bearer token, browser origins."""

from __future__ import annotations

import json
from typing import Any

import pytest

from chatledger import ConversationStore
from chatledger.adapters.http.app import create_app
from chatledger.adapters.http.auth import Identity, unauthorized
from chatledger.adapters.responders import demo
from chatledger.adapters.responders.scripted import (
    ScriptedResponder,
    demo_responder,
)
from chatledger.domain.errors import ConversationNotFoundError
from tests.integration.http_support import (
    client_of,
    error_of,
    send_body,
    sse_events,
    text_turn,
    user,
)

pytestmark = pytest.mark.anyio


async def test_tenants_are_isolated(sqlite_store: ConversationStore) -> None:
    """Bearer tokens map to tenants; one tenant never reads or writes another's conversation."""
    tokens = {"token-acme": "acme", "token-globex": "globex"}
    responder = ScriptedResponder([demo.first_turn_chunks(), text_turn("g1", "Hello globex.")])
    app = create_app(sqlite_store, responder=responder, tokens=tokens)
    chat = "shared-name"
    async with client_of(app) as anonymous:
        missing = await anonymous.get(f"/api/chats/{chat}/messages")
        error_of(missing, 401, "UnauthorizedError")
        assert missing.headers["www-authenticate"].startswith("Bearer")
        error_of(
            await anonymous.post("/api/chat", json=send_body(chat, [])), 401, "UnauthorizedError"
        )
        assert (await anonymous.get("/openapi.json")).status_code == 200
    async with client_of(app, "wrong") as stranger:
        error_of(await stranger.get("/api/approvals"), 401, "UnauthorizedError")

    async with client_of(app, "token-acme") as acme, client_of(app, "token-globex") as globex:
        sse_events(await acme.post("/api/chat", json=send_body(chat, [demo.USER_MESSAGE])))
        for path in ("messages", "status", "history", "model-messages"):
            error_of(
                await globex.get(f"/api/chats/{chat}/{path}"), 404, "ConversationNotFoundError"
            )
        error_of(await globex.get(f"/api/chat/{chat}/stream"), 404, "ConversationNotFoundError")
        deny = {"approvalId": demo.APPROVAL_ID, "approved": False}
        error_of(
            await globex.post(f"/api/chats/{chat}/approvals", json=deny),
            404,
            "ConversationNotFoundError",
        )
        error_of(
            await globex.post(
                f"/api/chats/{chat}/tool-outputs",
                json={"toolCallId": demo.TOOL_CALL_ID, "output": 1},
            ),
            404,
            "ConversationNotFoundError",
        )
        assert (await globex.get("/api/approvals")).json() == {"approvals": [], "automatic": []}
        assert len((await acme.get("/api/approvals")).json()["approvals"]) == 1

        # The same chat id for globex is a conversation of its own.
        sse_events(await globex.post("/api/chat", json=send_body(chat, [user("g-u1", "Hi")])))
        mine = (await globex.get(f"/api/chats/{chat}/messages")).json()["messages"]
        assert [m["id"] for m in mine] == ["g-u1", "g1"]
        theirs = (await acme.get(f"/api/chats/{chat}/messages")).json()["messages"]
        assert [m["id"] for m in theirs] == [demo.USER_MESSAGE["id"], demo.MESSAGE_ID]

    assert sqlite_store.messages(chat, tenant="acme") == theirs
    assert sqlite_store.status(chat, tenant="acme").status == "awaiting-approval"
    assert {r.tenant for r in responder.requests} == {"acme", "globex"}
    actors = {
        e.actor for e in sqlite_store.history(chat, tenant="acme", kinds=["message-appended"])
    }
    assert actors == {"http-client:acme"}


async def test_cors_lets_only_the_named_origins_in(sqlite_store: ConversationStore) -> None:
    """A browser front end on another origin may call the app when its origin is named."""
    app = create_app(
        sqlite_store,
        responder=ScriptedResponder([text_turn("a1", "Hi.")]),
        cors_origins=["http://localhost:3000"],
    )
    preflight = {
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type,authorization",
    }
    async with client_of(app) as client:
        allowed = await client.options(
            "/api/chat", headers={"origin": "http://localhost:3000", **preflight}
        )
        assert allowed.status_code == 200
        assert allowed.headers["access-control-allow-origin"] == "http://localhost:3000"
        refused = await client.options(
            "/api/chat", headers={"origin": "http://evil.test", **preflight}
        )
        assert refused.status_code == 403  # as its request would be (CORS' own 400 said less)
        assert refused.json()["error"]["type"] == "OriginNotAllowedError"
        answer = await client.post(
            "/api/chat",
            json=send_body("c", [user("u1", "hi")]),
            headers={"origin": "http://localhost:3000"},
        )
        assert answer.headers["access-control-allow-origin"] == "http://localhost:3000"
        assert "x-vercel-ai-ui-message-stream" in answer.headers["access-control-expose-headers"]
        assert [c["type"] for c in sse_events(answer)][-1] == "finish"


# -- a local server web pages cannot drive ------------------------------------------------

EVIL = "http://evil.test"


async def paused_demo(client: Any, chat: str) -> None:
    """Stream the demo turn up to its call awaiting approval."""
    sse_events(await client.post("/api/chat", json=send_body(chat, [demo.USER_MESSAGE])))


async def test_a_cross_site_text_plain_post_changes_nothing(
    sqlite_store: ConversationStore,
) -> None:
    """A page of another site may POST ``text/plain`` without a preflight: refused (415), nothing recorded."""
    app = create_app(sqlite_store, responder=demo_responder())
    deny = json.dumps({"approvalId": demo.APPROVAL_ID, "approved": True})
    as_form = {"content-type": "text/plain;charset=UTF-8"}
    async with client_of(app) as client:
        await paused_demo(client, "c")
        approve = await client.post("/api/chats/c/approvals", content=deny, headers=as_form)
        error_of(approve, 415, "UnsupportedMediaTypeError")
        start = json.dumps(send_body("attacker", [user("u1", "delete everything")]))
        error_of(
            await client.post("/api/chat", content=start, headers=as_form),
            415,
            "UnsupportedMediaTypeError",
        )
    assert sqlite_store.status("c").status == "awaiting-approval"
    with pytest.raises(ConversationNotFoundError):
        sqlite_store.status("attacker")


async def test_pages_of_other_origins_are_refused(sqlite_store: ConversationStore) -> None:
    """A request carrying a foreign ``Origin`` is refused (403) whatever its content type."""
    app = create_app(
        sqlite_store, responder=demo_responder(), cors_origins=["http://localhost:3000"]
    )
    approve = {"approvalId": demo.APPROVAL_ID, "approved": True}
    async with client_of(app) as client:
        await paused_demo(client, "c")
        for origin in (EVIL, "null", "http://localhost:3001"):
            refused = await client.post(
                "/api/chats/c/approvals", json=approve, headers={"origin": origin}
            )
            error_of(refused, 403, "OriginNotAllowedError")
            read = await client.get("/api/approvals", headers={"origin": origin})
            error_of(read, 403, "OriginNotAllowedError")
        assert sqlite_store.status("c").status == "awaiting-approval"
        # The app's own pages and the named origin are let in.
        for origin in ("http://localhost", "http://localhost:3000"):
            shown = await client.get("/api/approvals", headers={"origin": origin})
            assert shown.status_code == 200, shown.text


async def test_unknown_host_names_are_refused(sqlite_store: ConversationStore) -> None:
    """A DNS-rebinding page reaches 127.0.0.1 under its own name: refused (400) unless configured."""
    app = create_app(sqlite_store, responder=demo_responder())
    async with client_of(app) as client:
        await paused_demo(client, "c")
        for host in ("evil.test", "evil.test:8000", "localhost.evil.test"):
            read = await client.get("/api/approvals", headers={"host": host})
            error_of(read, 400, "HostNotAllowedError")
        for host in ("localhost:8000", "127.0.0.1:8000", "[::1]:8000"):
            assert (await client.get("/api/approvals", headers={"host": host})).status_code == 200
    named = create_app(sqlite_store, responder=demo_responder(), allowed_hosts=["chat.example.com"])
    async with client_of(named) as client:
        assert (await client.get("/api/approvals", headers={"host": "chat.example.com"})).json()[
            "approvals"
        ]
        error_of(await client.get("/api/approvals"), 400, "HostNotAllowedError")


# -- who approved -----------------------------------------------------------------------------


async def test_the_user_of_a_token_is_the_recorded_actor(sqlite_store: ConversationStore) -> None:
    """``TOKEN=TENANT:USER``: the audit names the person who sent, approved or denied."""
    tokens = {"t-alice": "acme:alice", "t-bob": "acme:bob", "t-service": "acme"}
    app = create_app(sqlite_store, responder=demo_responder(), tokens=tokens)
    deny = {"approvalId": demo.APPROVAL_ID, "approved": False, "reason": "not today"}
    async with client_of(app, "t-alice") as alice, client_of(app, "t-bob") as bob:
        await paused_demo(alice, "c")
        assert (await bob.post("/api/chats/c/approvals", json=deny)).status_code == 200
    actors = {e.kind: e.actor for e in sqlite_store.history("c", tenant="acme")}
    assert actors["message-appended"] == "alice"
    assert actors["approval-responded"] == "bob"
    async with client_of(app, "t-service") as service:
        sse_events(await service.post("/api/chat", json=send_body("d", [user("u1", "hi")])))
    (appended,) = sqlite_store.history("d", tenant="acme", kinds=["message-appended"])
    assert appended.actor == "http-client:acme"  # a token without a user names its tenant


async def test_a_custom_authentication_hook_gives_tenant_and_user(
    sqlite_store: ConversationStore,
) -> None:
    """``authenticate`` (e.g. a session cookie) yields the identity; ``unauthorized()`` refuses."""

    def from_header(request: Any) -> Identity:
        name = request.headers.get("x-user")
        if not name:
            raise unauthorized()
        return Identity("team", name)

    app = create_app(sqlite_store, responder=demo_responder(), authenticate=from_header)
    async with client_of(app) as client:
        error_of(await client.get("/api/approvals"), 401, "UnauthorizedError")
        body = send_body("c", [demo.USER_MESSAGE])
        sse_events(await client.post("/api/chat", json=body, headers={"x-user": "carol"}))
    (appended,) = sqlite_store.history("c", tenant="team", kinds=["message-appended"])
    assert appended.actor == "carol"
