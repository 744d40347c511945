"""The UI message stream on the wire: Server-Sent Events as the AI SDK reads them.

Each chunk is one event ``data: <json>``, the stream ends with
``data: [DONE]``, and the response carries ``SSE_HEADERS``. ``deliver``
decides what a client gets for a chunk the store has just taken: the store
may apply it, record it as a replay, or refuse it, and the client's fold must
end equal to the stored message.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from chatledger.adapters.store.streams.writer import StreamWriter
from chatledger.domain.conversation import Verdict

__all__ = [
    "DONE",
    "KEEP_ALIVE",
    "RESULT_CHUNKS",
    "SSE_HEADERS",
    "deliver",
    "deliver_all",
    "depends_on_message",
    "result_chunk",
    "resumed",
    "sse_event",
    "with_message_id",
]

log = logging.getLogger("chatledger.http")

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


_to_json = json.JSONEncoder(separators=(",", ":")).encode
"""``json.dumps(chunk, separators=(",", ":"))`` without building an encoder per call (per chunk)."""


def sse_event(chunk: Any, event_id: str | None = None) -> str:
    """One SSE event carrying ``chunk`` as JSON (ASCII: any string survives)."""
    data = _to_json(chunk)
    return f"id: {event_id}\ndata: {data}\n\n" if event_id else f"data: {data}\n\n"


def with_message_id(chunk: Any, message_id: str) -> Any:
    """A ``start`` chunk as the client must see it: with the stored assistant message's id."""
    if isinstance(chunk, dict) and chunk.get("type") == "start":
        return {**chunk, "messageId": message_id}
    return chunk


RESULT_CHUNKS = frozenset({"tool-output-available", "tool-output-error", "tool-output-denied"})
"""The chunks that give a tool call its result."""


def deliver(writer: StreamWriter, chunk: Any) -> str | None:
    """Store one chunk; the SSE event the client must get for it, if any (a worker thread).

    Applied chunks are sent as ``resumed`` says (the same rules as a resume
    from the log). Replayed and refused chunks are not sent, as the SDK would
    regress its parts with them; a replayed result of a call of this message
    is sent as the result the store holds, so the client's part reaches the
    stored state (e.g. ``output-denied`` after a denial the client still
    shows as ``approval-responded``).
    """
    received = writer.append(chunk)
    if received.verdict is Verdict.REFUSED:
        log.warning("chunk refused on stream %s: %s", writer.stream_id, received.error)
        return None
    depends = depends_on_message(chunk)
    if received.verdict is Verdict.APPLIED:
        sent = resumed(chunk, writer.message) if depends else chunk
        return None if sent is None else sse_event(sent)
    if not depends or chunk.get("type") == "start":
        return None
    call = chunk.get("toolCallId")
    part = next((p for p in writer.message.get("parts", []) if p.get("toolCallId") == call), None)
    stored = result_chunk(part) if part is not None else None
    return sse_event(stored) if stored is not None else None


def result_chunk(part: dict[str, Any]) -> dict[str, Any] | None:
    """The chunk that brings a client's tool part to the stored result (None when it has none)."""
    call, state = part["toolCallId"], part.get("state")
    if state == "output-denied":
        return {"type": "tool-output-denied", "toolCallId": call}
    if state == "output-error":
        return {"type": "tool-output-error", "toolCallId": call, "errorText": part.get("errorText")}
    if state == "output-available" and "output" in part:
        chunk = {"type": "tool-output-available", "toolCallId": call, "output": part["output"]}
        if "preliminary" in part:  # as stored, false too: the client's fold copies it
            chunk["preliminary"] = part["preliminary"]
        return chunk
    return None


def deliver_all(writer: StreamWriter, chunks: list[Any]) -> tuple[list[str], Exception | None]:
    """``deliver`` each chunk in order (a worker thread): the events, and the error that stopped it.

    The events of the chunks stored before an error are kept, so the client
    gets everything the store took.
    """
    events: list[str] = []
    for chunk in chunks:
        try:
            event = deliver(writer, chunk)
        except Exception as error:
            return events, error
        if event is not None:
            events.append(event)
    return events, None


def resumed(chunk: Any, message: dict[str, Any] | None) -> Any | None:
    """A chunk followed from the log as a resuming client must get it, or None to leave it out.

    ``message`` is the assistant message the chunk's stream writes. The log
    (``follow``) holds only applied chunks, so the rules of ``deliver`` come
    down to two: a ``start`` names the stored message id, and a result for a
    call of an earlier message is left out (the client's fold only looks in
    the message it streams).
    """
    if message is None or not depends_on_message(chunk):
        return chunk
    if chunk["type"] == "start":
        return with_message_id(chunk, message["id"])
    call = chunk.get("toolCallId")
    return chunk if any(p.get("toolCallId") == call for p in message.get("parts", [])) else None


def depends_on_message(chunk: Any) -> bool:
    """Whether what a client gets for ``chunk`` depends on the message its stream writes.

    A ``start`` (it must name the stored message) and a tool result (its call
    may belong to an earlier message); every other chunk is sent as it is.
    """
    kind = chunk.get("type") if isinstance(chunk, dict) else None
    return kind == "start" or kind in RESULT_CHUNKS
