"""The operator routes: erase, redact, export a conversation (operator tokens only).

An operator token names the tenant ``*`` (``TOKEN=*:USER`` in the token
file or ``$CHATLEDGER_TOKENS``; ``http/auth.py``). It reaches the chats of
every tenant, named by a ``tenant`` field (erase: in the JSON body; export:
a query parameter; default: the store's default tenant), and nothing else:
tenant tokens get 403 here, operator tokens 403 on the tenant routes.
Without tokens configured the operator routes answer 403 to everyone.

* ``POST /api/chat/{id}/erase`` ``{"reason": ..., "tenant": ...}``: erases
  the conversation (``store.operations.erase``) as the token's user; 200
  with what was erased, 404 unknown, 410 already erased.
* ``POST /api/chat/{id}/redact`` ``{"reason", "toolCallId" | "messageId",
  "fields", "tenant"}``: hides a tool call's input/output or a message's
  parts from every view (``store.redact``); 200 ``{"redacted": true}``, or
  ``false`` when it already was; 404 unknown chat or call, 422 bad fields.
* ``GET /api/chat/{id}/export[?tenant=T&atVersion=N]``: the bundle
  ``chatledger export`` writes (JSON Lines), to check with
  ``chatledger verify-export``; 410 for an erased conversation, 422 when no
  seal covers it yet.
* ``GET /api/subjects/{user}/conversations[?tenant=T]``: the conversations
  of the tenant in which the user id is the actor of an event
  (``store.operations.conversations_of``): what erasing them would erase.
* ``POST /api/subjects/{user}/erase`` ``{"reason": ..., "tenant": ...}``:
  erases every one of them (``store.operations.erase_subject``) as the
  token's user; 200 with the combined receipt and the pseudonym the audit
  names the user by from now on; 422 when the reason names the user.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from chatledger.adapters.http.auth import Identity
from chatledger.adapters.http.errors import invalid
from chatledger.adapters.http.requests import BodyLimits, int_param, read_body, string_field
from chatledger.adapters.store import ConversationStore

__all__ = ["OperatorEndpoints", "operator_paths"]

BUNDLE_MEDIA_TYPE = "application/x-ndjson"


class OperatorEndpoints:
    """The operator routes on one store; ``operator`` authenticates and refuses non-operators."""

    def __init__(
        self, store: ConversationStore, operator: Callable[[Request], Identity], limits: BodyLimits
    ) -> None:
        self.store = store
        self.operator = operator
        self.limits = limits

    def routes(self) -> list[Route]:
        """The routes to mount."""
        return [
            Route("/api/chat/{chat_id:path}/erase", self.erase, methods=["POST"]),
            Route("/api/chat/{chat_id:path}/redact", self.redact, methods=["POST"]),
            Route("/api/chat/{chat_id:path}/export", self.export, methods=["GET"]),
            Route("/api/subjects/{user:path}/conversations", self.subject, methods=["GET"]),
            Route("/api/subjects/{user:path}/erase", self.erase_subject, methods=["POST"]),
        ]

    def _tenant(self, given: str | None) -> str:
        return given or self.store.tenant

    async def erase(self, request: Request) -> Response:
        """``POST /api/chat/{id}/erase``: erase the conversation for good."""
        who = self.operator(request)
        body = await read_body(request, self.limits)
        reason = string_field(body, "reason")
        tenant = self._tenant(string_field(body, "tenant", required=False))
        chat_id = request.path_params["chat_id"]
        report = await run_in_threadpool(
            lambda: self.store.operations.erase(
                chat_id, actor=who.actor, reason=reason or "", tenant=tenant
            )
        )
        return JSONResponse(
            {
                "erased": {
                    "chatId": chat_id,
                    "tenant": report.tenant,
                    "events": report.events,
                    "erasedAt": report.erased_at.isoformat(),
                    "actor": report.actor,
                    "reason": report.reason,
                    "removed": list(report.removed),
                },
                "files": report.compaction.to_json() if report.compaction else None,
            }
        )

    async def redact(self, request: Request) -> Response:
        """``POST /api/chat/{id}/redact``: hide a tool call's input/output or a message's parts."""
        who = self.operator(request)
        body = await read_body(request, self.limits)
        reason = string_field(body, "reason")
        tenant = self._tenant(string_field(body, "tenant", required=False))
        tool_call_id = string_field(body, "toolCallId", required=False)
        message_id = string_field(body, "messageId", required=False)
        fields = body.get("fields")
        if fields is not None and (
            not isinstance(fields, list) or not all(isinstance(f, str) and f for f in fields)
        ):
            raise invalid("'fields' must be a list of non-empty strings (e.g. [\"input\"])")
        chat_id = request.path_params["chat_id"]
        changed = await run_in_threadpool(
            lambda: self.store.redact(
                chat_id,
                tool_call_id=tool_call_id,
                message_id=message_id,
                fields=fields,
                actor=who.actor,
                reason=reason or "",
                tenant=tenant,
            )
        )
        return JSONResponse({"redacted": changed})

    async def export(self, request: Request) -> Response:
        """``GET /api/chat/{id}/export``: the conversation's verifiable bundle (JSON Lines)."""
        self.operator(request)
        tenant = self._tenant(request.query_params.get("tenant") or None)
        chat_id = request.path_params["chat_id"]
        at_version = int_param(request, "atVersion", minimum=1)
        out = io.StringIO()
        await run_in_threadpool(
            lambda: self.store.operations.export(chat_id, out, tenant=tenant, at_version=at_version)
        )
        return Response(out.getvalue(), media_type=BUNDLE_MEDIA_TYPE)

    async def subject(self, request: Request) -> Response:
        """``GET /api/subjects/{user}/conversations``: what erasing the user would erase."""
        self.operator(request)
        tenant = self._tenant(request.query_params.get("tenant") or None)
        subject = request.path_params["user"]
        found = await run_in_threadpool(
            lambda: self.store.operations.conversations_of(subject, tenant=tenant)
        )
        return JSONResponse(
            {
                "subject": subject,
                "tenant": tenant,
                "conversations": [
                    {"id": str(c.conversation), "chatId": c.chat_id, "erased": c.erased}
                    for c in found
                ],
            }
        )

    async def erase_subject(self, request: Request) -> Response:
        """``POST /api/subjects/{user}/erase``: erase every conversation the user took part in."""
        who = self.operator(request)
        body = await read_body(request, self.limits)
        reason = string_field(body, "reason")
        tenant = self._tenant(string_field(body, "tenant", required=False))
        subject = request.path_params["user"]
        report = await run_in_threadpool(
            lambda: self.store.operations.erase_subject(
                subject, actor=who.actor, reason=reason or "", tenant=tenant
            )
        )
        return JSONResponse(
            {
                "subject": subject,
                "tenant": report.tenant,
                "pseudonym": report.pseudonym,
                "erased": [
                    {
                        "chatId": r.chat_id,
                        "events": r.events,
                        "erasedAt": r.erased_at.isoformat(),
                        "removed": list(r.removed),
                    }
                    for r in report.erased
                ],
                "pseudonymised": [str(key) for key in report.pseudonymised],
                "failed": [
                    {"chatId": c.chat_id, "id": str(c.conversation), "error": why}
                    for c, why in report.failed
                ],
                "files": report.compaction.to_json() if report.compaction else None,
            }
        )


