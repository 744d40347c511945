"""serve and worker continue only what their responder owns; ``chatledger owner`` hands a chat over.

On SQLite and PostgreSQL: a conversation started through ``POST /api/chat``
is owned by the app's responder; a worker of another owner leaves its
request alone (visible with its age in ``status`` and ``inbox``); handing it
over with ``chatledger owner`` is audited and lets the new owner's worker run it.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest

from chatledger import ConversationStore
from chatledger.adapters.cli.commands import main
from chatledger.adapters.cli.worker import run_worker
from chatledger.adapters.http.app import create_app
from chatledger.adapters.responders import demo
from chatledger.adapters.responders.scripted import demo_responder
from tests.integration.conftest import Backend
from tests.integration.http_support import client_of, send_body, sse_events

DEMO_OWNER = "responder:agent:ops-assistant"
"""The owner name of the demo responder (its actor is ``agent:ops-assistant``)."""


def _paused(url: str, chat: str, owner: str) -> None:
    """The demo's first turn, paused on its approval, in a conversation owned by ``owner``."""
    with ConversationStore.open(url) as store:
        store.start_conversation(chat, owner=owner)
        store.append_message(chat, demo.USER_MESSAGE)
        store.ingest(chat, demo.first_turn_chunks(), actor="agent:elsewhere")


def _sweep(url: str, owner: str | None = None) -> int:
    async def sweep() -> int:
        with ConversationStore.open(url) as store:
            return await run_worker(
                store, demo_responder(delay=0), tenants=[store.tenant], grace_seconds=0,
                once=True, owner=owner,
            )  # fmt: skip

    return asyncio.run(sweep())


def test_a_conversation_started_over_http_is_owned_by_the_apps_responder(
    durable_backend: Backend,
) -> None:
    async def send() -> dict[str, object]:
        with ConversationStore.open(durable_backend.url) as store:
            app = create_app(store, responder=demo_responder(delay=0))
            async with client_of(app) as client:
                body = send_body("web", [demo.USER_MESSAGE])
                sse_events(await client.post("/api/chat", json=body))
                status: dict[str, object] = (await client.get("/api/chats/web/status")).json()
                return status

    status = asyncio.run(send())
    assert (status["status"], status["owner"]) == ("awaiting-approval", DEMO_OWNER)
    with ConversationStore.open(durable_backend.url) as store:
        (started,) = store.history("web", kinds=["conversation-started"])
        assert started.details["owner"] == DEMO_OWNER


