"""The ``Conversation`` aggregate: decides what an input means, then records it as events.

Chunks are folded the moment they arrive (so a bad chunk is refused at once
and the next one sees the new state) and recorded in batches: ``flush()``
turns the buffered chunks into one ``ChunksReceived`` event, whose ``apply``
skips the positions already folded. Replaying the log therefore rebuilds
exactly the live state.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from uuid import NAMESPACE_URL, UUID, uuid5

from eventsourcing.domain import BaseAggregate

from chatledger.domain.approvals import ApprovalDecision, decide_approval
from chatledger.domain.chunks import check_chunk
from chatledger.domain.conversation import ConversationState, Verdict
from chatledger.domain.errors import (
    InvalidChunkError,
    InvalidMessageError,
    NoOpenStreamError,
    StreamAlreadyOpenError,
)
from chatledger.domain.events import (
    ChunksReceived,
    ConversationStarted,
    MessageAppended,
    StreamClosed,
    StreamOpened,
    ToolApprovalResponded,
)
from chatledger.domain.limits import Limits

__all__ = [
    "STREAM_OUTCOMES",
    "TRIGGERS",
    "Conversation",
    "ReceivedChunk",
    "conversation_id",
    "is_boundary",
]

STREAM_OUTCOMES = ("finished", "aborted", "errored", "interrupted")
TRIGGERS = ("submit-message", "regenerate-message", "continuation")

_NAMESPACE = uuid5(NAMESPACE_URL, "https://chatledger.invalid/conversations")


def conversation_id(tenant: str, chat_id: str) -> UUID:
    """The aggregate id of ``(tenant, chat_id)``: stable, and distinct per tenant."""
    return uuid5(_NAMESPACE, f"{len(tenant)}:{tenant}/{chat_id}")


@dataclass(frozen=True)
class ReceivedChunk:
    """What the store did with one chunk given to a stream."""

    position: int
    """The chunk's position in its stream."""
    verdict: Verdict
    """Applied, replay, or refused."""
    error: InvalidChunkError | None = None
    """Why it was refused."""


