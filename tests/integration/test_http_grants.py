"""The grant routes: approve with a grant, list, give, revoke; errors as typed JSON; the actor is the token's."""

from __future__ import annotations

from typing import Any

import pytest

from chatledger.adapters.http.app import create_app
from chatledger.adapters.responders.scripted import demo_responder
from chatledger.domain.grants import input_digest
from tests.integration.http_support import client_of, error_of
from tests.integration.test_grants import approved_by_grant, ask

pytestmark = pytest.mark.anyio


async def test_approve_with_a_grant_then_list_and_revoke_it(store: Any) -> None:
    app = create_app(
        store, responder=demo_responder(), tokens={"tok": "default:alice"}, run_continuations=False
    )
    first = ask(store, "a", "delete_file", {"path": "/tmp/x"})
    async with client_of(app, "tok") as client:
        made = await client.post(
            "/api/chats/a/grants",
            json={"toolCallId": first, "reason": "scratch space", "forSeconds": 3600},
        )
        assert made.status_code == 201, made.text
        grant = made.json()
        assert grant["scope"] == "input" and grant["inputDigest"] == input_digest(
            {"path": "/tmp/x"}
        )
        assert grant["actor"] == "alice" and grant["status"] == "live"
        assert store.status("a").status == "ready-to-continue"

        same = ask(store, "b", "delete_file", {"path": "/tmp/x"})
        other = ask(store, "b", "delete_file", {"path": "/tmp/other"})
        assert approved_by_grant(store, "b", same) and not approved_by_grant(store, "b", other)

        listed = (await client.get("/api/grants")).json()["grants"]
        assert [(g["grantId"], g["uses"]) for g in listed] == [(grant["grantId"], 1)]

        revoked = await client.post(
            f"/api/grants/{grant['grantId']}/revoke", json={"reason": "done"}
        )
        assert revoked.json()["status"] == "revoked" and revoked.json()["revokedBy"] == "alice"
        assert (await client.get("/api/grants")).json()["grants"] == []
        assert len((await client.get("/api/grants?all=1")).json()["grants"]) == 1


async def test_give_a_grant_and_the_errors(store: Any) -> None:
    app = create_app(
        store, responder=demo_responder(), tokens={"tok": "default:alice"}, run_continuations=False
    )
    async with client_of(app, "tok") as client:
        given = await client.post(
            "/api/grants", json={"scope": "tool", "toolName": "search", "reason": "read-only"}
        )
        assert given.status_code == 201, given.text
        assert approved_by_grant(store, "c", ask(store, "c", "search", {"q": "anything"}))
        error_of(await client.post("/api/grants", json={"scope": "all"}), 422, "InvalidInputError")
        error_of(
            await client.post("/api/grants/grant_nope/revoke", json={}), 404, "GrantNotFoundError"
        )
        error_of(
            await client.post("/api/chats/c/grants", json={"toolCallId": "nope"}),
            422,
            "InvalidInputError",
        )
        error_of(
            await client.post(
                "/api/grants", json={"scope": "tool", "toolName": "x", "forSeconds": "1h"}
            ),
            422,
            "InvalidRequestError",
        )