def operator_paths(limits: BodyLimits, error: dict[str, Any]) -> dict[str, Any]:
    """The OpenAPI paths of the operator routes (``error``: the error response object)."""
    chat_id = {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}
    tenant = {
        "name": "tenant",
        "in": "query",
        "required": False,
        "description": "the chat's tenant (default: the store's default tenant)",
        "schema": {"type": "string"},
    }
    errors = {code: error for code in ("400", "401", "403", "404", "410", "422", "503")}
    return {
        **_subject_paths(limits, error, tenant),
        "/api/chat/{id}/erase": {
            "post": {
                "summary": "Operator: erase the conversation for good (crypto-shredding); "
                "its audit timeline keeps kinds, actors and times",
                "parameters": [chat_id],
                "requestBody": _reason_body(limits),
                "responses": {
                    "200": {
                        "description": "{erased: {chatId, tenant, events, erasedAt, actor, reason, removed}, "
                        "files: {status: done|pending, cleaned, pending, outside}}",
                        "content": {"application/json": {"schema": {"type": "object"}}},
                    },
                    **errors,
                    "409": error,
                    "413": error,
                    "415": error,
                },
            }
        },
        "/api/chat/{id}/redact": {
            "post": {
                "summary": "Operator: hide one tool call's input/output or one message's parts "
                "from every view ([redacted]); the log keeps the original",
                "parameters": [chat_id],
                "requestBody": _reason_body(
                    limits,
                    "exactly one of toolCallId (fields: input, output) and messageId "
                    "(fields: part kinds)",
                    toolCallId={"type": "string", "minLength": 1},
                    messageId={"type": "string", "minLength": 1},
                    fields={"type": "array", "items": {"type": "string"}},
                ),
                "responses": {
                    "200": {
                        "description": "{redacted}: false when it already was",
                        "content": {"application/json": {"schema": {"type": "object"}}},
                    },
                    **errors,
                    "409": error,
                    "413": error,
                    "415": error,
                },
            }
        },
        "/api/chat/{id}/export": {
            "get": {
                "summary": "Operator: the conversation's verifiable bundle (chatledger-export/1, "
                "JSON Lines; check it with chatledger verify-export)",
                "parameters": [
                    chat_id,
                    tenant,
                    {
                        "name": "atVersion",
                        "in": "query",
                        "required": False,
                        "description": "export versions 1..N only",
                        "schema": {"type": "integer", "minimum": 1},
                    },
                ],
                "responses": {
                    "200": {
                        "description": "the bundle",
                        "content": {BUNDLE_MEDIA_TYPE: {"schema": {"type": "string"}}},
                    },
                    **errors,
                },
            }
        },
    }


