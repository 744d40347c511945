"""The inbox names what standing grants approved: the library read, ``chatledger inbox`` and ``GET /api/approvals``."""

from __future__ import annotations

import json
from typing import Any

import pytest

from chatledger.adapters.cli import main
from chatledger.adapters.http.app import create_app
from chatledger.adapters.responders.scripted import demo_responder
from tests.integration.http_support import client_of
from tests.integration.test_grants import ask

USER = "user:alice"


def granted(store: Any) -> tuple[str, str, str]:
    """A grant given in chat a for search({"q": "x"}), then one call in b it approved and one it did
    not: (grant id, approved call, waiting call)."""
    first = ask(store, "a", "search", {"q": "x"})
    grant = store.grants.approve("a", tool_call_id=first, actor=USER, reason="read-only")
    covered = ask(store, "b", "search", {"q": "x"})
    waiting = ask(store, "b", "search", {"q": "y"})
    return grant.grant_id, covered, waiting


def test_the_inbox_lists_automatic_approvals_with_their_grant(store: Any) -> None:
    grant_id, covered, waiting = granted(store)
    assert [p.tool_call_id for p in store.inbox.pending_approvals()] == [waiting]
    (done,) = store.inbox.automatic_approvals()
    assert (done.chat_id, done.tool_call_id, done.tool_name) == ("b", covered, "search")
    assert done.grant_id == grant_id and done.actor == f"grant:{grant_id}"
    assert done.given_by == USER and "read-only" in done.reason
    # the same actor and reason as the audit's approval
    (audit,) = [e for e in store.history("b", kinds=["approval-responded"])]
    assert (audit.actor, audit.details["reason"]) == (done.actor, done.reason)
    later = ask(store, "c", "search", {"q": "x"})
    assert [a.tool_call_id for a in store.inbox.automatic_approvals()] == [later, covered]
    assert [a.tool_call_id for a in store.inbox.automatic_approvals(limit=1)] == [later]
    assert store.inbox.automatic_approvals(tenant="someone-else") == []


@pytest.mark.anyio
async def test_get_approvals_has_the_automatic_ones(store: Any) -> None:
    grant_id, covered, waiting = granted(store)
    app = create_app(
        store, responder=demo_responder(), tokens={"tok": "default:alice"}, run_continuations=False
    )
    async with client_of(app, "tok") as client:
        body = (await client.get("/api/approvals")).json()
        described = (await client.get("/openapi.json")).json()
    assert [a["toolCallId"] for a in body["approvals"]] == [waiting]
    (done,) = body["automatic"]
    assert done["chatId"] == "b" and done["toolCallId"] == covered
    assert done["grantId"] == grant_id and done["actor"] == f"grant:{grant_id}"
    assert done["grantedBy"] == USER and "read-only" in done["reason"] and done["at"]
    assert "automatic" in described["paths"]["/api/approvals"]["get"]["description"]


def test_cli_inbox_shows_the_automatic_ones(
    durable_backend: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    store = durable_backend.open()
    grant_id, covered, waiting = granted(store)
    url = durable_backend.url
    assert main(["inbox", "--url", url]) == 0
    text = capsys.readouterr().out
    assert waiting in text and "approved automatically by a standing grant" in text
    line = next(line for line in text.splitlines() if covered in line)
    assert f"grant:{grant_id}" in line and USER in line

    assert main(["inbox", "--url", url, "--json"]) == 0  # unchanged: the waiting calls
    assert [a["toolCallId"] for a in json.loads(capsys.readouterr().out)] == [waiting]
    assert main(["inbox", "--url", url, "--json", "--automatic"]) == 0
    both = json.loads(capsys.readouterr().out)
    assert [a["toolCallId"] for a in both["approvals"]] == [waiting]
    assert [(a["toolCallId"], a["grantId"]) for a in both["automatic"]] == [(covered, grant_id)]