def test_a_worker_leaves_another_owners_request_visible_until_it_is_handed_over(
    durable_backend: Backend, capsys: pytest.CaptureFixture[str]
) -> None:
    url = durable_backend.url
    _paused(url, "c1", "external:node-chat")
    assert main(["approve", "c1", demo.TOOL_CALL_ID, "--actor", "user:ann", "--url", url]) == 0
    assert _sweep(url) == 0  # the demo's worker is a stranger here
    assert main(["worker", "--once", "--grace-seconds", "0", "--delay", "0", "--url", url]) == 0
    assert "0 continuation(s) run" in capsys.readouterr().out

    assert main(["status", "c1", "--url", url]) == 0
    shown = capsys.readouterr().out
    assert "owner: external:node-chat" in shown
    assert "for owner external:node-chat, waiting" in shown
    assert main(["status", "c1", "--json", "--url", url]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["status"] == "ready-to-continue" and status["owner"] == "external:node-chat"
    assert status["continuationRequest"] and status["continuationRequestedAt"]
    assert main(["inbox", "--url", url]) == 0
    listed = capsys.readouterr().out
    assert "continuations waiting for their owner" in listed
    assert "c1" in listed and "owner external:node-chat" in listed and "waiting" in listed

    assert main(["owner", "c1", "--url", url]) == 0
    assert capsys.readouterr().out.strip() == "external:node-chat"
    handed = ["owner", "c1", DEMO_OWNER, "--actor", "user:ops", "--reason", "node is gone"]
    assert main([*handed, "--url", url]) == 0
    assert "now owned by" in capsys.readouterr().out
    assert main([*handed, "--url", url]) == 0
    assert "nothing recorded" in capsys.readouterr().out

    with ConversationStore.open(url) as store:
        (event,) = store.history("c1", kinds=["owner-set"])
        assert event.actor == "user:ops"
        assert event.details == {
            "owner": DEMO_OWNER,
            "previous": "external:node-chat",
            "reason": "node is gone",
        }
        (waiting,) = store.pending_continuations()
        assert waiting.owner == DEMO_OWNER
    assert _sweep(url, owner="responder:agent:someone-else") == 0
    assert _sweep(url) == 1  # the demo's worker owns it now
    with ConversationStore.open(url) as store:
        assert store.pending_continuations() == []
        assert store.status("c1").owner == DEMO_OWNER


def test_any_lets_every_worker_and_none_lets_nobody(durable_backend: Backend) -> None:
    url = durable_backend.url
    for chat, owner in (("open", "any"), ("closed", "none")):
        _paused(url, chat, owner)
        with ConversationStore.open(url) as store:
            store.respond_to_approval(
                chat, tool_call_id=demo.TOOL_CALL_ID, approved=True, actor="user:ann"
            )
    assert _sweep(url, owner="responder:agent:whoever") == 1
    with ConversationStore.open(url) as store:
        (left,) = store.pending_continuations()
        assert (left.chat_id, left.owner) == ("closed", "none")
        assert left.age_seconds >= 0


def test_an_external_owner_pulls_its_requests_with_a_claim_and_a_lease(
    durable_backend: Backend,
) -> None:
    """``POST /api/continuations/claim`` (a long poll) and ``.../continuations/retire``."""
    url = durable_backend.url
    _paused(url, "n1", "external:node-chat")
    _paused(url, "d1", DEMO_OWNER)

    async def pull() -> None:
        with ConversationStore.open(url) as store:
            app = create_app(store, responder=demo_responder(delay=0), run_continuations=False)
            async with client_of(app) as client:

                async def claim(owner: str, **more: object) -> httpx.Response:
                    body = {"owner": owner, **more}
                    return await client.post("/api/continuations/claim", json=body)

                assert (await claim("external:node-chat")).status_code == 204  # nothing yet
                waiting = asyncio.create_task(claim("external:node-chat", waitSeconds=20))
                for chat in ("d1", "n1"):  # the demo's request first: not for this owner
                    approved = {"toolCallId": demo.TOOL_CALL_ID, "approved": True}
                    answer = await client.post(f"/api/chats/{chat}/approvals", json=approved)
                    assert answer.json()["continuationRequested"] is True
                claimed = await waiting
                assert claimed.status_code == 200, claimed.text
                request = claimed.json()["request"]
                assert (request["chatId"], request["owner"]) == ("n1", "external:node-chat")
                assert request["claimedBy"] and request["leaseUntil"]
                # Leased: another worker of the owner gets nothing; a stranger never does.
                assert (await claim("external:node-chat", worker="w2")).status_code == 204
                assert (await claim("responder:agent:other")).status_code == 204
                bad = await claim("external:node-chat", waitSeconds=99)
                assert bad.status_code == 422 and "waitSeconds" in bad.text
                retired = await client.post(
                    "/api/chats/n1/continuations/retire", json={"reason": "node answered"}
                )
                assert retired.json() == {"retired": request["requestId"]}

    asyncio.run(pull())
    with ConversationStore.open(url) as store:
        (left,) = store.pending_continuations()
        assert (left.chat_id, left.owner) == ("d1", DEMO_OWNER)
        (entry,) = store.history("n1", kinds=["continuation-retired"])
        assert entry.details["reason"] == "node answered"


def test_ingest_creates_a_conversation_for_the_owner_it_names(
    durable_backend: Backend, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capture = tmp_path / "turn.jsonl"
    capture.write_text("".join(json.dumps(c) + "\n" for c in demo.first_turn_chunks()))
    url = durable_backend.url
    ingest = ["ingest", "cap", str(capture), "--create", "--owner", "external:node-chat"]
    assert main([*ingest, "--url", url]) == 0
    assert main(["owner", "cap", "--url", url]) == 0
    assert capsys.readouterr().out.strip().endswith("external:node-chat")
