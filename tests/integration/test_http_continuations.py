"""Continuations over HTTP (``store/turns/continuations.py`` run by the app): after an approval
endpoint, and the sweep of requests nobody took.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest

from chatledger import ConversationStore
from chatledger.adapters.http.app import create_app
from chatledger.adapters.responders import demo
from chatledger.adapters.responders.scripted import (
    demo_responder,
)
from chatledger.adapters.store.turns.continuations import ContinuationRunner
from chatledger.domain.whole_stream import fold_stream
from chatledger.projections.read_models import ContinuationRequest
from tests.integration.http_support import client_of, continuation_of, send_body, sse_events

pytestmark = pytest.mark.anyio


async def test_an_approval_by_the_endpoint_continues_the_turn_in_the_background(
    sqlite_store: ConversationStore,
) -> None:
    """The approvals endpoint runs the continuation itself; a client follows it with resume."""
    responder = demo_responder(delay=0.05)  # the continuation streams ~0.5 s: time to resume it
    app = create_app(sqlite_store, responder=responder)
    chat = "by-endpoint"
    async with client_of(app) as client:
        sse_events(await client.post("/api/chat", json=send_body(chat, [demo.USER_MESSAGE])))
        deny = {"approvalId": demo.APPROVAL_ID, "approved": False, "reason": demo.DENIAL_REASON}
        answered = await client.post(f"/api/chats/{chat}/approvals", json=deny)
        assert answered.json()["continuationRequested"] is True
        resumed = await client.get(f"/api/chat/{chat}/stream")
        assert resumed.status_code == 200, "the continuation should be streaming"
        # The log holds the provider's replays (the earlier call, its denial) as
        # replays: resume sends only what was applied.
        replayed = {"tool-input-start", "tool-input-delta", "tool-input-available"}
        replayed.add("tool-output-denied")
        replay = sse_events(resumed)
        assert continuation_of(replay) == [
            c for c in demo.continuation_chunks() if c["type"] not in replayed
        ]
        status = (await client.get(f"/api/chats/{chat}/status")).json()
        assert (status["status"], status["lastOutcome"]) == ("idle", "finished")
    assert [r.trigger for r in responder.requests] == ["submit-message", "continuation"]
    assert sqlite_store.pending_continuations() == []
    demo.record_demo(sqlite_store, "direct")
    assert sqlite_store.messages(chat) == sqlite_store.messages("direct")
    assert fold_stream(replay, ai_sdk=7) == sqlite_store.messages(chat)[-1]  # a complete replay


async def test_the_sweep_runs_continuations_nobody_took(sqlite_store: ConversationStore) -> None:
    """A request recorded by another program (here: the store directly) is claimed and run."""
    responder = demo_responder()
    app = create_app(
        sqlite_store,
        responder=responder,
        continuation_poll_seconds=0.05,
        continuation_grace_seconds=0.2,
    )
    chat = "swept"
    sqlite_store.start_conversation(chat)
    sqlite_store.append_message(chat, demo.USER_MESSAGE)
    sqlite_store.ingest(chat, demo.first_turn_chunks(), actor="agent:elsewhere")
    sqlite_store.respond_to_approval(
        chat, approval_id=demo.APPROVAL_ID, approved=False, reason="no", actor="alice"
    )
    (pending,) = sqlite_store.pending_continuations()
    async with app.router.lifespan_context(app):
        for _ in range(200):
            if sqlite_store.status(chat).status == "idle":
                break
            await asyncio.sleep(0.02)
    assert sqlite_store.status(chat).last_outcome == "finished"
    assert sqlite_store.pending_continuations() == []
    (request,) = responder.requests
    assert (request.trigger, request.message_id) == ("continuation", pending.message_id)
    opened = sqlite_store.history(chat, kinds=["stream-opened"])[-1]
    assert opened.actor == responder.actor


async def test_a_worker_continues_a_turn_answered_over_http(
    sqlite_store: ConversationStore,
) -> None:
    """A server that runs no continuations records the request; ``chatledger worker`` runs it.

    The server's lifespan (its sweep included, were it on) runs the whole time:
    only the worker, a process without HTTP, may claim the request.
    """
    app = create_app(
        sqlite_store,
        responder=demo_responder(),
        run_continuations=False,
        continuation_poll_seconds=0.01,
        continuation_grace_seconds=0.0,
    )
    chat = "for-the-worker"
    deny = {"approvalId": demo.APPROVAL_ID, "approved": False, "reason": demo.DENIAL_REASON}
    async with app.router.lifespan_context(app), client_of(app) as client:
        sse_events(await client.post("/api/chat", json=send_body(chat, [demo.USER_MESSAGE])))
        answered = await client.post(f"/api/chats/{chat}/approvals", json=deny)
        assert answered.json()["continuationRequested"] is True
        await asyncio.sleep(0.1)  # ten sweeps' time: none may run it
        waiting = (await client.get(f"/api/chats/{chat}/status")).json()
        assert waiting["status"] == "ready-to-continue"

        url = sqlite_store.config.display
        command = [sys.executable, "-m", "chatledger", "worker", "--url", url]
        command += ["--responder", "demo", "--delay", "0", "--grace-seconds", "0", "--once"]
        ran = await asyncio.to_thread(
            subprocess.run, command, capture_output=True, text=True, timeout=60, check=False
        )
        assert ran.returncode == 0, ran.stderr
        assert "1 continuation(s) run" in ran.stdout

        status = (await client.get(f"/api/chats/{chat}/status")).json()
        assert (status["status"], status["lastOutcome"]) == ("idle", "finished")
    (claim,) = sqlite_store.history(chat, kinds=["continuation-claimed"])
    assert claim.actor.startswith("worker:")
    demo.record_demo(sqlite_store, "direct")
    assert sqlite_store.messages(chat) == sqlite_store.messages("direct")


async def test_a_request_claimed_by_a_dead_process_is_taken_over_in_seconds(
    sqlite_store: ConversationStore,
) -> None:
    """A process claims a request and dies before opening its stream: another runs it soon after."""
    chat = "orphaned-claim"
    sqlite_store.start_conversation(chat)
    sqlite_store.append_message(chat, demo.USER_MESSAGE)
    sqlite_store.ingest(chat, demo.first_turn_chunks(), actor="agent:elsewhere")
    sqlite_store.respond_to_approval(chat, approval_id=demo.APPROVAL_ID, approved=False)

    async def never(claimed: ContinuationRequest) -> None:
        raise AssertionError("the dead process runs nothing")

    dead = ContinuationRunner(sqlite_store, never, worker="worker:dead-host:1", grace_seconds=0)
    assert await dead.claim(sqlite_store.tenant) is not None  # ... and then it died
    app = create_app(
        sqlite_store,
        responder=demo_responder(),
        continuation_poll_seconds=0.1,
        continuation_grace_seconds=0.0,
    )
    async with app.router.lifespan_context(app):
        for _ in range(300):  # 15 s at most: well below the old 60 s lease
            if sqlite_store.status(chat).status == "idle":
                break
            await asyncio.sleep(0.05)
    assert sqlite_store.status(chat).last_outcome == "finished"
    claims = sqlite_store.history(chat, kinds=["continuation-claimed"])
    assert [c.actor.split(":")[0] for c in claims] == ["worker", "http"]
