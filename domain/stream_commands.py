"""The stream half of the ``Conversation`` aggregate: opening, receiving, recording and closing its one stream.

Chunks are folded the moment they arrive (so a bad chunk is refused at once
and the next one sees the new state) and recorded in batches: ``flush()``
turns the buffered chunks into one ``ChunksReceived`` event, whose ``apply``
skips the positions already folded. Replaying the log therefore rebuilds
exactly the live state. ``StreamCommands`` is ``Conversation``'s base class;
the decisions it records are in ``stream_rules``.
"""

from __future__ import annotations

import time
from datetime import datetime
from typing import TYPE_CHECKING, Any
from uuid import UUID

from eventsourcing.domain import BaseAggregate

from chatledger.domain.continuation import message_to_continue
from chatledger.domain.conversation import ConversationState, Verdict
from chatledger.domain.errors import AnswerAlreadyWrittenError, NoOpenStreamError
from chatledger.domain.events import (
    ChunksReceived,
    ContinuationRequested,
    StreamClosed,
    StreamOpened,
    StreamRenewed,
)
from chatledger.domain.lease import expiry_reason, lease_expired
from chatledger.domain.limits import Limits, check_choice, check_name, check_text
from chatledger.domain.stream_rules import (
    Buffered,
    ReceivedChunk,
    closing,
    fold_checked,
    message_to_write,
    received,
    take_batch,
)

__all__ = ["STREAM_OUTCOMES", "TRIGGERS", "StreamCommands", "check_new_answer"]

STREAM_OUTCOMES = ("finished", "aborted", "errored", "interrupted")
"""How a stream can end."""
TRIGGERS = ("submit-message", "regenerate-message", "continuation")
"""What can open a stream."""

_APPLIED = Verdict.APPLIED
"""Looked up once: reading an enum member off its class costs more than the fast path's fold."""


def check_new_answer(state: ConversationState, answer_key: str | None) -> None:
    """Refuse an answer key the conversation already holds (``AnswerAlreadyWrittenError``: a retry)."""
    check_name("answer key", answer_key, optional=True)
    known = state.answers.get(answer_key) if answer_key is not None else None
    if known is not None:
        assert answer_key is not None
        raise AnswerAlreadyWrittenError(
            state.chat_id, answer_key, known["streamId"], known["messageId"],
            known.get("outcome"), known.get("reason"),
        )  # fmt: skip


