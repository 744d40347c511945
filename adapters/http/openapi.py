"""The HTTP app's OpenAPI 3.1 description, served at ``GET /openapi.json``.

Written by hand next to the routes; ``tests/integration/test_http_json_api.py``
checks that it lists every route and method the app serves.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from chatledger.adapters.http.branches import branch_paths
from chatledger.adapters.http.continuations import continuation_paths
from chatledger.adapters.http.grants_openapi import grant_paths
from chatledger.adapters.http.health import health_paths
from chatledger.adapters.http.ledger import ledger_paths
from chatledger.adapters.http.message_concurrency import message_concurrency_paths
from chatledger.adapters.http.metrics import metrics_paths
from chatledger.adapters.http.operator import operator_paths
from chatledger.adapters.http.pages_openapi import pages_paths
from chatledger.adapters.http.requests import MAX_INT_PARAM, BodyLimits
from chatledger.adapters.http.stats import stats_paths
from chatledger.adapters.http.use_chat import CLIENT_TRIGGERS
from chatledger.adapters.http.writers_openapi import merge_paths, writer_paths
from chatledger.domain.convert import FORMATS
from chatledger.domain.timeline import KINDS

__all__ = ["openapi_document"]

_BODY_ROUTES = ("chat", "approvals", "tool-outputs", "stop", "operator")


def _chat_id_param() -> dict[str, Any]:
    return {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}


_INTEGER = {"type": "integer", "minimum": 0, "maximum": MAX_INT_PARAM}
"""An integer query parameter as the app reads it (``requests.int_param``)."""
_POSITIVE = {**_INTEGER, "minimum": 1}
"""A page size: at least 1."""


def _query(name: str, description: str, schema: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "name": name,
        "in": "query",
        "required": False,
        "description": description,
        "schema": schema or {"type": "string"},
    }


def _json_body(
    properties: dict[str, Any], required: list[str], limits: BodyLimits
) -> dict[str, Any]:
    return {
        "required": True,
        "description": f"JSON (`Content-Type: application/json`; else 415), at most "
        f"{limits.max_bytes} bytes and about {limits.max_items} values (else 413), nested at "
        f"most {limits.max_depth} deep (else 422)",
        "content": {
            "application/json": {
                "schema": {"type": "object", "properties": properties, "required": required},
                "x-chatledger-limits": limits.describe(),
            }
        },
    }


def _ok(description: str, ref: str | None = None) -> dict[str, Any]:
    schema = {"$ref": f"#/components/schemas/{ref}"} if ref else {"type": "object"}
    return {"description": description, "content": {"application/json": {"schema": schema}}}


_ERROR = {"$ref": "#/components/responses/Error"}
_SSE = {
    "description": "Server-Sent Events: `data: <UI message chunk JSON>` ... `data: [DONE]`",
    "headers": {"x-vercel-ai-ui-message-stream": {"schema": {"type": "string", "enum": ["v1"]}}},
    "content": {"text/event-stream": {"schema": {"type": "string"}}},
}


def _errors(*codes: str) -> dict[str, Any]:
    """The error answers every route may give (host, token, origin, unknown chat, bad query,
    database), and ``codes``."""
    return {code: _ERROR for code in sorted({"400", "401", "403", "404", "422", "503", *codes})}


_WRITE = ("409", "413", "415")
"""What a route taking a JSON body may answer besides: conflicts, too large, not JSON."""


def openapi_document(
    limits: Mapping[str, BodyLimits] | None = None, *, authenticated: bool = True
) -> dict[str, Any]:
    """The OpenAPI 3.1 description of every route of the app (with its body ``limits``).

    ``authenticated``: whether requests need a token (the app has an
    authentication hook); without, the routes declare no security.
    """
    limits = limits or {name: BodyLimits(32_000_000) for name in _BODY_ROUTES}
    errors = _errors()
    chat_id = _chat_id_param()
    document: dict[str, Any] = {
        "openapi": "3.1.0",
        "info": {
            "title": "chatledger",
            "version": "0.1.0",
            "description": "An event-sourced conversation store speaking the AI SDK useChat "
            "conventions. With tokens configured, every route but this document needs "
            "`Authorization: Bearer <token>`.",
        },
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "responses": {
                "Error": {
                    "description": "A chatledger error",
                    "content": {
                        "application/json": {"schema": {"$ref": "#/components/schemas/Error"}}
                    },
                }
            },
            "schemas": {
                "Error": {
                    "type": "object",
                    "properties": {
                        "error": {
                            "type": "object",
                            "properties": {
                                "type": {"type": "string"},
                                "message": {"type": "string"},
                            },
                            "required": ["type", "message"],
                        }
                    },
                    "required": ["error"],
                },
                "ActionResult": {
                    "type": "object",
                    "properties": {
                        "toolCallId": {"type": "string"},
                        "changed": {"type": "boolean"},
                        "state": {"type": "string"},
                        "continuationRequested": {"type": "boolean"},
                    },
                },
            },
        },
        "security": [{"bearer": []}] if authenticated else [],
        "paths": {
            "/api/chat": {
                "post": {
                    "summary": "Send (AI SDK DefaultChatTransport): record the client's additions, "
                    "stream the answer",
                    "requestBody": _json_body(
                        {
                            "id": {"type": "string", "minLength": 1},
                            "messages": {
                                "type": "array",
                                "maxItems": limits["chat"].max_messages,
                                "items": {
                                    "type": "object",
                                    "properties": {
                                        "id": {"type": "string"},
                                        "role": {"type": "string"},
                                        "parts": {
                                            "type": "array",
                                            "maxItems": limits["chat"].max_parts,
                                        },
                                    },
                                    "required": ["id", "role"],
                                },
                            },
                            "trigger": {
                                "type": "string",
                                "enum": list(CLIENT_TRIGGERS),
                            },
                            "messageId": {"type": "string", "minLength": 1},
                        },
                        ["id", "messages"],
                        limits["chat"],
                    ),
                    "responses": {"200": _SSE, **_errors(*_WRITE)},
                }
            },
            "/api/chat/{id}/stream": {
                "get": {
                    "summary": "Resume the open stream from its start (or after a cursor)",
                    "description": (
                        "AI SDK 7 conversations: a resume from the start replays the whole "
                        "assistant message (resumeStreamIsReplay); when the stream continues a "
                        "message, the message as it stood before the stream comes first."
                    ),
                    "parameters": [
                        chat_id,
                        _query("after", "a cursor (SSE event id) to resume after"),
                    ],
                    "responses": {
                        "200": _SSE,
                        "204": {"description": "nothing is streaming"},
                        **_errors("504"),
                    },
                }
            },
            "/api/chats/{id}/messages": {
                "get": {
                    "summary": "The conversation's UIMessages",
                    "parameters": [
                        chat_id,
                        _query("atVersion", "as it stood at this version", _INTEGER),
                        _query(
                            "attachments",
                            "inline (default): files as data URLs; url: files kept once as "
                            "links to /api/chats/{id}/attachments/{sha256}",
                            {"type": "string", "enum": ["inline", "url"], "default": "inline"},
                        ),
                    ],
                    "responses": {"200": _ok("{id, messages}"), **errors},
                }
            },
            "/api/chats/{id}/attachments/{sha256}": {
                "get": {
                    "summary": "One attachment of the conversation (a file kept once), its bytes",
                    "parameters": [
                        chat_id,
                        {
                            "name": "sha256",
                            "in": "path",
                            "required": True,
                            "schema": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
                        },
                        _query("type", "the media type to answer with (safe ones only)"),
                    ],
                    "responses": {"200": {"description": "the bytes"}, **errors},
                }
            },
            "/api/chats/{id}/status": {
                "get": {
                    "summary": "Where the turn stands (idle, streaming, awaiting-approval, ...)",
                    "parameters": [chat_id],
                    "responses": {"200": _ok("the status"), **errors},
                }
            },
            "/api/chats/{id}/history": {
                "get": {
                    "summary": "The audit timeline, one page: each stream's chunk batches grouped",
                    "description": "In log order. By default (view=grouped) every event is an "
                    "entry but each run of a stream's chunk batches is one, with lastPosition, "
                    "lastTime, batches and details (streamId, chunks, chunkTypes, outcome, "
                    "approvalDecisions); view=events (or full=true) gives one entry per event. "
                    "next is the 'after' of the next page (null on the last).",
                    "parameters": [
                        chat_id,
                        _query(
                            "kind",
                            "keep entries of this kind (repeatable)",
                            {"type": "string", "enum": list(KINDS)},
                        ),
                        _query("actor", "keep entries of this actor"),
                        _query("after", "entries after this position (a page's next)", _INTEGER),
                        _query("limit", "at most this many entries (rows)", _POSITIVE),
                        _query(
                            "view",
                            "grouped (default): a stream's chunk batches in one entry; "
                            "events: one entry per event",
                            {"type": "string", "enum": ["grouped", "events"], "default": "grouped"},
                        ),
                        _query(
                            "full",
                            "one entry per event, listing every chunk of a batch",
                            {"type": "boolean"},
                        ),
                    ],
                    "responses": {"200": _ok("{entries, next}"), **errors},
                }
            },
            "/api/chats/{id}/model-messages": {
                "get": {
                    "summary": "The conversation in a model API's format",
                    "parameters": [
                        chat_id,
                        _query("format", "the format", {"type": "string", "enum": list(FORMATS)}),
                        _query(
                            "unanswered",
                            "unanswered calls of a paused turn",
                            {"type": "string", "enum": ["refuse", "omit"]},
                        ),
                        _query("ignoreIncompleteToolCalls", "the SDK option", {"type": "boolean"}),
                        _query("atVersion", "as it stood at this version", _INTEGER),
                    ],
                    "responses": {"200": _ok("{format, messages[, system]}"), **errors},
                }
            },
            "/api/chats/{id}/approvals": {
                "post": {
                    "summary": "Approve or deny a tool call",
                    "parameters": [chat_id],
                    "requestBody": _json_body(
                        {
                            "approvalId": {"type": "string", "minLength": 1},
                            "toolCallId": {"type": "string", "minLength": 1},
                            "approved": {"type": "boolean"},
                            "reason": {"type": "string"},
                            "autoContinue": {"type": "boolean"},
                        },
                        ["approved"],
                        limits["approvals"],
                    ),
                    "responses": {
                        "200": _ok("what was recorded", "ActionResult"),
                        **_errors(*_WRITE),
                    },
                }
            },
            "/api/chats/{id}/tool-outputs": {
                "post": {
                    "summary": "Give a tool call's output (or error)",
                    "parameters": [chat_id],
                    "requestBody": _json_body(
                        {
                            "toolCallId": {"type": "string", "minLength": 1},
                            "output": {},
                            "errorText": {"type": "string"},
                            "autoContinue": {"type": "boolean"},
                        },
                        ["toolCallId"],
                        limits["tool-outputs"],
                    ),
                    "responses": {
                        "200": _ok("what was recorded", "ActionResult"),
                        **_errors(*_WRITE),
                    },
                }
            },
            "/api/chats/{id}/stop": {
                "post": {
                    "summary": "Stop the answer being written (it closes as aborted)",
                    "parameters": [chat_id],
                    "requestBody": {
                        **_json_body({"reason": {"type": "string"}}, [], limits["stop"]),
                        "required": False,  # no body at all stops without a reason
                    },
                    "responses": {"200": _ok("{stopped, streamId}"), **_errors(*_WRITE)},
                }
            },
            "/api/approvals": {
                "get": {
                    "summary": "Every tool call of the tenant awaiting approval, oldest first",
                    "description": "approvals: the calls awaiting a person's answer, oldest "
                    "first. automatic: the calls standing grants approved lately, newest first, "
                    "each with chatId, toolCallId, toolName, grantId, actor (grant:<id>), "
                    "reason, grantedBy and at.",
                    "responses": {"200": _ok("{approvals, automatic}"), **_errors()},
                }
            },
            "/openapi.json": {
                "get": {
                    "summary": "This document",
                    "security": [],
                    "responses": {"200": _ok("OpenAPI 3.1"), "400": _ERROR, "403": _ERROR},
                }
            },
            **health_paths(_ERROR),  # /health, /health/live (adapters/http/health.py)
            **metrics_paths(_ERROR),  # /metrics (adapters/http/metrics.py)
            **pages_paths(),  # GET /api/chats and the pages (adapters/http/pages_openapi.py)
            **stats_paths(_ERROR),  # GET /api/stats (adapters/http/stats.py)
            **operator_paths(limits["operator"], _ERROR),  # operator tokens only (http/operator.py)
            **continuation_paths(limits["stop"], _ERROR),  # external owners (http/continuations.py)
            **ledger_paths(limits, _ERROR),  # compactions and usage (adapters/http/ledger.py)
            **branch_paths(limits["stop"], _ERROR),  # branches and forks (http/branches.py)
        },
    }
    # POST /api/chats, .../messages, .../answers: for servers that run the model elsewhere.
    document["paths"] = merge_paths(document["paths"], writer_paths(limits, _ERROR))
    document["paths"] = merge_paths(document["paths"], grant_paths(limits["approvals"], _ERROR))
    document["paths"] |= message_concurrency_paths(limits["stop"], _ERROR)
    return document
