"""The JSON routes of compaction and usage: a conversation's compactions and its usage ledger.

- ``GET /api/chats/{id}/compactions[?atVersion=N]``: the compactions (who, when,
  why, the summary, the messages each stands in for in model input);
- ``POST /api/chats/{id}/compactions`` ``{fromMessageId, toMessageId, summary, reason?}``:
  let a summary stand in for a range in model input (the caller is the actor);
- ``GET /api/chats/{id}/usage``: the conversation's usage entries and their total;
- ``POST /api/chats/{id}/usage`` ``{inputTokens?, outputTokens?, totalTokens?, ...,
  model?, messageId?, step?, source?}``: record a usage (``UsageRecorded``).

Each reads or writes the caller's tenant only, as every chat route.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from chatledger.adapters.http.auth import Identity
from chatledger.adapters.http.errors import invalid
from chatledger.adapters.http.requests import BodyLimits, int_param, read_body, string_field
from chatledger.adapters.store import ConversationStore
from chatledger.adapters.store.usage import conversation_usage
from chatledger.domain.usage import SOURCES
from chatledger.projections.usage import rollup

__all__ = ["LedgerEndpoints", "ledger_paths", "ledger_routes"]

_COUNTS = ("inputTokens", "outputTokens", "totalTokens", "reasoningTokens", "cachedInputTokens")
_CHATS = "/api/chats/{chat_id:path}"


class LedgerEndpoints:
    """The compaction and usage routes on one store, for the identity ``identify`` gives each request."""

    def __init__(
        self,
        store: ConversationStore,
        identify: Callable[[Request], Identity],
        limits: Mapping[str, BodyLimits],
    ) -> None:
        self.store = store
        self.identify = identify
        self.limits = limits

    async def compactions(self, request: Request) -> Response:
        """``GET /api/chats/{id}/compactions[?atVersion=N]``."""
        tenant, chat_id = self.identify(request).tenant, request.path_params["chat_id"]
        at_version = int_param(request, "atVersion", minimum=1)
        found = await run_in_threadpool(
            self.store.reads.compactions, chat_id, tenant=tenant, at_version=at_version
        )
        return JSONResponse({"id": chat_id, "compactions": found})

    async def compact(self, request: Request) -> Response:
        """``POST /api/chats/{id}/compactions`` ``{fromMessageId, toMessageId, summary, reason?}``."""
        who = self.identify(request)
        chat_id = request.path_params["chat_id"]
        body = await read_body(request, self.limits["messages"])
        first, last = string_field(body, "fromMessageId"), string_field(body, "toMessageId")
        summary = string_field(body, "summary")
        reason = body.get("reason")
        if reason is not None and not isinstance(reason, str):
            raise invalid("'reason' must be a string")
        assert first is not None and last is not None and summary is not None
        count = await run_in_threadpool(
            lambda: self.store.chats.compact(
                chat_id, from_message_id=first, to_message_id=last, summary=summary,
                actor=who.actor, reason=reason, tenant=who.tenant,
            )
        )  # fmt: skip
        found = await run_in_threadpool(self.store.reads.compactions, chat_id, tenant=who.tenant)
        return JSONResponse({"id": chat_id, "count": count, "compaction": found[-1]}, 201)

    async def usage(self, request: Request) -> Response:
        """``GET /api/chats/{id}/usage``: the entries, in log order, and their total."""
        tenant, chat_id = self.identify(request).tenant, request.path_params["chat_id"]
        entries = await run_in_threadpool(conversation_usage, self.store, chat_id, tenant=tenant)
        total = rollup(entries, "conversation")
        return JSONResponse(
            {
                "id": chat_id,
                "entries": [entry.to_json() for entry in entries],
                "total": total[0].to_json() if total else None,
            }
        )

    async def record_usage(self, request: Request) -> Response:
        """``POST /api/chats/{id}/usage`` ``{inputTokens?, ..., model?, messageId?, step?, source?}``."""
        who = self.identify(request)
        chat_id = request.path_params["chat_id"]
        body = await read_body(request, self.limits["approvals"])
        unknown = sorted(set(body) - {*_COUNTS, "model", "messageId", "step", "source"})
        if unknown:
            raise invalid(f"unknown field(s) {[key[:40] for key in unknown]}")
        step = body.get("step")
        if step is not None and (isinstance(step, bool) or not isinstance(step, int)):
            raise invalid("'step' must be a whole number (the model call, from 1)")
        usage = {key: body[key] for key in _COUNTS if key in body}
        await run_in_threadpool(
            lambda: self.store.chats.record_usage(
                chat_id, usage, model=string_field(body, "model", required=False),
                message_id=string_field(body, "messageId", required=False), step=step,
                source=string_field(body, "source", required=False) or "app",
                actor=who.actor, tenant=who.tenant,
            )
        )  # fmt: skip
        return JSONResponse({"id": chat_id, "recorded": True}, 201)


def ledger_routes(
    store: ConversationStore,
    identify: Callable[[Request], Identity],
    limits: Mapping[str, BodyLimits],
) -> list[BaseRoute]:
    """The routes of ``LedgerEndpoints``."""
    ledger = LedgerEndpoints(store, identify, limits)
    return [
        Route(f"{_CHATS}/compactions", ledger.compactions, methods=["GET"]),
        Route(f"{_CHATS}/compactions", ledger.compact, methods=["POST"]),
        Route(f"{_CHATS}/usage", ledger.usage, methods=["GET"]),
        Route(f"{_CHATS}/usage", ledger.record_usage, methods=["POST"]),
    ]


def ledger_paths(
    limits: Mapping[str, BodyLimits], error: dict[str, Any]
) -> dict[str, dict[str, Any]]:
    """The OpenAPI operations of the ledger routes (``error``: the error answer)."""
    chat_id = {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}
    errors = {code: error for code in ("400", "401", "403", "404", "409", "413", "415", "422")}

    def body(properties: dict[str, Any], required: list[str], limit: BodyLimits) -> dict[str, Any]:
        schema = {"type": "object", "properties": properties, "required": required}
        return {
            "required": True,
            "description": f"JSON (`Content-Type: application/json`), at most {limit.max_bytes} bytes",
            "content": {
                "application/json": {"schema": schema, "x-chatledger-limits": limit.describe()}
            },
        }

    def ok(description: str) -> dict[str, Any]:
        return {
            "description": description,
            "content": {"application/json": {"schema": {"type": "object"}}},
        }

    text = {"type": "string", "minLength": 1}
    count = {"type": "integer", "minimum": 0}
    summary_limits = limits.get("messages") or BodyLimits(4_064_000)
    usage_limits = limits.get("approvals") or BodyLimits(64_000)
    return {
        "/api/chats/{id}/compactions": {
            "get": {
                "summary": "The conversation's compactions (summaries standing in for ranges in model input)",
                "parameters": [
                    chat_id,
                    {
                        "name": "atVersion",
                        "in": "query",
                        "required": False,
                        "schema": {"type": "integer", "minimum": 1},
                    },
                ],
                "responses": {
                    "200": ok(
                        "{id, compactions: [{from, to, count, summary, reason, actor, time, version, messageIds}]}"
                    ),
                    **errors,
                },
            },
            "post": {
                "summary": "Let a summary stand in for a range of messages in model input",
                "description": "The messages stay in every view and the audit; model messages "
                "show one system message with the summary in their place. The range must leave "
                "the latest message out and cover an earlier compaction whole, or not at all.",
                "parameters": [chat_id],
                "requestBody": body(
                    {
                        "fromMessageId": text,
                        "toMessageId": text,
                        "summary": text,
                        "reason": {"type": "string"},
                    },
                    ["fromMessageId", "toMessageId", "summary"],
                    summary_limits,
                ),
                "responses": {"201": ok("{id, count, compaction}"), **errors},
            },
        },
        "/api/chats/{id}/usage": {
            "get": {
                "summary": "The conversation's token usage (stream metadata and recorded usage) and its total",
                "parameters": [chat_id],
                "responses": {"200": ok("{id, entries, total}"), **errors},
            },
            "post": {
                "summary": "Record the token usage of a model call (step) or a turn",
                "parameters": [chat_id],
                "requestBody": body(
                    {
                        **dict.fromkeys(_COUNTS, count),
                        "model": text,
                        "messageId": text,
                        "step": {"type": "integer", "minimum": 1},
                        "source": {"type": "string", "enum": list(SOURCES)},
                    },
                    [],
                    usage_limits,
                ),
                "responses": {"201": ok("{id, recorded: true}"), **errors},
            },
        },
    }
