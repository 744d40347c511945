"""The JSON read endpoints: messages, status, the audit history, model messages, the approvals inbox.

Each reads the caller's tenant only (``auth``) and answers JSON; the shapes
are camelCase, as the rest of the API.
"""

from __future__ import annotations

from collections.abc import Callable

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from chatledger.adapters.http.auth import Identity
from chatledger.adapters.http.errors import invalid
from chatledger.adapters.http.requests import bool_param, int_param
from chatledger.adapters.store import ConversationStore
from chatledger.domain.convert import FORMATS
from chatledger.domain.timeline import KINDS

__all__ = ["ReadEndpoints"]


class ReadEndpoints:
    """The read endpoints on one store, for the identity ``identify`` gives each request."""

    def __init__(self, store: ConversationStore, identify: Callable[[Request], Identity]) -> None:
        self.store = store
        self.identify = identify

    async def messages(self, request: Request) -> Response:
        """``GET /api/chats/{id}/messages[?atVersion=N]``: the UIMessages."""
        who = self.identify(request)
        tenant = who.tenant
        chat_id = request.path_params["chat_id"]
        at_version = int_param(request, "atVersion")
        found = await run_in_threadpool(
            self.store.reads.messages, chat_id, tenant=tenant, at_version=at_version
        )
        return JSONResponse({"id": chat_id, "messages": found})

    async def status(self, request: Request) -> Response:
        """``GET /api/chats/{id}/status``: where the turn stands."""
        who = self.identify(request)
        tenant = who.tenant
        found = await run_in_threadpool(
            self.store.reads.status, request.path_params["chat_id"], tenant=tenant
        )
        return JSONResponse(found.to_json())

    async def history(self, request: Request) -> Response:
        """``GET /api/chats/{id}/history[?kind=K&actor=A&after=N&limit=N&full=true]``: the audit timeline."""
        who = self.identify(request)
        tenant = who.tenant
        kinds = request.query_params.getlist("kind") or None
        unknown = sorted(set(kinds or ()) - set(KINDS))
        if unknown:
            raise invalid(f"unknown kind(s) {unknown}; the kinds are {', '.join(KINDS)}")
        entries = await run_in_threadpool(
            self.store.reads.history,
            request.path_params["chat_id"],
            tenant=tenant,
            kinds=kinds,
            actor=request.query_params.get("actor") or None,
            after=int_param(request, "after") or 0,
            limit=int_param(request, "limit"),
            full=bool_param(request, "full"),
        )
        return JSONResponse({"entries": [entry.to_json() for entry in entries]})

    async def model_messages(self, request: Request) -> Response:
        """``GET /api/chats/{id}/model-messages?format=F[&unanswered=omit&ignoreIncompleteToolCalls=true]``.

        ``{"format", "messages"}``; Anthropic's format adds its ``system`` beside ``messages``.
        """
        who = self.identify(request)
        tenant = who.tenant
        format_ = request.query_params.get("format", "ai-sdk")
        if format_ not in FORMATS:
            raise invalid(f"unknown format {format_!r}; use one of {', '.join(FORMATS)}")
        unanswered = request.query_params.get("unanswered", "refuse")
        if unanswered not in ("refuse", "omit"):
            raise invalid(f"'unanswered' must be refuse or omit, not {unanswered!r}")
        converted = await run_in_threadpool(
            self.store.reads.model_messages,
            request.path_params["chat_id"],
            format_,
            tenant=tenant,
            at_version=int_param(request, "atVersion"),
            ignore_incomplete_tool_calls=bool_param(request, "ignoreIncompleteToolCalls"),
            unanswered=unanswered,  # type: ignore[arg-type]
        )
        if isinstance(converted, dict):  # anthropic's {system, messages}: not nested in messages
            return JSONResponse({"format": format_, **converted})
        return JSONResponse({"format": format_, "messages": converted})

    async def approvals(self, request: Request) -> Response:
        """``GET /api/approvals``: every tool call of the tenant awaiting approval, oldest first."""
        who = self.identify(request)
        tenant = who.tenant
        pending = await run_in_threadpool(self.store.inbox.pending_approvals, tenant=tenant)
        return JSONResponse(
            {
                "approvals": [
                    {
                        "chatId": item.chat_id,
                        "messageId": item.message_id,
                        "toolCallId": item.tool_call_id,
                        "toolName": item.tool_name,
                        "input": item.input,
                        "approvalId": item.approval_id,
                        "requestedAt": item.requested_at.isoformat(),
                        "ageSeconds": item.age_seconds,
                    }
                    for item in pending
                ]
            }
        )
