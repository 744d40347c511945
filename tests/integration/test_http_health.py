"""``/health`` and ``/health/live`` (``http/health.py``), and CORS preflights from pages not allowed."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatledger import ConversationStore
from chatledger.adapters.http.app import create_app
from chatledger.adapters.responders import demo
from chatledger.adapters.responders.scripted import demo_responder
from chatledger.adapters.version import installed_version
from tests.integration.conftest import Backend
from tests.integration.http_support import client_of
from tests.integration.test_unstorable_names import poison

pytestmark = pytest.mark.anyio


async def test_health_reports_the_database_the_projector_lag_and_needs_no_token(
    sqlite_store: ConversationStore,
) -> None:
    """Readiness reads the database: events not yet projected are the lag; liveness reads nothing."""
    app = create_app(sqlite_store, responder=demo_responder(), tokens={"t": "acme:alice"})
    async with client_of(app) as client:  # no token: a load balancer has none
        assert (await client.get("/api/approvals")).status_code == 401
        live = await client.get("/health/live")
        assert live.status_code == 200
        assert live.json() == {"status": "alive", "live": True, "version": installed_version()}
        demo.record_demo(sqlite_store, "d")  # written, not read: the read models lag behind
        head = sqlite_store.operations.head()
        lagging = await client.get("/health")
        assert lagging.status_code == 200, lagging.text
        assert lagging.json() == {
            "status": "ok",
            "live": True,
            "ready": True,
            "version": installed_version(),
            "database": "reachable",
            "projectorLag": head - sqlite_store.projector.position(),
            "quarantinedEvents": 0,
        }
        assert lagging.json()["projectorLag"] > 0
        sqlite_store.operations.catch_up()
        assert (await client.get("/health")).json()["projectorLag"] == 0


async def test_health_is_503_when_the_database_does_not_answer(tmp_path: Path) -> None:
    """A store whose database is gone (closed under the app) is not ready: 503, still live."""
    store = ConversationStore.open(f"sqlite:///{tmp_path}/gone.db")
    app = create_app(store, responder=demo_responder())
    store.close()
    async with client_of(app) as client:
        down = await client.get("/health")
        assert down.status_code == 503, down.text
        assert down.json()["ready"] is False and down.json()["status"] == "unavailable"
        assert down.json()["database"].startswith("unreachable")
        assert (await client.get("/health/live")).status_code == 200


async def test_quarantined_events_make_health_degraded(postgres_backend: Backend) -> None:
    """An event the read models set aside is counted; the store still serves (200, degraded)."""
    store = postgres_backend.open()
    store.start_conversation("before")
    poison(postgres_backend, "evil\x00")
    store.operations.catch_up()
    app = create_app(store, responder=demo_responder())
    async with client_of(app) as client:
        shown = (await client.get("/health")).json()
    assert (shown["status"], shown["quarantinedEvents"]) == ("degraded", 1)


async def test_a_preflight_from_a_page_not_allowed_gets_the_clear_403(
    sqlite_store: ConversationStore,
) -> None:
    """``OPTIONS`` from a foreign origin is refused as its request would be, not with a bare 405."""
    preflight = {"origin": "https://evil.example", "access-control-request-method": "POST"}
    for cors in ((), ("http://localhost:3000",)):
        app = create_app(sqlite_store, responder=demo_responder(), cors_origins=cors)
        async with client_of(app) as client:
            refused = await client.options("/api/chat", headers=preflight)
            assert refused.status_code == 403, refused.text
            assert refused.json()["error"]["type"] == "OriginNotAllowedError"
    allowed = {**preflight, "origin": "http://localhost:3000"}
    async with client_of(app) as client:
        passed = await client.options("/api/chat", headers=allowed)
    assert passed.status_code == 200
    assert passed.headers["access-control-allow-origin"] == "http://localhost:3000"