def _subject_paths(
    limits: BodyLimits, error: dict[str, Any], tenant: dict[str, Any]
) -> dict[str, Any]:
    """The OpenAPI paths of the routes by data subject."""
    user = {
        "name": "user",
        "in": "path",
        "required": True,
        "description": "the user id as the audit names them (the actor of their events)",
        "schema": {"type": "string"},
    }
    # 404: a user id the path cannot carry (a line break) matches no route
    errors = {code: error for code in ("400", "401", "403", "404", "422", "503")}
    found = {"application/json": {"schema": {"type": "object"}}}
    return {
        "/api/subjects/{user}/conversations": {
            "get": {
                "summary": "Operator: the tenant's conversations in which the user is the actor "
                "of an event (what erasing the user would erase)",
                "parameters": [user, tenant],
                "responses": {
                    "200": {
                        "description": "{subject, tenant, conversations: [{id, chatId, erased}]}",
                        "content": found,
                    },
                    **errors,
                },
            }
        },
        "/api/subjects/{user}/erase": {
            "post": {
                "summary": "Operator: erase every conversation of the tenant the user took part "
                "in; the audit skeleton names a pseudonym instead of the user",
                "parameters": [user],
                "requestBody": _reason_body(limits, "the reason must not contain the user id"),
                "responses": {
                    "200": {
                        "description": "{subject, tenant, pseudonym, erased: [{chatId, events, "
                        "erasedAt, removed}], pseudonymised, failed: [{chatId, id, error}], files}",
                        "content": found,
                    },
                    **errors,
                    "409": error,
                    "413": error,
                    "415": error,
                },
            }
        },
    }


def _reason_body(limits: BodyLimits, note: str = "", **more: dict[str, Any]) -> dict[str, Any]:
    """A JSON request body with a required ``reason`` and an optional ``tenant`` (and ``more``)."""
    return {
        "required": True,
        "description": f"JSON, at most {limits.max_bytes} bytes" + (f"; {note}" if note else ""),
        "content": {
            "application/json": {
                "schema": {
                    "type": "object",
                    "properties": {
                        "reason": {"type": "string", "minLength": 1},
                        "tenant": {"type": "string", "minLength": 1},
                        **more,
                    },
                    "required": ["reason"],
                }
            }
        },
    }
