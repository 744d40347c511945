"""The OpenAPI description of the standing approval grant routes (``adapters/http/grants.py``)."""

from __future__ import annotations

from typing import Any

from chatledger.adapters.http.requests import BodyLimits

__all__ = ["grant_paths"]

_GRANT = {"type": "object", "description": "a grant: {grantId, scope, toolName, input, chatId, "
          "actor, reason, grantedAt, expiresAt, revokedAt, revokedBy, revokeReason, expiredAt, "
          "uses, status: live|revoked|expired}"}  # fmt: skip


def _body(limits: BodyLimits, required: list[str], **properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "required": bool(required),
        "description": f"JSON, at most {limits.max_bytes} bytes",
        "content": {
            "application/json": {
                "schema": {"type": "object", "properties": properties, "required": required}
            }
        },
    }


def _answer(code: str, what: str) -> dict[str, Any]:
    return {code: {"description": what, "content": {"application/json": {"schema": _GRANT}}}}


def grant_paths(limits: BodyLimits, error: dict[str, Any]) -> dict[str, Any]:
    """The OpenAPI paths of the grant routes (``error``: the error response object)."""
    scope = {"type": "string", "enum": ["input", "tool", "conversation"]}
    common: dict[str, dict[str, Any]] = {
        "reason": {"type": "string"},
        "forSeconds": {"type": "number", "exclusiveMinimum": 0},
    }
    errors = {code: error for code in ("400", "401", "403", "404", "413", "415", "422")}
    chat_id = {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}
    grant_id = {"name": "grant_id", "in": "path", "required": True, "schema": {"type": "string"}}
    return {
        "/api/grants": {
            "get": {
                "summary": "The tenant's standing approval grants, oldest first (?all=1: ended ones too)",
                "parameters": [
                    {"name": "all", "in": "query", "required": False, "schema": {"type": "string"}}
                ],
                "responses": {
                    "200": {
                        "description": "{grants: [grant]}",
                        "content": {"application/json": {"schema": {"type": "object"}}},
                    },
                    "401": error,
                    "403": error,
                },
            },
            "post": {
                "summary": "Give a standing grant: later calls it covers are approved automatically",
                "requestBody": _body(
                    limits,
                    ["scope"],
                    scope=scope,
                    toolName={"type": "string"},
                    input={},
                    chatId={"type": "string"},
                    **common,
                ),
                "responses": {**_answer("201", "the grant"), **errors},
            },
        },
        "/api/chats/{id}/grants": {
            "post": {
                "summary": "Approve a call awaiting approval and don't ask again: a grant for its "
                "exact input (scope input), its tool, or this conversation",
                "parameters": [chat_id],
                "requestBody": _body(
                    limits,
                    [],
                    toolCallId={"type": "string"},
                    approvalId={"type": "string"},
                    scope=scope,
                    anyConversation={"type": "boolean"},
                    autoContinue={"type": "boolean"},
                    **common,
                ),
                "responses": {**_answer("201", "the grant"), **errors, "404": error, "409": error},
            }
        },
        "/api/grants/{grant_id}/revoke": {
            "post": {
                "summary": "Revoke a grant: it approves nothing from now on",
                "parameters": [grant_id],
                "requestBody": _body(limits, [], reason={"type": "string"}),
                "responses": {**_answer("200", "the grant, revoked"), **errors, "404": error},
            }
        },
    }
