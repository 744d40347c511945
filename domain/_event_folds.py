"""The fold rules the conversation events share, or that take more than a few lines to apply.

``events.py`` holds the events themselves (their classes are stored topics);
here are the skip/verdict rule of a chunk batch and folding a stored batch
again, the check that an event follows its open stream, the continuation
request's life (wanted by an answer, fulfilled by a stream, claimed by a
worker) and the private copy of a payload.
"""

from __future__ import annotations

import copy
from datetime import datetime, timedelta
from typing import Any, Protocol

from chatledger.domain.conversation import ConversationState, Verdict
from chatledger.domain.errors import InvalidChunkError, StoredDataError
from chatledger.domain.open_stream import OpenStream
from chatledger.domain.owners import owner_of

__all__ = [
    "StoredBatch",
    "answered",
    "claim_continuation",
    "fold_batch",
    "fulfil_continuation",
    "open_stream_named",
    "own",
    "queue_continuation",
    "skipped",
    "verdicts",
]


class StoredBatch(Protocol):
    """What ``fold_batch`` reads of a ``ChunksReceived`` event."""

    @property
    def stream_id(self) -> str: ...
    @property
    def first_seq(self) -> int: ...
    @property
    def chunks(self) -> list[Any]: ...
    @property
    def ages_ms(self) -> list[int]: ...
    @property
    def timestamp(self) -> datetime: ...
    @property
    def originator_version(self) -> int: ...
    def skipped(self) -> set[int]: ...


def skipped(replays: list[int], refusals: list[tuple[int, str]]) -> set[int]:
    """Batch indexes of the chunks that were recorded but not applied (replays and refusals)."""
    skipped = set(replays)
    skipped.update(index for index, _ in refusals)
    return skipped


def verdicts(count: int, replays: list[int], refusals: list[tuple[int, str]]) -> list[Verdict]:
    """What became of each of a batch's ``count`` chunks: a refusal wins over a replay."""
    replayed = set(replays)
    refused = {index for index, _ in refusals}
    return [
        Verdict.REFUSED if i in refused else Verdict.REPLAY if i in replayed else Verdict.APPLIED
        for i in range(count)
    ]


def fold_batch(state: ConversationState, batch: StoredBatch) -> None:
    """Fold a stored batch's applied chunks; positions already folded live are skipped."""
    stream = open_stream_named(
        state,
        batch.stream_id,
        f"stored chunks of stream {batch.stream_id!r} (version {batch.originator_version}) follow",
    )
    stream.renewed_at = batch.timestamp  # every batch renews the stream's lease
    skipped = batch.skipped()
    for index, chunk in enumerate(batch.chunks):
        if index in skipped:
            if batch.first_seq + index >= stream.next_seq:
                state.skip_position()
            continue
        unfolded = batch.first_seq + index >= stream.next_seq  # else folded live, before this save
        if unfolded and _refold(state, chunk) is not Verdict.APPLIED:
            raise StoredDataError(f"stored chunk {batch.first_seq + index} no longer applies")
        if chunk["type"] == "tool-approval-request":
            # Derived from the event (not the clock) so the live state and the replay agree.
            age = batch.ages_ms[index] if index < len(batch.ages_ms) else 0
            when = batch.timestamp - timedelta(milliseconds=age)
            state.approval_times[chunk["toolCallId"]] = when.isoformat()


def open_stream_named(state: ConversationState, stream_id: str, what: str) -> OpenStream:
    """The open stream, which must be ``stream_id``: else ``what`` (a stored event) breaks the log."""
    stream = state.stream
    if stream is None or stream.stream_id != stream_id:
        raise StoredDataError(f"{what} no open stream of that id: the log is corrupt")
    return stream


def answered(state: ConversationState, auto_continue: bool, actor: str, cause: str) -> None:
    """A tool call was answered: the open stream's turn may want the model to continue."""
    state.answered_since_stream = True
    if auto_continue and state.stream is not None:
        state.wants_continuation = {"actor": actor, "cause": cause}


def queue_continuation(
    state: ConversationState, request_id: str, message_id: str, cause: str, at: datetime
) -> None:
    """A continuation is requested: queued for the conversation's owner (only its workers claim it)."""
    state.continuation = {
        "requestId": request_id,
        "messageId": message_id,
        "cause": cause,
        "requestedAt": at.isoformat(),
        "owner": owner_of(state),
    }
    state.wants_continuation = None


def fulfil_continuation(
    state: ConversationState, request_id: str | None, message_id: str, continuation: bool
) -> None:
    """A stream opens: the pending continuation request it fulfils (named, or its message) is done."""
    pending = state.continuation
    if pending and (
        pending["requestId"] == request_id or (continuation and pending["messageId"] == message_id)
    ):
        state.continuation = None  # fulfilled: this stream continues the requested message


def claim_continuation(
    state: ConversationState, request_id: str, worker: str, until: datetime, version: int
) -> None:
    """A worker claims the pending continuation request until ``until`` (a stored claim needs one)."""
    if state.continuation is None:
        raise StoredDataError(
            f"a claim of {request_id!r} (version {version}) follows no "
            "continuation request: the log is corrupt"
        )
    state.continuation = {
        **state.continuation,
        "claimedBy": worker,
        "leaseUntil": until.isoformat(),
    }


def own(value: dict[str, Any]) -> dict[str, Any]:
    """A private deep copy, so the folded state never aliases an event's payload."""
    return copy.deepcopy(value)


def _refold(state: ConversationState, chunk: Any) -> Verdict:
    """Fold a stored chunk again; a refusal now means the stored data no longer fits the fold."""
    try:
        return state.receive_chunk(chunk)
    except InvalidChunkError as error:
        raise StoredDataError(f"a stored chunk no longer applies: {error}") from None