class StreamCommands(BaseAggregate[UUID]):
    """The commands of a conversation's stream (``Conversation`` is the aggregate to use)."""

    if TYPE_CHECKING:
        state: ConversationState
        _buffer: list[Buffered]

    @property
    def buffer(self) -> list[Buffered]:
        """Chunks received but not yet recorded: (chunk, arrival, verdict, refusal)."""
        if "_buffer" not in self.__dict__:
            self._buffer = []
        return self._buffer

    def open_stream(
        self,
        stream_id: str,
        message_id: str,
        *,
        continuation: bool,
        trigger: str,
        actor: str,
        request_id: str | None = None,
        lease_seconds: float | None = None,
        answer_key: str | None = None,
    ) -> None:
        """Open the conversation's one stream (fulfilling a continuation request if named).

        ``lease_seconds``: how long it stays open with nothing written to it (``expire_stream``).
        ``answer_key`` names the answer for its writer: a key the conversation already holds
        raises ``AnswerAlreadyWrittenError`` (a retried write), before anything else is checked.
        """
        check_new_answer(self.state, answer_key)
        check_name("stream id", stream_id)
        if not continuation and request_id is None:  # a continuation keeps the last message's id
            check_name("message id", message_id)
        check_name("actor", actor)
        check_name("request id", request_id, optional=True)
        check_choice("trigger", trigger, TRIGGERS)
        message_id, continuation = message_to_write(
            self.state, message_id, continuation=continuation, request_id=request_id
        )
        self.trigger_event(
            StreamOpened,
            stream_id=stream_id,
            message_id=message_id,
            continuation=continuation,
            trigger=trigger,
            actor=actor,
            request_id=request_id,
            lease_seconds=lease_seconds,
            answer_key=answer_key,
        )

    def renew_stream(self, stream_id: str) -> None:
        """Record that the open stream's writer is alive though it wrote nothing for a while."""
        self._require_stream(stream_id)
        stream = self.state.stream
        assert stream is not None
        self.trigger_event(StreamRenewed, stream_id=stream_id, actor=stream.actor)

    def expire_stream(
        self,
        *,
        now: datetime,
        default_lease_seconds: float,
        actor: str,
        noticed_by: str,
        stream_id: str | None = None,
    ) -> bool:
        """Close the open stream as ``interrupted`` if its lease ran out before ``now``.

        ``stream_id`` limits this to that stream. Returns whether it closed one;
        the reason names the writer, how long it was quiet and ``noticed_by``.
        """
        stream = self.state.stream
        if stream is None or stream_id not in (None, stream.stream_id):
            return False
        if not lease_expired(stream, now, default_lease_seconds):
            return False
        reason = expiry_reason(stream, now, default_lease_seconds, noticed_by)
        self.close_stream(stream.stream_id, "interrupted", reason, actor=actor)
        return True

    def receive(self, stream_id: str, chunk: Any, *, limits: Limits) -> ReceivedChunk:
        """Check and fold one chunk now; it is recorded at the next ``flush()``.

        The common chunk (a bare text or reasoning delta of an open part) takes
        ``OpenStream.receive_plain_delta``; anything else ``receive_checked``,
        with the same result.
        """
        stream = self.state.stream
        if stream is not None and stream.stream_id == stream_id:
            position = stream.receive_plain_delta(chunk, limits)
            if position is not None:
                self.buffer.append((chunk, time.time(), _APPLIED, None))
                return received(ReceivedChunk, (position, _APPLIED, None))
        return self.receive_checked(stream_id, chunk, limits=limits)

    def receive_checked(self, stream_id: str, chunk: Any, *, limits: Limits) -> ReceivedChunk:
        """``receive`` by the general path, for any chunk: the reference its fast path agrees with."""
        self._require_stream(stream_id)
        arrived = time.time()
        outcome, recorded = fold_checked(self.state, chunk, limits)
        refusal = outcome.error
        reason = refusal.reason if refusal is not None else None
        self.buffer.append((recorded, arrived, outcome.verdict, reason))
        return outcome

    def flush(self) -> None:
        """Record the buffered chunks as one ``ChunksReceived`` event."""
        if not self.buffer:
            return
        stream = self.state.stream
        assert stream is not None
        entries = self._buffer
        self._buffer = []
        self.trigger_event(ChunksReceived, **take_batch(stream, entries, time.time()))

    def close_stream(self, stream_id: str, outcome: str, reason: str | None, *, actor: str) -> None:
        """Record what is buffered, then close the stream with its outcome."""
        check_choice("outcome", outcome, STREAM_OUTCOMES)
        check_text("reason", reason)
        check_name("actor", actor)
        self._require_stream(stream_id)
        self.flush()
        outcome, reason, wanted = closing(self.state, outcome, reason)
        self.trigger_event(
            StreamClosed, stream_id=stream_id, outcome=outcome, reason=reason, actor=actor
        )
        if wanted is not None:
            # docs/behaviour.md §4.3: an answer given while the stream was open is decided now.
            self._request_continuation(
                f"{wanted['cause']} (given while a stream was open)", actor=wanted["actor"]
            )

    def _request_continuation(self, cause: str, *, actor: str) -> bool:
        """Queue one continuation if the whole tool batch is answered and none is pending."""
        message_id = message_to_continue(self.state)
        if message_id is None:
            return False
        self.trigger_event(
            ContinuationRequested,
            request_id=f"cont_{self.id.hex[:8]}_{self.version + 1}",
            message_id=message_id,
            cause=cause,
            actor=actor,
        )
        return True

    def _require_stream(self, stream_id: str) -> None:
        stream = self.state.stream
        if stream is None or stream.stream_id != stream_id:
            raise NoOpenStreamError(self.state.chat_id, stream_id)
