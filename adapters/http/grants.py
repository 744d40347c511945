"""The standing approval grant routes: approve with "don't ask again", give, list, revoke.

- ``GET /api/grants`` (``?all=1``: ended ones too): the tenant's grants.
- ``POST /api/chats/{id}/grants`` ``{approvalId | toolCallId, scope?, forSeconds?, reason?,
  anyConversation?, autoContinue?}``: approve that call and grant the same for what the
  scope names (``input``, the default: this tool with exactly this input; ``tool``;
  ``conversation``). The approval continues the turn as ``POST .../approvals`` does.
- ``POST /api/grants`` ``{scope, toolName?, input?, chatId?, forSeconds?, reason?}``: give
  a grant without a call to approve.
- ``POST /api/grants/{grantId}/revoke`` ``{reason?}``.

Every grant and revocation is recorded as the request's actor, in its tenant.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from chatledger.adapters.http.auth import Identity
from chatledger.adapters.http.errors import invalid
from chatledger.adapters.http.requests import (
    BodyLimits,
    auto_continue_field,
    read_body,
    string_field,
)

if TYPE_CHECKING:
    from chatledger.adapters.store import ConversationStore
    from chatledger.adapters.store.turns.continuations import ContinuationRunner

__all__ = ["GrantEndpoints"]


def _seconds(body: dict[str, Any]) -> float | None:
    value = body.get("forSeconds")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise invalid("'forSeconds' must be a number of seconds (leave it out: until revoked)")
    return float(value)


def _reason(body: dict[str, Any]) -> str | None:
    reason = body.get("reason")
    if reason is not None and not isinstance(reason, str):
        raise invalid("'reason' must be a string")
    return reason


class GrantEndpoints:
    """The grant routes on one store, for the identity ``identify`` gives each request."""

    def __init__(
        self,
        store: ConversationStore,
        identify: Callable[[Request], Identity],
        limits: BodyLimits,
        continuations: ContinuationRunner | None,
    ) -> None:
        self.store, self.identify, self.limits = store, identify, limits
        self.continuations = continuations

    def routes(self) -> list[Route]:
        """The routes, to list in the app before the pages."""
        return [
            Route("/api/grants", self.list, methods=["GET"]),
            Route("/api/grants", self.give, methods=["POST"]),
            Route("/api/grants/{grant_id}/revoke", self.revoke, methods=["POST"]),
            Route("/api/chats/{chat_id:path}/grants", self.approve, methods=["POST"]),
        ]

    async def list(self, request: Request) -> Response:
        """``GET /api/grants``: ``{"grants": [...]}``, oldest first."""
        who = self.identify(request)
        every = request.query_params.get("all") in ("1", "true")
        grants = await run_in_threadpool(
            lambda: self.store.grants.list(tenant=who.tenant, include_ended=every)
        )
        now = self.store.grants.clock()
        return JSONResponse({"grants": [grant.to_json(now) for grant in grants]})

    async def approve(self, request: Request) -> Response:
        """``POST /api/chats/{id}/grants``: approve the call and give the grant; the grant's JSON."""
        who = self.identify(request)
        chat_id = request.path_params["chat_id"]
        body = await read_body(request, self.limits)
        approval_id = string_field(body, "approvalId", required=False)
        tool_call_id = string_field(body, "toolCallId", required=False)
        if (approval_id is None) == (tool_call_id is None):
            raise invalid("give exactly one of 'approvalId' and 'toolCallId'")
        scope = string_field(body, "scope", required=False) or "input"
        anywhere = body.get("anyConversation", True)
        if not isinstance(anywhere, bool):
            raise invalid("'anyConversation' must be true or false")
        grant = await run_in_threadpool(
            lambda: self.store.grants.approve(
                chat_id, approval_id=approval_id, tool_call_id=tool_call_id, scope=scope,
                for_seconds=_seconds(body), actor=who.actor, reason=_reason(body),
                any_conversation=anywhere, auto_continue=auto_continue_field(body),
                tenant=who.tenant,
            )
        )  # fmt: skip
        if self.continuations is not None:
            status = await run_in_threadpool(self.store.reads.status, chat_id, tenant=who.tenant)
            if status.continuation_request is not None:
                await self.continuations.continue_now(who.tenant, chat_id)
        return JSONResponse(grant.to_json(self.store.grants.clock()), status_code=201)

    async def give(self, request: Request) -> Response:
        """``POST /api/grants``: give a grant that answers no call now; its JSON."""
        who = self.identify(request)
        body = await read_body(request, self.limits)
        scope = string_field(body, "scope")
        assert scope is not None
        grant = await run_in_threadpool(
            lambda: self.store.grants.give(
                scope=scope, tool_name=string_field(body, "toolName", required=False),
                input=body.get("input"), chat_id=string_field(body, "chatId", required=False),
                actor=who.actor, reason=_reason(body), for_seconds=_seconds(body),
                tenant=who.tenant,
            )
        )  # fmt: skip
        return JSONResponse(grant.to_json(self.store.grants.clock()), status_code=201)

    async def revoke(self, request: Request) -> Response:
        """``POST /api/grants/{grantId}/revoke``: the grant, revoked."""
        who = self.identify(request)
        body = await read_body(request, self.limits, optional=True)
        grant = await run_in_threadpool(
            lambda: self.store.grants.revoke(
                request.path_params["grant_id"], actor=who.actor, reason=_reason(body),
                tenant=who.tenant,
            )
        )  # fmt: skip
        return JSONResponse(grant.to_json(self.store.grants.clock()))
