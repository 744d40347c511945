"""``GET /metrics``: the Prometheus text format of what a serving process does and what waits.

Counters of this process: HTTP requests (by method and status), chunks
stored and commits with their latency (``store/meter.py``; rates are the
scraper's to compute, e.g. ``rate(chatledger_chunks_stored_total[1m])``),
the answers it is writing now. Gauges read from the database (the same for
every process on it): projector lag, quarantined events, and per tenant the
continuation queue (with the requests overdue for their owner) and the
approvals pending, with the age of the oldest.
With ``serve --workers N`` each scrape reaches one of the processes.

With tokens the route needs an operator token (``TOKEN=*:USER``; Prometheus
sends it as ``authorization: {credentials: ...}``); without tokens it is open,
like every route.
"""

from __future__ import annotations

import asyncio
import threading
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from chatledger.adapters.http.auth import Access
from chatledger.adapters.http.health import READY_TIMEOUT_SECONDS, check_health
from chatledger.adapters.store.meter import COMMIT_BUCKETS, METER
from chatledger.adapters.store.surface import Store

__all__ = [
    "CONTENT_TYPE",
    "RequestCounter",
    "RequestCounts",
    "metrics_paths",
    "metrics_route",
    "render",
]

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
"""The Prometheus text exposition format."""


class RequestCounts:
    """HTTP requests answered, by method and status (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: Counter[tuple[str, int]] = Counter()

    def add(self, method: str, status: int) -> None:
        """One more answer of ``status`` to a ``method`` request."""
        with self._lock:
            self._counts[(method, status)] += 1

    def read(self) -> dict[tuple[str, int], int]:
        """The counts now."""
        with self._lock:
            return dict(self._counts)


class RequestCounter:
    """ASGI middleware adding every HTTP answer to ``counts``."""

    def __init__(self, app: ASGIApp, *, counts: RequestCounts) -> None:
        self.app = app
        self.counts = counts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        method = str(scope["method"])

        async def counted(message: Message) -> None:
            if message["type"] == "http.response.start":
                self.counts.add(method, int(message["status"]))
            await send(message)

        await self.app(scope, receive, counted)


def metrics_route(
    store: Store, access: Access, requests: RequestCounts, streams_open: Callable[[], int]
) -> Route:
    """``GET /metrics`` on ``store``; ``streams_open``: the answers this process is writing."""

    async def metrics(request: Request) -> Response:
        if access.authenticate is not None:
            access.operator(request)
        try:
            gauges = await asyncio.wait_for(
                run_in_threadpool(_database_gauges, store, access.tenants()),
                READY_TIMEOUT_SECONDS,
            )
        except Exception:  # the counters still say something; /health says why
            gauges = {"up": [((), 0)]}
        body = render(requests.read(), streams_open(), gauges)
        return PlainTextResponse(body, media_type=CONTENT_TYPE)

    return Route("/metrics", metrics, methods=["GET"])


Samples = list[tuple[tuple[tuple[str, str], ...], float]]


def _database_gauges(store: Store, tenants: list[str]) -> dict[str, Samples]:
    """The gauges read from the database (blocking)."""
    health = check_health(store)
    now = datetime.now(UTC)
    gauges: dict[str, Samples] = {
        "up": [((), 1)],
        "projector_lag_events": [((), health.lag)],
        "quarantined_events": [((), health.quarantined)],
        "continuations_pending": [],
        "continuation_oldest_age_seconds": [],
        "continuations_overdue": [],
        "approvals_pending": [],
        "approval_oldest_age_seconds": [],
    }
    for tenant in tenants:
        label = (("tenant", tenant),)
        queued = store.inbox.pending_continuations(tenant=tenant)
        gauges["continuations_overdue"].append((label, sum(r.overdue for r in queued)))
        for name, pending in (
            ("continuation", queued),
            ("approval", store.inbox.pending_approvals(tenant=tenant)),
        ):
            oldest = min((item.requested_at for item in pending), default=None)
            age = (now - oldest).total_seconds() if oldest is not None else 0.0
            gauges[f"{name}s_pending"].append((label, len(pending)))
            gauges[f"{name}_oldest_age_seconds"].append((label, max(age, 0.0)))
    return gauges


_HELP = {
    "up": "1 when the database answered this scrape, else 0",
    "projector_lag_events": "events recorded but not yet applied to the read models",
    "quarantined_events": "events the read models set aside (chatledger verify names them)",
    "continuations_pending": "continuation requests not yet started",
    "continuation_oldest_age_seconds": "age of the oldest pending continuation request",
    "continuations_overdue": "continuation requests their owner has not claimed within the "
    "store's owner claim limit",
    "approvals_pending": "tool calls awaiting approval",
    "approval_oldest_age_seconds": "age of the oldest tool call awaiting approval",
}


def render(requests: dict[tuple[str, int], int], streams_open: int, gauges: dict[str, Any]) -> str:
    """The Prometheus text of the counters of this process and ``gauges``."""
    reading = METER.read()
    lines: list[str] = []

    def family(name: str, kind: str, help_: str) -> None:
        lines.extend([f"# HELP chatledger_{name} {help_}", f"# TYPE chatledger_{name} {kind}"])

    family("http_requests_total", "counter", "HTTP requests answered, by method and status")
    for (method, status), n in sorted(requests.items()):
        lines.append(f'chatledger_http_requests_total{{method="{method}",status="{status}"}} {n}')
    family("streams_open", "gauge", "answers this process is writing now")
    lines.append(f"chatledger_streams_open {streams_open}")
    family("chunks_stored_total", "counter", "UI message chunks stored by this process")
    lines.append(f"chatledger_chunks_stored_total {reading.chunks}")
    family("commit_seconds", "histogram", "how long this process's commits took")
    for bound, n in zip(COMMIT_BUCKETS, reading.commit_buckets, strict=True):
        lines.append(f'chatledger_commit_seconds_bucket{{le="{bound}"}} {n}')
    lines.append(f'chatledger_commit_seconds_bucket{{le="+Inf"}} {reading.commits}')
    lines.append(f"chatledger_commit_seconds_sum {reading.commit_seconds:.6f}")
    lines.append(f"chatledger_commit_seconds_count {reading.commits}")
    for name, samples in gauges.items():
        family(name, "gauge", _HELP[name])
        for labels, value in samples:
            shown = ",".join(f'{k}="{_escape(v)}"' for k, v in labels)
            lines.append(
                f"chatledger_{name}{{{shown}}} {value:g}"
                if shown
                else f"chatledger_{name} {value:g}"
            )
    return "\n".join(lines) + "\n"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def metrics_paths(error: dict[str, Any]) -> dict[str, Any]:
    """The OpenAPI description of ``GET /metrics`` (``error``: the shared error response)."""
    text = {"text/plain": {"schema": {"type": "string"}}}
    return {
        "/metrics": {
            "get": {
                "summary": "Prometheus metrics (with tokens: an operator token)",
                "tags": ["health"],
                "responses": {
                    "200": {"description": "Prometheus text format 0.0.4", "content": text},
                    **{status: error for status in ("400", "401", "403")},
                },
            }
        }
    }
