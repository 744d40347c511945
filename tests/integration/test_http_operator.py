"""The operator routes (``http/operator.py``): erase and export for operator tokens only, on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest

from chatledger.adapters.http.app import create_app
from chatledger.adapters.responders.scripted import demo_responder
from chatledger.domain.bundle import verify_bundle
from chatledger.domain.seal import SealKey
from tests.integration.conftest import Backend
from tests.integration.http_support import client_of, error_of, send_body, sse_events, user

pytestmark = pytest.mark.anyio

TOKENS = {"tok-acme": "acme:alice", "tok-globex": "globex:bob", "tok-ops": "*:olga"}
SEAL = SealKey.from_text("an operator secret of thirty-two bytes")


def _store(backend: Backend):  # type: ignore[no-untyped-def]
    store = backend.open()
    for tenant, chat in (("acme", "a1"), ("globex", "g1")):
        store.start_conversation(chat, tenant=tenant)
        store.append_message(chat, user("u1", f"secret of {tenant}"), tenant=tenant)
    return store


async def test_tenant_tokens_cannot_erase_or_export_any_chat(durable_backend: Backend) -> None:
    """403 for a tenant token on its own chat and on another tenant's; the chats stay readable."""
    store = _store(durable_backend)
    app = create_app(store, responder=demo_responder(), tokens=TOKENS)
    for token, tenant in (("tok-acme", "acme"), ("tok-globex", "globex")):
        async with client_of(app, token) as client:
            for chat, owner in (("a1", "acme"), ("g1", "globex")):
                body = {"reason": "mine now", "tenant": owner}
                error_of(
                    await client.post(f"/api/chat/{chat}/erase", json=body), 403, "ForbiddenError"
                )
                export = await client.get(f"/api/chat/{chat}/export", params={"tenant": owner})
                error_of(export, 403, "ForbiddenError")
            # another tenant's chat is unknown on the tenant routes
            other = "g1" if tenant == "acme" else "a1"
            error_of(
                await client.get(f"/api/chats/{other}/messages"), 404, "ConversationNotFoundError"
            )
    assert store.messages("a1", tenant="acme") and store.messages("g1", tenant="globex")


async def test_an_operator_erases_and_exports_across_tenants_and_nothing_else(
    durable_backend: Backend,
) -> None:
    """An operator token erases (as its user), exports a verifiable bundle; tenant routes refuse it."""
    store = _store(durable_backend)
    app = create_app(store, responder=demo_responder(), tokens=TOKENS)
    async with client_of(app, "tok-ops") as ops, client_of(app, "tok-acme") as acme:
        error_of(await ops.get("/api/chats/a1/messages"), 403, "ForbiddenError")
        error_of(await ops.get("/api/approvals"), 403, "ForbiddenError")
        error_of(await ops.get("/api/chat/g1/export?tenant=globex"), 422, "InvalidInputError")
        error_of(
            await ops.post("/api/chat/a1/erase", json={"tenant": "acme"}),
            422,
            "InvalidRequestError",
        )
        error_of(
            await ops.post("/api/chat/a1/erase", json={"reason": "r"}),
            404,
            "ConversationNotFoundError",
        )  # the default tenant has no a1

        erased = await ops.post("/api/chat/a1/erase", json={"tenant": "acme", "reason": "ticket 7"})
        assert erased.status_code == 200, erased.text
        assert erased.json()["erased"] | {"erasedAt": None, "removed": None} == {
            "chatId": "a1",
            "tenant": "acme",
            "events": 2,
            "erasedAt": None,
            "actor": "olga",
            "reason": "ticket 7",
            "removed": None,
        }
        assert "its snapshots" in erased.json()["erased"]["removed"]  # the receipt
        assert erased.json()["files"]["status"] == "done"
        assert any("backups" in where for where in erased.json()["files"]["outside"])
        error_of(await acme.get("/api/chats/a1/messages"), 410, "ConversationErasedError")
        history = (await acme.get("/api/chats/a1/history")).json()["entries"]
        assert [(e["kind"], e["actor"]) for e in history][-1] == ("conversation-erased", "olga")
        again = await ops.post("/api/chat/a1/erase", json={"tenant": "acme", "reason": "again"})
        error_of(again, 410, "ConversationErasedError")
        error_of(await ops.get("/api/chat/a1/export?tenant=acme"), 410, "ConversationErasedError")

        store.operations.seal(SEAL)
        bundle = await ops.get("/api/chat/g1/export", params={"tenant": "globex"})
        assert bundle.status_code == 200, bundle.text
        assert bundle.headers["content-type"].startswith("application/x-ndjson")
        assert verify_bundle(bundle.content, SEAL).ok
    assert store.messages("g1", tenant="globex")


