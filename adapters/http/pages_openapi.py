"""The OpenAPI description of ``GET /api/chats`` and of the pages (``pages.py``), merged into ``/openapi.json``."""

from __future__ import annotations

from typing import Any

from chatledger.domain.timeline import KINDS
from chatledger.projections.listing import MAX_LIMIT, STATUSES

__all__ = ["pages_paths"]

_ERROR = {"$ref": "#/components/responses/Error"}


def _query(name: str, description: str, schema: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "name": name,
        "in": "query",
        "required": False,
        "description": description,
        "schema": schema or {"type": "string"},
    }


def _html(summary: str, parameters: list[dict[str, Any]], *, token: bool) -> dict[str, Any]:
    responses: dict[str, Any] = {
        "200": {"description": "HTML", "content": {"text/html": {"schema": {"type": "string"}}}}
    }
    operation: dict[str, Any] = {"summary": summary, "tags": ["pages"], "parameters": parameters}
    if token:
        responses.update({code: _ERROR for code in ("401", "404", "422")})
    else:
        operation["security"] = []
    operation["responses"] = responses
    return {"get": operation}


def pages_paths() -> dict[str, Any]:
    """Path items: the conversation list API, the page shells and their ``/ui`` fragments."""
    chat = {**_query("id", "the chat id"), "required": True}
    listing = [
        _query("q", "words that must all occur in the title or message text (prefixes)"),
        _query("status", "only this status", {"type": "string", "enum": list(STATUSES)}),
        _query("updatedBefore", "changed before (ISO 8601)", {"type": "string"}),
        _query("updatedAfter", "changed after (ISO 8601)", {"type": "string"}),
        _query("limit", "rows per page", {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT}),
        _query("cursor", "the nextCursor of the previous page"),
    ]
    return {
        "/api/chats": {
            "get": {
                "summary": "The tenant's conversations, newest change first (search, filters, cursor)",
                "parameters": listing,
                "responses": {
                    "200": {
                        "description": "{conversations: [{id, title, titled, createdAt, "
                        "updatedAt, version, messageCount, status, pendingApprovals, "
                        "metadata}], nextCursor}",
                        "content": {"application/json": {"schema": {"type": "object"}}},
                    },
                    "401": _ERROR,
                    "422": _ERROR,
                },
            }
        },
        "/": _html("Page: the conversation list", [], token=False),
        "/conversation": _html("Page: one conversation", [chat], token=False),
        "/approvals": _html("Page: the approvals inbox", [], token=False),
        "/overview": _html("Page: the tenant's figures and charts", [], token=False),
        "/docs": _html(
            "Page: this API reference, for people (from /openapi.json)", [], token=False
        ),
        "/verify": _html("Page: verify one conversation", [chat], token=False),
        "/chat": _html(
            "Page: a chat on the AI SDK's useChat",
            [{**chat, "required": False, "description": "the chat id (default: a new one)"}],
            token=False,
        ),
        "/ui/list": _html("Fragment: rows of the conversation list", listing, token=True),
        "/ui/conversation": _html(
            "Fragment: messages at a version, what it changed, the timeline",
            [
                chat,
                _query("at", "the version to show (default: now)", {"type": "integer"}),
                _query("kind", "timeline kind filter", {"type": "string", "enum": list(KINDS)}),
                _query("actor", "timeline actor filter"),
                _query(
                    "page",
                    "timeline page, 50 rows each (default: the one holding the version)",
                    {"type": "integer", "minimum": 1},
                ),
            ],
            token=True,
        ),
        "/ui/approvals": _html("Fragment: the calls awaiting approval", [], token=True),
        "/ui/overview": _html(
            "Fragment: the figures and their SVG charts",
            [_query("days", "days of daily counts (1-366, default 30)", {"type": "integer"})],
            token=True,
        ),
        "/ui/verify": _html("Fragment: the verify report of one conversation", [chat], token=True),
    }
