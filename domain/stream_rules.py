"""What a stream's life means for its conversation: the message it writes, its chunks, its close.

Pure decisions the aggregate records: ``message_to_write`` when a stream
opens; ``fold_checked``, the general path of ``Conversation.receive`` (any
chunk, refusals included); ``take_batch``, the buffered chunks as one
``ChunksReceived``; ``is_boundary``, the chunks recorded at once; and
``closing``, how a close ends the turn.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from chatledger.domain.chunks import check_chunk
from chatledger.domain.conversation import ConversationState, Verdict
from chatledger.domain.errors import (
    ContinuationNotPendingError,
    InvalidChunkError,
    InvalidMessageError,
    OversizedChunkError,
    StreamAlreadyOpenError,
)
from chatledger.domain.limits import Limits
from chatledger.domain.open_stream import OpenStream
from chatledger.domain.usual_chunks import usual_cost

__all__ = [
    "Buffered",
    "ReceivedChunk",
    "closing",
    "fold_checked",
    "is_boundary",
    "message_to_write",
    "received",
    "take_batch",
]


class ReceivedChunk(NamedTuple):
    """What the store did with one chunk given to a stream (a named tuple: it is made per chunk)."""

    position: int
    """The chunk's position in its stream."""
    verdict: Verdict
    """Applied, replay, or refused."""
    error: InvalidChunkError | None = None
    """Why it was refused."""


received: Callable[[type[ReceivedChunk], tuple[int, Verdict, None]], ReceivedChunk] = tuple.__new__
"""Makes a ``ReceivedChunk`` without the named tuple's Python-level ``__new__`` (once per chunk)."""


Buffered = tuple[Any, float, Verdict, str | None]
"""A received chunk not yet recorded: (chunk as recorded, arrival time, verdict, refusal reason)."""


def message_to_write(
    state: ConversationState, message_id: str, *, continuation: bool, request_id: str | None
) -> tuple[str, bool]:
    """The message a new stream writes, and whether it continues it (the last message).

    Naming a continuation request continues; the request must be pending.
    Raises when a stream is open, when there is nothing to continue, and when
    a new message would take the id of one the conversation has.
    """
    if request_id is not None:
        pending = state.continuation
        if pending is None or pending["requestId"] != request_id:
            raise ContinuationNotPendingError(state.chat_id, request_id)
        continuation = True
    if state.stream is not None:
        raise StreamAlreadyOpenError(state.chat_id, state.stream.stream_id)
    if continuation:
        if not state.messages or state.messages[-1]["role"] != "assistant":
            raise InvalidMessageError(
                "nothing to continue: the last message is not an assistant message"
            )
        return state.messages[-1]["id"], True
    if state.has_message(message_id):
        raise InvalidMessageError(
            "a message with this id is already in the conversation (open the stream "
            "with continuation=True to continue it)",
            message_id=message_id,
        )
    return message_id, False


def fold_checked(state: ConversationState, chunk: Any, limits: Limits) -> tuple[ReceivedChunk, Any]:
    """Check ``chunk`` (a chunk of the conversation's dialect) and fold it into the open stream.

    Returns what became of it and the chunk to record (a refused one as far as
    ``limits`` keep it). A refusal changes nothing but the position it consumes.
    """
    stream = state.stream
    assert stream is not None
    try:
        cost = usual_cost(chunk, state.dialect, limits)  # the same, for the usual chunks
        if cost is None:
            cost = limits.chunk_cost(chunk)
            check_chunk(chunk, state.dialect)
        if stream.message_bytes + cost > limits.max_message_bytes:
            raise OversizedChunkError(
                "message",
                stream.message_bytes + cost,
                limits.max_message_bytes,
                chunk_type=chunk["type"],
            )
        verdict = state.receive_chunk(chunk, cost)
    except InvalidChunkError as refusal:
        kept = limits.keepable(chunk)
        if refusal.position is None:
            refusal = refusal.at(state.skip_position())
        return ReceivedChunk(refusal.position or 0, Verdict.REFUSED, refusal), kept
    return ReceivedChunk(stream.next_seq - 1, verdict), chunk


def take_batch(stream: OpenStream, entries: list[Buffered], now: float) -> dict[str, Any]:
    """The fields of the ``ChunksReceived`` that records ``entries``, the stream's latest chunks.

    Takes the stream's pending retractions with it.
    """
    first_seq = stream.next_seq - len(entries)
    # Once per batch, over every chunk: kept to plain loops (an enum member looked up
    # per chunk, or max() per age, cost as much as the fast path's whole fold).
    applied, replay, refused = Verdict.APPLIED, Verdict.REPLAY, Verdict.REFUSED
    odd = [(i, entry) for i, entry in enumerate(entries) if entry[2] is not applied]
    resets = sorted(stream.retractions.items())
    stream.retractions.clear()
    return {
        "stream_id": stream.stream_id,
        "first_seq": first_seq,
        "chunks": [entry[0] for entry in entries],
        "ages_ms": [round((now - entry[1]) * 1000) if now > entry[1] else 0 for entry in entries],
        "replays": [i for i, entry in odd if entry[2] is replay],
        "refusals": [(i, entry[3] or "refused") for i, entry in odd if entry[2] is refused],
        "retractions": [(at - first_seq, found) for at, found in resets if at >= first_seq],
        "actor": stream.actor,
    }


def closing(
    state: ConversationState, outcome: str, reason: str | None
) -> tuple[str, str | None, dict[str, str] | None]:
    """How closing the open stream ends: its outcome, its reason, and the continuation still wanted."""
    wanted = state.wants_continuation
    if state.steering:
        wanted = None  # the user spoke meanwhile: that turn comes next, not a continuation
    if state.halts():
        # The provider stream ended without completing; nothing continues it.
        wanted = None
        if outcome == "finished":
            outcome = "interrupted"
            reason = reason or "the model's stream ended without completing"
    return outcome, reason, wanted


def is_boundary(chunk: Mapping[str, Any]) -> bool:
    """docs/behaviour.md §7: chunks others may act on are committed at once."""
    if type(chunk) is not dict and not isinstance(chunk, Mapping):
        return False
    kind = chunk.get("type")
    return type(kind) is str and kind in _BOUNDARY_TYPES


_BOUNDARY_TYPES = frozenset(
    {
        "tool-input-available",
        "tool-input-error",
        "tool-approval-request",
        "tool-approval-response",
        "reset-step",
        "steering-message",
        "tool-output-available",
        "tool-output-error",
        "tool-output-denied",
        "finish-step",
        "finish",
        "error",
        "abort",
    }
)
