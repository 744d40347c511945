"""``GET /api/stats`` and the overview fragment: each token sees its own tenant's figures (SQLite, PostgreSQL)."""

from __future__ import annotations

import re

import pytest
from starlette.applications import Starlette

from chatledger.adapters.http.app import create_app
from chatledger.adapters.responders.scripted import demo_responder
from tests.integration.conftest import Backend
from tests.integration.http_support import client_of
from tests.integration.stats_support import seed, stamp_events

pytestmark = pytest.mark.anyio

TOKENS = {"acme-token": "acme:user:alice", "globex-token": "globex"}


@pytest.fixture
def app(durable_backend: Backend, monkeypatch: pytest.MonkeyPatch) -> Starlette:
    """The app over the known conversations of acme and globex."""
    store = durable_backend.open()
    seed(store, stamp_events(monkeypatch))
    monkeypatch.undo()
    return create_app(store, responder=demo_responder(), tokens=TOKENS)


async def test_each_token_gets_its_own_tenants_figures(app: Starlette) -> None:
    """acme's token counts acme's four conversations; globex's its one; none is mixed."""
    async with client_of(app, "acme-token") as acme, client_of(app, "globex-token") as globex:
        mine = await acme.get("/api/stats", params={"days": 7})
        theirs = await globex.get("/api/stats")

    assert mine.status_code == 200, mine.text
    body = mine.json()
    assert (body["tenant"], body["conversations"], body["streams"]) == ("acme", 4, 5)
    assert len(body["days"]) == 7
    approvals = body["approvals"]
    assert (approvals["approved"], approvals["denied"]) == (2, 1)
    seconds = approvals["decisionSeconds"]  # exact within a second (a chunk's age in its batch)
    assert seconds == {"median": pytest.approx(120, abs=1), "p90": pytest.approx(264, abs=1)}
    assert approvals["byTool"] == {
        "deleteFile": {"approved": 2, "denied": 0},
        "sendPayment": {"approved": 0, "denied": 1},
    }
    assert approvals["waiting"]["count"] == 1
    assert (body["refusedChunks"], body["replays"]) == (1, 5)
    assert theirs.json()["tenant"] == "globex"
    assert theirs.json()["approvals"]["byActor"] == {"user:alice": {"approved": 0, "denied": 1}}
    assert len(theirs.json()["days"]) == 30


async def test_stats_need_a_token_and_a_window_within_a_year(app: Starlette) -> None:
    """No token: 401. ``days`` outside 1..366: 422 naming the query parameter."""
    async with client_of(app) as anonymous, client_of(app, "acme-token") as acme:
        refused = await anonymous.get("/api/stats")
        too_long = await acme.get("/api/stats", params={"days": "367"})
        zero = await acme.get("/api/stats", params={"days": "0"})

    assert refused.status_code == 401
    for answer in (too_long, zero):
        assert answer.status_code == 422
        assert "query parameter 'days' must be an integer from 1 to" in answer.text


async def test_the_overview_fragment_draws_the_figures_as_svg(app: Starlette) -> None:
    """The page's fragment holds the numbers, one column per day and per-tool bars; no script."""
    async with client_of(app, "acme-token") as acme:
        answer = await acme.get("/ui/overview", params={"days": "7"})

    assert answer.status_code == 200, answer.text
    html = answer.text
    assert re.search(r'id="fig-conversations">4<', html)
    assert re.search(r'id="fig-median">2 min 0 s<', html)
    assert html.count('class="bar conversations"') == 7
    assert "<title>deleteFile: 2 approved</title>" in html
    assert "<title>sendPayment: 1 denied</title>" in html
    assert "<script" not in html
    assert "globex" not in html


async def test_the_openapi_document_describes_the_stats_route(app: Starlette) -> None:
    """``/api/stats`` with its ``days`` parameter and the body's schema."""
    async with client_of(app) as client:
        document = (await client.get("/openapi.json")).json()

    operation = document["paths"]["/api/stats"]["get"]
    assert operation["parameters"][0]["name"] == "days"
    schema = operation["responses"]["200"]["content"]["application/json"]["schema"]
    assert {"days", "approvals", "continuations", "refusedChunks", "replays"} <= set(
        schema["properties"]
    )
