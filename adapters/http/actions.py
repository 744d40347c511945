"""The JSON action endpoints: approvals, tool outputs and stop.

An approval or tool output that completes the turn requests its
continuation; the app then runs it at once (``continuations.continue_now``)
unless it leaves continuations to a worker. A stop ends the answer this
process writes, or closes the stream another process writes (which notices
at its next write).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from chatledger.adapters.http.auth import Identity
from chatledger.adapters.http.errors import invalid
from chatledger.adapters.http.requests import (
    BodyLimits,
    auto_continue_field,
    read_body,
    string_field,
)
from chatledger.adapters.store import ActionResult, ConversationStore
from chatledger.adapters.store.turns.continuations import ContinuationRunner
from chatledger.adapters.store.turns.runner import TurnRunner

__all__ = ["ActionEndpoints", "action_json"]


def action_json(result: ActionResult) -> dict[str, Any]:
    """An action's result as the API answers it."""
    return {
        "toolCallId": result.tool_call_id,
        "changed": result.changed,
        "state": result.state,
        "continuationRequested": result.continuation_requested,
    }


class ActionEndpoints:
    """The action endpoints on one store, for the identity ``identify`` gives each request."""

    def __init__(
        self,
        store: ConversationStore,
        identify: Callable[[Request], Identity],
        *,
        limits: dict[str, BodyLimits],
        runner: TurnRunner,
        continuations: ContinuationRunner | None,
    ) -> None:
        self.store = store
        self.identify = identify
        self.limits = limits
        self.runner = runner
        self.continuations = continuations

    async def respond_to_approval(self, request: Request) -> Response:
        """``POST /api/chats/{id}/approvals`` ``{approvalId | toolCallId, approved, reason?, autoContinue?}``."""
        who = self.identify(request)
        tenant = who.tenant
        body = await read_body(request, self.limits["approvals"])
        approved = body.get("approved")
        if not isinstance(approved, bool):
            raise invalid("'approved' must be true or false")
        approval_id = string_field(body, "approvalId", required=False)
        tool_call_id = string_field(body, "toolCallId", required=False)
        if (approval_id is None) == (tool_call_id is None):
            raise invalid("give exactly one of 'approvalId' and 'toolCallId'")
        reason = body.get("reason")
        if reason is not None and not isinstance(reason, str):
            raise invalid("'reason' must be a string")
        result = await run_in_threadpool(
            lambda: self.store.chats.respond_to_approval(
                request.path_params["chat_id"],
                approved=approved,
                approval_id=approval_id,
                tool_call_id=tool_call_id,
                reason=reason,
                actor=who.actor,
                auto_continue=auto_continue_field(body),
                tenant=tenant,
            )
        )
        return await self._answered(tenant, request.path_params["chat_id"], result)

    async def add_tool_output(self, request: Request) -> Response:
        """``POST /api/chats/{id}/tool-outputs`` ``{toolCallId, output | errorText, autoContinue?}``."""
        who = self.identify(request)
        tenant = who.tenant
        body = await read_body(request, self.limits["tool-outputs"])
        tool_call_id = string_field(body, "toolCallId")
        assert tool_call_id is not None
        has_output, error_text = "output" in body, body.get("errorText")
        if has_output == (error_text is not None):
            raise invalid("give exactly one of 'output' and 'errorText'")
        if error_text is not None and not isinstance(error_text, str):
            raise invalid("'errorText' must be a string")
        result = await run_in_threadpool(
            lambda: self.store.chats.add_tool_output(
                request.path_params["chat_id"],
                tool_call_id,
                output=body.get("output"),
                state="output-available" if has_output else "output-error",
                error_text=error_text,
                actor=who.actor,
                auto_continue=auto_continue_field(body),
                tenant=tenant,
            )
        )
        return await self._answered(tenant, request.path_params["chat_id"], result)

    async def stop(self, request: Request) -> Response:
        """``POST /api/chats/{id}/stop`` ``{reason?}``: stop the answer being written, if any.

        The responder is stopped (in this process, or, through another server
        process, by closing its stream, which that process notices at its next
        write); the stream closes as ``aborted`` with who stopped it and why,
        and followers get an ``abort`` chunk. Stopping when nothing streams
        changes nothing.
        """
        who = self.identify(request)
        tenant = who.tenant
        chat_id = request.path_params["chat_id"]
        body = await read_body(request, self.limits["stop"], optional=True)
        reason = body.get("reason")
        if reason is not None and not isinstance(reason, str):
            raise invalid("'reason' must be a string")
        actor = who.actor
        status = await run_in_threadpool(self.store.reads.status, chat_id, tenant=tenant)
        stream_id = status.stream_id
        if stream_id is None:
            return JSONResponse({"stopped": False, "streamId": None})
        if not await self.runner.stop(stream_id, actor, reason):  # another process writes it
            why = f"stopped by {actor}" + (f": {reason}" if reason else "")
            await run_in_threadpool(
                lambda: self.store.close_stream(
                    chat_id, stream_id, "aborted", why, tenant=tenant, actor=actor
                )
            )
        return JSONResponse({"stopped": True, "streamId": stream_id})

    async def _answered(self, tenant: str, chat_id: str, result: ActionResult) -> Response:
        """The action's JSON answer, once the continuation it requested (if any) is streaming.

        So a client that resumes (``GET /api/chat/{id}/stream``) right after
        the answer finds the continuation open. An app that runs no
        continuations leaves it to a worker (``chatledger worker``).
        """
        if result.continuation_requested and self.continuations is not None:
            await self.continuations.continue_now(tenant, chat_id)
        return JSONResponse(action_json(result))
