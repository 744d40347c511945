"""The pull route of an external owner: claim the continuation requests addressed to it, or retire one.

A runtime outside chatledger (a Node server, another language) that owns
conversations learns about their continuation requests by asking for them,
as the Python worker does, with a claim and a lease:

- ``POST /api/continuations/claim`` ``{owner, worker?, leaseSeconds?,
  waitSeconds?, chatId?}``: claims the oldest request of the tenant that a
  worker of ``owner`` may continue (its conversations and those owned by
  ``any``; never another owner's). With ``waitSeconds`` (up to 30, or the
  server's ``continuation_wait_seconds`` if lower) it waits for one (a long
  poll). 200 ``{"request": {...}}`` with the lease, or 204 when none came.
  Within the lease, the runtime opens the request's stream (with its
  ``requestId``), which fulfils the request; a lease that lapses lets the
  request be claimed again.
- ``POST /api/chats/{id}/continuations/retire`` ``{reason}``: the owner
  continued the turn by its own means; the pending request is retired
  (audited with the caller as actor). 200 ``{"retired": requestId | null}``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from chatledger.adapters.http.auth import Identity
from chatledger.adapters.http.errors import invalid
from chatledger.adapters.http.requests import BodyLimits, read_body, string_field
from chatledger.adapters.store import ConversationStore
from chatledger.adapters.store.turns.continuations import LEASE_SECONDS
from chatledger.projections.read_models import ContinuationRequest

__all__ = ["MAX_WAIT_SECONDS", "ContinuationEndpoints", "continuation_paths", "request_json"]

MAX_WAIT_SECONDS = 30.0
"""The longest a claim waits for a request (``waitSeconds``)."""
_POLL_SECONDS = 0.2
"""How often a waiting claim looks again."""
_MAX_LEASE_SECONDS = 600.0


def request_json(request: ContinuationRequest) -> dict[str, Any]:
    """A continuation request as the API answers it."""
    return {
        "chatId": request.chat_id,
        "requestId": request.request_id,
        "messageId": request.message_id,
        "cause": request.cause,
        "requestedAt": request.requested_at.isoformat(),
        "owner": request.owner,
        "claimedBy": request.claimed_by,
        "leaseUntil": request.lease_until.isoformat() if request.lease_until else None,
    }


class ContinuationEndpoints:
    """The pull route of external owners, on one store (``limits``: its small JSON bodies)."""

    def __init__(
        self,
        store: ConversationStore,
        identify: Callable[[Request], Identity],
        limits: BodyLimits,
        *,
        max_wait_seconds: float = MAX_WAIT_SECONDS,
    ) -> None:
        self.store, self.identify, self.limits = store, identify, limits
        self.max_wait_seconds = max_wait_seconds
        """The longest this server lets a claim wait (a ``waitSeconds`` above it is cut to it)."""

    async def claim(self, request: Request) -> Response:
        """``POST /api/continuations/claim``: the oldest request ``owner`` may continue, claimed."""
        who = self.identify(request)
        body = await read_body(request, self.limits)
        owner = string_field(body, "owner")
        assert owner is not None
        worker = string_field(body, "worker", required=False) or f"{owner}:{who.actor}"
        chat_id = string_field(body, "chatId", required=False)
        lease = _seconds(body, "leaseSeconds", LEASE_SECONDS, 1.0, _MAX_LEASE_SECONDS)
        wait = _seconds(body, "waitSeconds", 0.0, 0.0, MAX_WAIT_SECONDS)
        deadline = time.monotonic() + min(wait, self.max_wait_seconds)
        while True:
            claimed = await run_in_threadpool(
                lambda: self.store.inbox.claim_continuation(
                    worker, lease_seconds=lease, tenant=who.tenant, chat_id=chat_id, owner=owner
                )
            )
            if claimed is not None:
                return JSONResponse({"request": request_json(claimed)})
            left = deadline - time.monotonic()
            if left <= 0:
                return Response(status_code=204)
            await asyncio.sleep(min(_POLL_SECONDS, left))

    async def retire(self, request: Request) -> Response:
        """``POST /api/chats/{id}/continuations/retire``: the owner continued the turn itself."""
        who = self.identify(request)
        body = await read_body(request, self.limits)
        reason = string_field(body, "reason")
        assert reason is not None
        retired = await run_in_threadpool(
            lambda: self.store.chats.retire_continuation(
                request.path_params["chat_id"], actor=who.actor, reason=reason, tenant=who.tenant
            )
        )
        return JSONResponse({"retired": retired})


def _seconds(body: dict[str, Any], key: str, default: float, low: float, high: float) -> float:
    value = body.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
        raise invalid(f"{key!r} must be a number of seconds from {low:g} to {high:g}")
    return float(value)


def continuation_paths(limits: BodyLimits, error: dict[str, Any]) -> dict[str, Any]:
    """The OpenAPI paths of the pull route (``error``: the error response object)."""
    errors = {code: error for code in ("400", "401", "403", "404", "413", "415", "422", "503")}
    chat_id = {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}

    def body(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
        schema = {"type": "object", "properties": properties, "required": required}
        return {
            "required": True,
            "description": f"JSON, at most {limits.max_bytes} bytes",
            "content": {"application/json": {"schema": schema}},
        }

    def ok(description: str) -> dict[str, Any]:
        return {"description": description, "content": {"application/json": {}}}

    return {
        "/api/continuations/claim": {
            "post": {
                "summary": "Claim (with a lease) the oldest continuation request a worker of "
                "`owner` may continue; wait up to `waitSeconds` for one",
                "requestBody": body(
                    {
                        "owner": {"type": "string", "minLength": 1},
                        "worker": {"type": "string", "minLength": 1},
                        "chatId": {"type": "string", "minLength": 1},
                        "leaseSeconds": {"type": "number", "minimum": 1},
                        "waitSeconds": {"type": "number", "minimum": 0, "maximum": 30},
                    },
                    ["owner"],
                ),
                "responses": {
                    "200": ok("{request: {chatId, requestId, ..., owner, leaseUntil}}"),
                    "204": {"description": "no request came within waitSeconds"},
                    **errors,
                },
            }
        },
        "/api/chats/{id}/continuations/retire": {
            "post": {
                "summary": "Retire the pending continuation request: its owner continued "
                "the turn by its own means",
                "parameters": [chat_id],
                "requestBody": body({"reason": {"type": "string", "minLength": 1}}, ["reason"]),
                "responses": {"200": ok("{retired: requestId | null}"), **errors},
            }
        },
    }
