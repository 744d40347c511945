"""``GET /metrics`` (``http/metrics.py``): Prometheus text of requests, chunks, commits and what waits."""

from __future__ import annotations

import re

import pytest

from chatledger import ConversationStore
from chatledger.adapters.http.app import create_app
from chatledger.adapters.responders import demo
from chatledger.adapters.responders.scripted import demo_responder
from tests.integration.http_support import client_of, send_body, sse_events

pytestmark = pytest.mark.anyio

SAMPLE = re.compile(r'^(chatledger_[a-z_]+)(\{([a-z_]+="[^"]*",?)*\})? (-?[0-9.e+]+)$')


def samples(text: str) -> dict[str, float]:
    """``name{labels}`` -> value; every line is a sample or a HELP/TYPE line of a family."""
    found: dict[str, float] = {}
    typed: set[str] = set()
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            typed.add(line.split()[2])
        elif not line.startswith("# HELP "):
            match = SAMPLE.match(line)
            assert match is not None, line
            family = re.sub(r"_(bucket|sum|count)$", "", match.group(1))
            assert family in typed or match.group(1) in typed, line
            found[line.rsplit(" ", 1)[0]] = float(match.group(4))
    return found


async def test_metrics_count_requests_chunks_commits_and_the_approval_waiting(
    sqlite_store: ConversationStore,
) -> None:
    """After the demo turn: its POST, its chunks and commits counted; one approval pending, aging."""
    app = create_app(sqlite_store, responder=demo_responder())
    async with client_of(app) as client:
        before = samples((await client.get("/metrics")).text)
        sent = await client.post("/api/chat", json=send_body("m", [demo.USER_MESSAGE]))
        assert len(sse_events(sent)) == len(demo.first_turn_chunks())
        scraped = await client.get("/metrics")
        again = samples((await client.get("/metrics")).text)
    assert again["chatledger_projector_lag_events"] == 0
    assert scraped.status_code == 200
    assert scraped.headers["content-type"].startswith("text/plain; version=0.0.4")
    now = samples(scraped.text)
    assert now['chatledger_http_requests_total{method="POST",status="200"}'] == 1
    assert now['chatledger_http_requests_total{method="GET",status="200"}'] >= 1
    stored = now["chatledger_chunks_stored_total"] - before["chatledger_chunks_stored_total"]
    assert stored == len(demo.first_turn_chunks())
    commits = now["chatledger_commit_seconds_count"] - before["chatledger_commit_seconds_count"]
    assert commits >= 1 and now["chatledger_commit_seconds_sum"] > 0
    assert (
        now['chatledger_commit_seconds_bucket{le="+Inf"}'] == now["chatledger_commit_seconds_count"]
    )
    assert now["chatledger_streams_open"] == 0 and now["chatledger_up"] == 1
    assert now['chatledger_approvals_pending{tenant="default"}'] == 1
    assert now['chatledger_approval_oldest_age_seconds{tenant="default"}'] > 0
    assert now['chatledger_continuations_pending{tenant="default"}'] == 0
    # The turn's events were written, not yet read: the read models lag until the scrape's reads.
    assert now["chatledger_projector_lag_events"] > 0
    assert now["chatledger_quarantined_events"] == 0


async def test_with_tokens_metrics_need_an_operator_token(sqlite_store: ConversationStore) -> None:
    """A tenant's token is refused (403); the operator's sees every tenant's queues."""
    tokens = {"acme-token": "acme:alice", "globex-token": "globex", "ops-token": "*:ops"}
    app = create_app(sqlite_store, responder=demo_responder(), tokens=tokens)
    async with client_of(app, "acme-token") as tenant, client_of(app, "ops-token") as ops:
        assert (await tenant.get("/metrics")).status_code == 403
        scraped = await ops.get("/metrics")
    assert scraped.status_code == 200
    shown = samples(scraped.text)
    assert shown['chatledger_approvals_pending{tenant="acme"}'] == 0
    assert 'chatledger_approvals_pending{tenant="globex"}' in shown