async def test_without_tokens_the_operator_routes_are_closed(durable_backend: Backend) -> None:
    """No token table: nobody is an operator (403), even from localhost."""
    store = _store(durable_backend)
    app = create_app(store, responder=demo_responder())
    async with client_of(app) as client:
        error_of(
            await client.post("/api/chat/a1/erase", json={"tenant": "acme", "reason": "r"}),
            403,
            "ForbiddenError",
        )
        error_of(await client.get("/api/chat/a1/export?tenant=acme"), 403, "ForbiddenError")
    assert store.messages("a1", tenant="acme")


async def test_an_operator_redacts_across_tenants_and_tenant_tokens_cannot(
    durable_backend: Backend,
) -> None:
    """Redact: 403 for tenant tokens (own chat or another's); the operator's redaction shows to the tenant."""
    store = _store(durable_backend)
    app = create_app(store, responder=demo_responder(), tokens=TOKENS)
    body = {"tenant": "acme", "messageId": "u1", "fields": ["text"], "reason": "pasted a password"}
    async with client_of(app, "tok-ops") as ops, client_of(app, "tok-acme") as acme:
        async with client_of(app, "tok-globex") as globex:
            for client in (acme, globex):
                error_of(await client.post("/api/chat/a1/redact", json=body), 403, "ForbiddenError")
        assert (await acme.get("/api/chats/a1/messages")).json()["messages"][0]["parts"] == [
            {"type": "text", "text": "secret of acme"}
        ]
        bad = await ops.post("/api/chat/a1/redact", json={**body, "fields": "text"})
        error_of(bad, 422, "InvalidRequestError")
        done = await ops.post("/api/chat/a1/redact", json=body)
        assert done.status_code == 200, done.text
        assert done.json() == {"redacted": True}
        assert (await ops.post("/api/chat/a1/redact", json=body)).json() == {"redacted": False}
        shown = (await acme.get("/api/chats/a1/messages")).json()["messages"][0]["parts"]
        assert "secret of acme" not in str(shown) and "[redacted]" in str(shown)
        history = (await acme.get("/api/chats/a1/history")).json()["entries"]
        assert (history[-1]["kind"], history[-1]["actor"]) == ("redacted", "olga")
    assert "secret of globex" in str(store.messages("g1", tenant="globex"))


async def test_an_operator_erases_a_subject_recorded_from_their_token(
    durable_backend: Backend,
) -> None:
    """The token's user (``alice``) is the subject: listed, then erased in their tenant only."""
    store = durable_backend.open()
    app = create_app(store, responder=demo_responder(), tokens=TOKENS)
    async with client_of(app, "tok-acme") as acme, client_of(app, "tok-ops") as ops:
        for chat in ("a1", "a2"):
            sse_events(await acme.post("/api/chat", json=send_body(chat, [user("u1", "hi")])))
        store.start_conversation("a3", tenant="acme", actor="user:carol")
        store.start_conversation("g1", tenant="globex", actor="alice")
        error_of(await acme.get("/api/subjects/alice/conversations"), 403, "ForbiddenError")

        listed = await ops.get("/api/subjects/alice/conversations", params={"tenant": "acme"})
        assert listed.status_code == 200, listed.text
        assert [c["chatId"] for c in listed.json()["conversations"]] == ["a1", "a2"]
        error_of(
            await ops.post("/api/subjects/alice/erase", json={"tenant": "acme", "reason": "alice"}),
            422,
            "InvalidInputError",
        )
        erased = await ops.post(
            "/api/subjects/alice/erase", json={"tenant": "acme", "reason": "DSR 9"}
        )
        assert erased.status_code == 200, erased.text
        receipt = erased.json()
        assert sorted(r["chatId"] for r in receipt["erased"]) == ["a1", "a2"]
        assert receipt["pseudonym"].startswith("subject:") and receipt["files"]["status"] == "done"
        history = (await acme.get("/api/chats/a1/history")).json()["entries"]
        actors = {e["actor"] for e in history}
        assert "alice" not in actors and receipt["pseudonym"] in actors
    assert store.version("a3", tenant="acme") and store.version("g1", tenant="globex")
