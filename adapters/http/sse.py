"""The UI message stream on the wire: Server-Sent Events as the AI SDK reads them.

Each chunk is one event ``data: <json>``, the stream ends with
``data: [DONE]``, and the response carries ``SSE_HEADERS``. This module only
frames: what a client gets for each chunk is decided by the turn runner
(``chatledger.adapters.store.turns``) and ``chatledger.domain.delivery``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import orjson
from starlette.responses import StreamingResponse

from chatledger.adapters.store.turns.outbox import Outbox

__all__ = [
    "DONE",
    "FELL_BEHIND",
    "KEEP_ALIVE",
    "SSE_HEADERS",
    "sse_body",
    "sse_event",
    "sse_response",
]

SSE_HEADERS = {
    "cache-control": "no-cache",
    "connection": "keep-alive",
    "x-vercel-ai-ui-message-stream": "v1",
    "x-accel-buffering": "no",
}
"""The response headers of the AI SDK's UI message stream."""

DONE = "data: [DONE]\n\n"
"""The event that ends a UI message stream."""
KEEP_ALIVE = ": keep-alive\n\n"
"""An SSE comment sent when a stream stays quiet (proxies close idle connections)."""

FELL_BEHIND = (
    "the client fell behind the answer; it goes on in the log: resume it with "
    "GET /api/chat/{id}/stream"
)
"""The ``errorText`` ending the response of a client that fell behind."""


_to_json = json.JSONEncoder(separators=(",", ":")).encode
"""``json.dumps(chunk, separators=(",", ":"))`` without building an encoder per call (per chunk)."""


def _json(chunk: Any) -> str:
    """``_to_json(chunk)``, the same text; by orjson (a third of the time) for a flat chunk.

    A chunk whose values are all plain strings (a text or reasoning delta, most
    of an answer) is written by orjson, whose output for it is ``_to_json``'s
    exactly when it is ASCII without DEL (``_to_json`` escapes everything
    else as ``\\uXXXX``; both escape the control characters alike). Anything
    else (numbers, whose formats differ; nesting; a lone surrogate, which
    orjson refuses) takes ``_to_json``.
    """
    if type(chunk) is dict:
        for value in chunk.values():
            if type(value) is not str:
                return _to_json(chunk)
        try:
            data = orjson.dumps(chunk)
        except TypeError:  # orjson.JSONEncodeError: a lone surrogate, a key not a string
            return _to_json(chunk)
        if data.isascii() and b"\x7f" not in data:
            return data.decode()
    return _to_json(chunk)


def sse_event(chunk: Any, event_id: str | None = None) -> str:
    """One SSE event carrying ``chunk`` as JSON (ASCII: any string survives)."""
    data = _json(chunk)
    return f"id: {event_id}\ndata: {data}\n\n" if event_id else f"data: {data}\n\n"


async def sse_body(outbox: Outbox, keepalive_seconds: float) -> AsyncIterator[str]:
    """An answer's SSE body: its chunks as they come (all that are waiting in one write), then DONE.

    A quiet stream gets a keep-alive comment every ``keepalive_seconds``; a
    client that fell behind gets an ``error`` telling it to resume from the log.
    """
    while True:
        if not await outbox.wait(keepalive_seconds):
            yield KEEP_ALIVE
            continue
        chunks = outbox.take()
        if outbox.overflowed:  # the client fell behind: it resumes from the log
            yield sse_event({"type": "error", "errorText": FELL_BEHIND})
            return
        events = "".join([sse_event(chunk) for chunk in chunks])
        if outbox.ended and not outbox.waiting:
            yield events + DONE
            return
        if events:
            yield events


def sse_response(body: AsyncIterator[str]) -> StreamingResponse:
    """A streaming response of the UI message stream ``body``."""
    return StreamingResponse(body, media_type="text/event-stream", headers=SSE_HEADERS)
