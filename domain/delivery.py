"""What a client is sent for a chunk the store took, so that its fold ends equal to the stored message.

The AI SDK client folds the chunks it receives into its own copy of the
assistant message. The store may apply a chunk, record it as a replay (of a
tool call it already knows) or refuse it; the client must get only what keeps
its copy equal to the store's: applied chunks (a ``start`` naming the stored
message, a result only for a call of the message it streams), and for a
replayed result the result the store holds. The same rules serve an answer as
it is written (``sent_for``) and a stream resumed from the log (``resumed``).
Pure functions: the transports (SSE, WebSocket) only frame what these return.
"""

from __future__ import annotations

from typing import Any

from chatledger.domain.conversation import Verdict

__all__ = [
    "RESULT_CHUNKS",
    "depends_on_message",
    "result_chunk",
    "resumed",
    "sent_for",
    "with_message_id",
]

RESULT_CHUNKS = frozenset({"tool-output-available", "tool-output-error", "tool-output-denied"})
"""The chunks that give a tool call its result."""


def sent_for(chunk: Any, verdict: Verdict, message: dict[str, Any]) -> Any | None:
    """The chunk the client gets for ``chunk``, which the store just took with ``verdict``; None: nothing.

    ``message`` is the assistant message the stream writes, as stored after
    the chunk. Applied chunks are sent as ``resumed`` says (the same rules as
    a resume from the log). Replayed and refused chunks are not sent, as the
    SDK would regress its parts with them; a replayed result of a call of this
    message is sent as the result the store holds, so the client's part reaches
    the stored state (e.g. ``output-denied`` after a denial the client still
    shows as ``approval-responded``).
    """
    if verdict is Verdict.REFUSED:
        return None
    depends = depends_on_message(chunk)
    if verdict is Verdict.APPLIED:
        return resumed(chunk, message) if depends else chunk
    if not depends or chunk.get("type") == "start":
        return None
    call = chunk.get("toolCallId")
    part = next((p for p in message.get("parts", []) if p.get("toolCallId") == call), None)
    return result_chunk(part) if part is not None else None


def with_message_id(chunk: Any, message_id: str) -> Any:
    """A ``start`` chunk as the client must see it: with the stored assistant message's id."""
    if isinstance(chunk, dict) and chunk.get("type") == "start":
        return {**chunk, "messageId": message_id}
    return chunk


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


def resumed(chunk: Any, message: dict[str, Any] | None) -> Any | None:
    """A chunk followed from the log as a resuming client must get it, or None to leave it out.

    ``message`` is the assistant message the chunk's stream writes. The log
    holds only applied chunks, so the rules of ``sent_for`` come down to two:
    a ``start`` names the stored message id, and a result for a call of an
    earlier message is left out (the client's fold only looks in the message
    it streams).
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
