"""``GET /api/stats``: the caller's tenant's figures (the same read as ``chatledger stats``).

Query parameter ``days`` (1-366, default 30): how many days of daily counts.
Only the token's tenant is counted. The body is ``StoreStats.to_json()``
(``chatledger.projections.stats``); the overview page (``/overview``) draws it.
One ``StatsEndpoints`` serves both, with one ``StatsCache``: the conversations
are read again only after new events.
"""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from chatledger.adapters.http.errors import invalid
from chatledger.adapters.http.listing import Tenancy
from chatledger.adapters.http.requests import int_param
from chatledger.adapters.store.stats import DEFAULT_DAYS, MAX_DAYS, StatsCache, read_stats
from chatledger.projections.stats import StoreStats

__all__ = ["StatsEndpoints", "stats_paths"]


class StatsEndpoints:
    """The figures of the caller's tenant, for ``GET /api/stats`` and the overview page, bound to one app."""

    def __init__(self, app: Tenancy) -> None:
        self.app = app
        self.cache = StatsCache()

    async def read(self, request: Request) -> StoreStats:
        """The figures over the ``days`` the query asks for (422 outside 1..366)."""
        tenant = self.app.identity(request).tenant
        days = int_param(request, "days", minimum=1)
        if days is not None and days > MAX_DAYS:
            raise invalid(
                f"query parameter 'days' must be an integer from 1 to {MAX_DAYS}, not {days}"
            )
        window = DEFAULT_DAYS if days is None else days
        store, cache = self.app.store, self.cache
        return await run_in_threadpool(
            lambda: read_stats(store, tenant=tenant, days=window, cache=cache)
        )

    async def json(self, request: Request) -> Response:
        """``GET /api/stats``."""
        stats = await self.read(request)
        return JSONResponse(stats.to_json(), headers={"cache-control": "no-store"})

    def route(self) -> Route:
        """The ``GET /api/stats`` route."""
        return Route("/api/stats", self.json, methods=["GET"])


def _figure(description: str) -> dict[str, Any]:
    return {"type": ["number", "null"], "description": description}


_WAITING = {
    "type": "object",
    "properties": {"count": {"type": "integer"}, "oldestSeconds": _figure("age of the oldest")},
}
_SPLIT = {
    "type": "object",
    "properties": {"approved": {"type": "integer"}, "denied": {"type": "integer"}},
}


def stats_paths(error: dict[str, Any]) -> dict[str, Any]:
    """The OpenAPI description of ``GET /api/stats`` (``error``: the shared error response)."""
    schema = {
        "type": "object",
        "properties": {
            "tenant": {"type": "string"},
            "generatedAt": {"type": "string", "format": "date-time"},
            "conversations": {"type": "integer", "description": "all time (erased not counted)"},
            "streams": {"type": "integer", "description": "streams opened, all time"},
            "days": {
                "type": "array",
                "description": "one entry per day (UTC) of the window, oldest first",
                "items": {
                    "type": "object",
                    "properties": {
                        "day": {"type": "string", "format": "date"},
                        "conversations": {"type": "integer"},
                        "streams": {"type": "integer"},
                    },
                },
            },
            "approvals": {
                "type": "object",
                "properties": {
                    **_SPLIT["properties"],  # type: ignore[dict-item]
                    "approvalRate": _figure("approved / answered (null: none answered)"),
                    "denialRate": _figure("denied / answered"),
                    "decisionSeconds": {
                        "type": "object",
                        "description": "from an approval's request to its decision",
                        "properties": {"median": _figure("median"), "p90": _figure("p90")},
                    },
                    "byTool": {"type": "object", "additionalProperties": _SPLIT},
                    "byActor": {"type": "object", "additionalProperties": _SPLIT},
                    "waiting": _WAITING,
                },
            },
            "continuations": {"type": "object", "properties": {"waiting": _WAITING}},
            "refusedChunks": {"type": "integer"},
            "replays": {"type": "integer", "description": "chunks caught as replays"},
        },
    }
    days = {
        "name": "days",
        "in": "query",
        "required": False,
        "description": f"days of daily counts (default {DEFAULT_DAYS})",
        "schema": {"type": "integer", "minimum": 1, "maximum": MAX_DAYS},
    }
    return {
        "/api/stats": {
            "get": {
                "summary": "The tenant's figures: conversations and streams per day, approvals "
                "per tool and actor, rates, decision times, queues, refused chunks, replays",
                "tags": ["stats"],
                "parameters": [days],
                "responses": {
                    "200": {
                        "description": "the figures",
                        "content": {"application/json": {"schema": schema}},
                    },
                    **{status: error for status in ("400", "401", "403", "422", "503")},
                },
            }
        }
    }
