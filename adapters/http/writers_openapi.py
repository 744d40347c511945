"""The OpenAPI description of the routes for servers that run the model elsewhere.

``POST /api/chats``, ``POST /api/chats/{id}/messages`` and
``POST /api/chats/{id}/answers`` (``conversations.py``, ``answers.py``);
``openapi.py`` merges these operations into the document.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from chatledger.adapters.http.answers import MAX_ANSWER_KEY, MAX_REFUSALS_SHOWN
from chatledger.adapters.http.requests import BodyLimits

__all__ = ["ANSWER_REPORT", "merge_paths", "writer_paths"]

_CHAT_ID = {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}

ANSWER_REPORT: dict[str, Any] = {
    "type": "object",
    "description": "What became of a streamed-in answer. A retry with a key already written "
    "(`duplicate: true`) is not written again: only `chatId`, `streamId`, `messageId`, "
    "`answerKey`, `outcome` (null while the first write is still open) and `reason`.",
    "properties": {
        "chatId": {"type": "string"},
        "streamId": {"type": "string"},
        "messageId": {"type": "string", "description": "the assistant message written"},
        "answerKey": {"type": ["string", "null"]},
        "duplicate": {"type": "boolean"},
        "outcome": {
            "type": ["string", "null"],
            "enum": ["finished", "aborted", "errored", "interrupted", None],
        },
        "reason": {"type": ["string", "null"]},
        "closedElsewhere": {
            "type": "boolean",
            "description": "the stream was closed while being written (a stop): stop the model",
        },
        "chunks": {
            "type": "object",
            "properties": {
                name: {"type": "integer"} for name in ("received", "applied", "replays", "refused")
            },
        },
        "position": {
            "type": ["integer", "null"],
            "description": "the stream position of the last chunk received",
        },
        "refused": {
            "type": "array",
            "description": f"the refused chunks (the first {MAX_REFUSALS_SHOWN}; all are in "
            "the audit history)",
            "items": {
                "type": "object",
                "properties": {
                    "position": {"type": "integer"},
                    "chunkType": {"type": ["string", "null"]},
                    "toolCallId": {"type": ["string", "null"]},
                    "error": {"type": "string"},
                    "reason": {"type": "string"},
                },
            },
        },
        "continuationRequest": {
            "type": ["string", "null"],
            "description": "the pending continuation request, if the turn is to continue",
        },
        "status": {"type": "object", "description": "as GET /api/chats/{id}/status"},
    },
}
"""The answer of ``POST /api/chats/{id}/answers``."""


def _json(properties: dict[str, Any], required: list[str], limits: BodyLimits) -> dict[str, Any]:
    return {
        "required": True,
        "description": f"JSON (`Content-Type: application/json`), at most {limits.max_bytes} bytes",
        "content": {
            "application/json": {
                "schema": {"type": "object", "properties": properties, "required": required},
                "x-chatledger-limits": limits.describe(),
            }
        },
    }


def _ok(description: str, schema: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "description": description,
        "content": {"application/json": {"schema": schema or {"type": "object"}}},
    }


def writer_paths(
    limits: Mapping[str, BodyLimits], error: dict[str, Any]
) -> dict[str, dict[str, Any]]:
    """The operations of the writer routes, by path and method (``error``: the error answer)."""
    errors = {code: error for code in ("400", "401", "403", "404", "409", "413", "415", "422")}
    start_limits = limits.get("start") or BodyLimits(64_000)
    message_limits = limits.get("messages") or BodyLimits(4_064_000)
    return {
        "/api/chats": {
            "post": {
                "summary": "Start a conversation (for a server that runs the model elsewhere)",
                "description": "Safe to retry with the same `id`: an existing conversation is "
                "left as it is (200, `created: false`). Without `id`, one is made up.",
                "requestBody": {
                    **_json(
                        {
                            "id": {"type": "string", "minLength": 1},
                            "aiSdk": {"type": "integer", "enum": [6, 7]},
                            "metadata": {"type": "object"},
                            "owner": {
                                "type": "string",
                                "minLength": 1,
                                "description": "the runtime that continues it, e.g. "
                                "`client:my-app` (default `any`)",
                            },
                            "messageConcurrency": {
                                "type": "string",
                                "description": "what a user message sent while an answer "
                                "streams does: queue, latest, merge, drop, debounce[:SECONDS]",
                            },
                        },
                        [],
                        start_limits,
                    ),
                    "required": False,
                },
                "responses": {
                    "201": _ok("{id, created: true}"),
                    "200": _ok("{id, created: false}: it existed"),
                    **errors,
                },
            }
        },
        "/api/chats/{id}/messages": {
            "post": {
                "summary": "Append a whole UIMessage (the user's) without running the responder",
                "description": "The conversation must be started. The same message again (same "
                "id and content, a retry) records nothing (`changed: false`); another message "
                "with a stored id is refused (422).",
                "parameters": [_CHAT_ID],
                "requestBody": _json(
                    {
                        "message": {
                            "type": "object",
                            "properties": {
                                "id": {"type": "string"},
                                "role": {"type": "string"},
                                "parts": {"type": "array"},
                            },
                            "required": ["id", "role", "parts"],
                        }
                    },
                    ["message"],
                    message_limits,
                ),
                "responses": {"200": _ok("{id, messageId, changed}"), **errors},
            }
        },
        "/api/chats/{id}/answers": {
            "post": {
                "summary": "Stream in an answer produced elsewhere (AI SDK "
                "toUIMessageStreamResponse body)",
                "description": "The body is read as it arrives: each chunk is stored and "
                "visible to followers (GET /api/chat/{id}/stream) at once; a refused chunk is "
                "recorded and reported, and the stream goes on. `data: [DONE]` closes the "
                "stream `finished`; a body ending without it, a client hanging up or a body "
                "silent for the server's idle limit closes it `interrupted` (what arrived is "
                "kept). A stop (POST /api/chats/{id}/stop) closes it `aborted` and the answer "
                "comes at once (`closedElsewhere`). Approvals, tool outputs, messages, model "
                "messages and status are the routes of every client. Until conversation "
                "owners exist, run the server with `--no-continuations` so its own responder "
                "does not continue what this route writes.",
                "parameters": [
                    _CHAT_ID,
                    {
                        "name": "continuation",
                        "in": "query",
                        "required": False,
                        "description": "continue the last assistant message, fulfilling the "
                        "pending continuation request (409 when the turn cannot continue)",
                        "schema": {"type": "boolean"},
                    },
                    {
                        "name": "Idempotency-Key",
                        "in": "header",
                        "required": False,
                        "description": "names the answer: a retry with the same key is not "
                        "written again and answers `duplicate: true`",
                        "schema": {"type": "string", "minLength": 1, "maxLength": MAX_ANSWER_KEY},
                    },
                ],
                "requestBody": {
                    "required": True,
                    "description": "`Content-Type: text/event-stream` (else 415): `data: "
                    "<UI message chunk JSON>` frames ending with `data: [DONE]`; one event may "
                    "hold a chunk up to the store's chunk limit (else 413, the stream closed "
                    "`errored`)",
                    "content": {"text/event-stream": {"schema": {"type": "string"}}},
                },
                "responses": {"200": _ok("what became of the answer", ANSWER_REPORT), **errors},
            }
        },
    }


def merge_paths(
    paths: dict[str, dict[str, Any]], more: dict[str, dict[str, Any]]
) -> dict[str, dict[str, Any]]:
    """``paths`` with the operations of ``more`` added (a path in both keeps both methods)."""
    merged = {path: dict(item) for path, item in paths.items()}
    for path, item in more.items():
        merged.setdefault(path, {}).update(item)
    return merged
