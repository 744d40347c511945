"""Health of a serving process, for load balancers and orchestrators (public: no token needed).

* ``GET /health/live`` (liveness): the process answers; nothing is read.
* ``GET /health`` (readiness): the database answers, and how far behind the
  read models are (``projectorLag``: events recorded but not yet applied to
  them; reads catch up by themselves) and how many events they set aside
  (``quarantinedEvents``: ``chatledger verify`` names them, ``rebuild`` retries
  them). 200 with ``status`` ``ok`` (or ``degraded`` when events are
  quarantined); 503 when the database does not answer within
  ``READY_TIMEOUT_SECONDS``. The database's own error is logged, not sent.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from chatledger.adapters.store.surface import Store
from chatledger.adapters.version import installed_version

__all__ = ["READY_TIMEOUT_SECONDS", "Health", "check_health", "health_paths", "health_routes"]

READY_TIMEOUT_SECONDS = 5.0
"""How long ``/health`` waits for the database before answering 503."""

log = logging.getLogger("chatledger.http")


@dataclass(frozen=True)
class Health:
    """What ``/health`` reports about a store that answered."""

    head: int
    """The last event recorded (per database, added up over a sharded store's databases)."""
    projected: int
    """The last event the read models applied (likewise added up)."""
    quarantined: int
    """Events the read models set aside because they cannot be applied."""

    @property
    def lag(self) -> int:
        """Events recorded but not yet applied to the read models."""
        return max(self.head - self.projected, 0)

    def to_json(self) -> dict[str, Any]:
        """The ``/health`` body of a store that answered."""
        return {
            "status": "degraded" if self.quarantined else "ok",
            "live": True,
            "ready": True,
            "version": installed_version(),
            "database": "reachable",
            "projectorLag": self.lag,
            "quarantinedEvents": self.quarantined,
        }


def check_health(store: Store) -> Health:
    """Ask the store's database(s) where the log and the read models stand (blocking)."""
    stores = getattr(store, "shards", None) or [store]
    return Health(
        head=sum(one.operations.head() for one in stores),
        projected=sum(one.projector.position() for one in stores),
        quarantined=sum(len(one.operations.quarantined()) for one in stores),
    )


def health_routes(store: Store) -> list[BaseRoute]:
    """``GET /health/live`` and ``GET /health`` on ``store``."""

    async def live(request: Request) -> Response:
        return JSONResponse({"status": "alive", "live": True, "version": installed_version()})

    async def ready(request: Request) -> Response:
        try:
            health = await asyncio.wait_for(
                run_in_threadpool(check_health, store), READY_TIMEOUT_SECONDS
            )
        except TimeoutError:
            return _unavailable(f"did not answer within {READY_TIMEOUT_SECONDS:g} s")
        except Exception as error:  # any failure to read is "not ready", never a 500
            log.warning("health check: the database did not answer: %r", error)
            return _unavailable(f"unreachable ({type(error).__name__}; see the server log)")
        return JSONResponse(health.to_json())

    return [
        Route("/health/live", live, methods=["GET"]),
        Route("/health", ready, methods=["GET"]),
    ]


def _unavailable(why: str) -> Response:
    body = {
        "status": "unavailable",
        "live": True,
        "ready": False,
        "version": installed_version(),
        "database": why,
    }
    return JSONResponse(body, status_code=503)


def health_paths(error: dict[str, Any]) -> dict[str, Any]:
    """The OpenAPI description of the health routes (``error``: the shared error response)."""

    def json_object(description: str) -> dict[str, Any]:
        schema = {"type": "object"}
        return {"description": description, "content": {"application/json": {"schema": schema}}}

    return {
        "/health/live": {
            "get": {
                "summary": "Liveness: the process answers (reads nothing)",
                "tags": ["health"],
                "security": [],
                "responses": {"200": json_object("{status, live, version}"), "400": error},
            }
        },
        "/health": {
            "get": {
                "summary": "Readiness: the database answers; projector lag, quarantined events",
                "tags": ["health"],
                "security": [],
                "responses": {
                    "200": json_object(
                        "{status: ok|degraded, ready, version, database, projectorLag, "
                        "quarantinedEvents}"
                    ),
                    "400": error,
                    "503": json_object("{status: unavailable, ready: false, database}"),
                },
            }
        },
    }