class Conversation(BaseAggregate[UUID]):
    """One conversation's event-sourced aggregate."""

    if TYPE_CHECKING:
        state: ConversationState
        _buffer: list[tuple[Any, float, Verdict, str | None]]

    @classmethod
    def start(
        cls, tenant: str, chat_id: str, *, actor: str, metadata: dict[str, Any] | None = None
    ) -> Conversation:
        """Create a new conversation."""
        return cls._create(
            ConversationStarted,
            id=conversation_id(tenant, chat_id),
            tenant=tenant,
            chat_id=chat_id,
            actor=actor,
            metadata=metadata,
        )

    @property
    def buffer(self) -> list[tuple[Any, float, Verdict, str | None]]:
        """Chunks received but not yet recorded: (chunk, arrival, verdict, refusal)."""
        if "_buffer" not in self.__dict__:
            self._buffer = []
        return self._buffer

    def append_message(self, message: dict[str, Any], *, actor: str, limits: Limits) -> None:
        """Append a whole, already schema-checked UIMessage."""
        if self.state.stream is not None:
            raise StreamAlreadyOpenError(self.state.chat_id, self.state.stream.stream_id)
        limits.check_message(message)
        if self.state.has_message(message["id"]):
            raise InvalidMessageError(
                "a message with this id is already in the conversation", message_id=message["id"]
            )
        self.trigger_event(MessageAppended, message=message, actor=actor)

    def open_stream(
        self, stream_id: str, message_id: str, *, continuation: bool, trigger: str, actor: str
    ) -> None:
        """Open the conversation's one stream."""
        state = self.state
        if state.stream is not None:
            raise StreamAlreadyOpenError(state.chat_id, state.stream.stream_id)
        if trigger not in TRIGGERS:
            raise ValueError(f"trigger must be one of {', '.join(TRIGGERS)}, not {trigger!r}")
        if continuation:
            if not state.messages or state.messages[-1]["role"] != "assistant":
                raise InvalidMessageError(
                    "nothing to continue: the last message is not an assistant message"
                )
            message_id = state.messages[-1]["id"]
        elif state.has_message(message_id):
            raise InvalidMessageError(
                "a message with this id is already in the conversation (open the stream "
                "with continuation=True to continue it)",
                message_id=message_id,
            )
        self.trigger_event(
            StreamOpened,
            stream_id=stream_id,
            message_id=message_id,
            continuation=continuation,
            trigger=trigger,
            actor=actor,
        )

    def receive(self, stream_id: str, chunk: Any, *, limits: Limits) -> ReceivedChunk:
        """Check and fold one chunk now; it is recorded at the next ``flush()``."""
        self._require_stream(stream_id)
        state = self.state
        arrived = time.time()
        try:
            limits.check_chunk(chunk)
            check_chunk(chunk)
            verdict = state.receive_chunk(chunk)
        except InvalidChunkError as refusal:
            position = state.stream.next_seq if state.stream else 0
            if refusal.position is None:
                state.skip_position()
                refusal = refusal.at(position)
            self.buffer.append((limits.keepable(chunk), arrived, Verdict.REFUSED, refusal.reason))
            return ReceivedChunk(refusal.position or 0, Verdict.REFUSED, refusal)
        self.buffer.append((chunk, arrived, verdict, None))
        assert state.stream is not None
        return ReceivedChunk(state.stream.next_seq - 1, verdict)

    def flush(self) -> None:
        """Record the buffered chunks as one ``ChunksReceived`` event."""
        if not self.buffer:
            return
        stream = self.state.stream
        assert stream is not None
        entries = self._buffer
        self._buffer = []
        now = time.time()
        self.trigger_event(
            ChunksReceived,
            stream_id=stream.stream_id,
            first_seq=stream.next_seq - len(entries),
            chunks=[entry[0] for entry in entries],
            ages_ms=[max(0, round((now - entry[1]) * 1000)) for entry in entries],
            replays=[i for i, entry in enumerate(entries) if entry[2] is Verdict.REPLAY],
            refusals=[(i, entry[3] or "") for i, entry in enumerate(entries) if entry[3]],
            actor=stream.actor,
        )

    def close_stream(self, stream_id: str, outcome: str, reason: str | None, *, actor: str) -> None:
        """Record what is buffered, then close the stream with its outcome."""
        self._require_stream(stream_id)
        if outcome not in STREAM_OUTCOMES:
            raise ValueError(f"outcome must be one of {', '.join(STREAM_OUTCOMES)}, not {outcome!r}")
        self.flush()
        self.trigger_event(StreamClosed, stream_id=stream_id, outcome=outcome, reason=reason, actor=actor)

    def respond_to_approval(
        self,
        *,
        approval_id: str | None,
        tool_call_id: str | None,
        approved: bool,
        reason: str | None,
        actor: str,
        auto_continue: bool,
    ) -> ApprovalDecision:
        """Answer an approval; a duplicate, or a call no longer awaiting approval, records nothing."""
        decision = decide_approval(
            self.state, approval_id=approval_id, tool_call_id=tool_call_id, approved=approved
        )
        if decision.changed:
            self.trigger_event(
                ToolApprovalResponded,
                tool_call_id=decision.tool_call_id,
                approval_id=decision.approval_id,
                approved=approved,
                reason=reason,
                auto_continue=auto_continue,
                actor=actor,
            )
        return decision

    def _require_stream(self, stream_id: str) -> None:
        stream = self.state.stream
        if stream is None or stream.stream_id != stream_id:
            raise NoOpenStreamError(self.state.chat_id, stream_id)


def is_boundary(chunk: Mapping[str, Any]) -> bool:
    """SPEC §7: chunks others may act on are committed at once."""
    return chunk.get("type") in _BOUNDARY_TYPES if isinstance(chunk, Mapping) else False


_BOUNDARY_TYPES = frozenset(
    {
        "tool-input-available",
        "tool-input-error",
        "tool-approval-request",
        "tool-output-available",
        "tool-output-error",
        "tool-output-denied",
        "finish-step",
        "finish",
        "error",
        "abort",
    }
)
