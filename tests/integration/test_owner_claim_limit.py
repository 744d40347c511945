"""Dead owners: a request its owner has not claimed within the claim limit is reported, never re-routed.

On SQLite and PostgreSQL, with the time forced through the store's clock (or
a limit of 0 for the command line, which opens its own store): ``status``
(library, HTTP JSON, CLI), the inbox (CLI and page) and ``/metrics`` say a
request is overdue once it waited past ``owner_claim_limit_seconds`` with no
live claim; a worker of another owner still leaves it alone.
"""

from __future__ import annotations

import asyncio
import json
from datetime import datetime, timedelta

import pytest

from chatledger import ConversationStore
from chatledger.adapters.cli.commands import main
from chatledger.adapters.http.app import create_app
from chatledger.adapters.responders import demo
from chatledger.adapters.responders.scripted import demo_responder
from chatledger.domain.errors import InvalidInputError
from tests.integration.conftest import Backend
from tests.integration.http_support import client_of
from tests.integration.test_owners_workers import _paused, _sweep

OWNER = "external:node-chat"


def _requested(url: str) -> datetime:
    """A request queued for ``OWNER`` (nobody of it runs); when it was made."""
    _paused(url, "c1", OWNER)
    with ConversationStore.open(url) as store:
        store.respond_to_approval(
            "c1", tool_call_id=demo.TOOL_CALL_ID, approved=True, actor="user:ann"
        )
        (request,) = store.pending_continuations()
        return request.requested_at


def test_status_and_the_inbox_report_a_request_past_the_limit(durable_backend: Backend) -> None:
    url = durable_backend.url
    at = _requested(url)
    with ConversationStore.open(url, owner_claim_limit_seconds=60) as store:
        assert store.owner_claim_limit_seconds == 60
        store.clock = lambda: at + timedelta(seconds=59)
        assert store.status("c1").overdue is False
        assert [r.overdue for r in store.pending_continuations()] == [False]

        store.clock = lambda: at + timedelta(seconds=61)
        status = store.status("c1")
        assert (status.status, status.owner, status.overdue) == ("ready-to-continue", OWNER, True)
        assert status.to_json()["overdue"] is True
        assert [r.overdue for r in store.pending_continuations()] == [True]

        # A worker of the owner holding a live lease is working on it: not overdue.
        claimed = store.claim_continuation("w1", owner=OWNER, lease_seconds=600)
        assert claimed is not None and claimed.lease_until is not None
        lease_until: datetime = claimed.lease_until
        assert store.status("c1").overdue is False
        assert [r.overdue for r in store.pending_continuations()] == [False]
        # Its lease ran out with nothing done: the worker is gone, the request overdue again.
        store.clock = lambda: lease_until + timedelta(seconds=1)
        assert store.status("c1").overdue is True
        assert [r.overdue for r in store.pending_continuations()] == [True]

    assert _sweep(url) == 0  # overdue, it is still never handed to another owner's worker
    with ConversationStore.open(url) as store:
        (left,) = store.pending_continuations()
        assert (left.chat_id, left.owner) == ("c1", OWNER)


def test_the_page_the_status_route_and_metrics_report_it(durable_backend: Backend) -> None:
    url = durable_backend.url
    at = _requested(url)

    async def scrape(seconds: float) -> tuple[str, bool, str]:
        with ConversationStore.open(url) as store:
            store.clock = lambda: at + timedelta(seconds=seconds)
            async with client_of(create_app(store, responder=demo_responder(delay=0))) as client:
                inbox = (await client.get("/ui/approvals")).text
                status = (await client.get("/api/chats/c1/status")).json()
                metrics = (await client.get("/metrics")).text
        return inbox, status["overdue"], metrics

    inbox, overdue, metrics = asyncio.run(scrape(299))  # the default limit: 300 s
    assert "queued-request" in inbox and "overdue" not in inbox and overdue is False
    assert 'chatledger_continuations_overdue{tenant="default"} 0' in metrics
    inbox, overdue, metrics = asyncio.run(scrape(301))
    assert 'class="queued-request overdue"' in inbox and overdue is True
    assert "its owner has not claimed it" in inbox
    assert 'chatledger_continuations_overdue{tenant="default"} 1' in metrics


def test_the_command_line_reports_it(
    durable_backend: Backend,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url = durable_backend.url
    _requested(url)
    capsys.readouterr()
    assert main(["status", "c1", "--url", url]) == 0  # default limit: not overdue yet
    assert main(["inbox", "--url", url]) == 0
    assert "OVERDUE" not in capsys.readouterr().out

    monkeypatch.setenv("CHATLEDGER_OWNER_CLAIM_LIMIT_SECONDS", "0")  # any wait is too long
    assert main(["status", "c1", "--url", url]) == 0
    assert f"OVERDUE: no worker of {OWNER} claimed it" in capsys.readouterr().out
    assert main(["status", "c1", "--json", "--url", url]) == 0
    assert json.loads(capsys.readouterr().out)["overdue"] is True
    assert main(["inbox", "--url", url]) == 0
    (line,) = [line for line in capsys.readouterr().out.splitlines() if line.startswith("c1 ")]
    assert line.endswith("OVERDUE (its owner has not claimed it)") and f"owner {OWNER}" in line


def test_a_bad_limit_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(InvalidInputError, match="owner_claim_limit_seconds"):
        ConversationStore.open("memory://", owner_claim_limit_seconds=-1)
    monkeypatch.setenv("CHATLEDGER_OWNER_CLAIM_LIMIT_SECONDS", "soon")
    with pytest.raises(InvalidInputError, match="CHATLEDGER_OWNER_CLAIM_LIMIT_SECONDS"):
        ConversationStore.open("memory://")
