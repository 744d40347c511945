"""The domain events of a conversation: facts, past tense, each with its actor and UTC time.

Event class paths are stored data (``chatledger.domain.events:<Class>``):
never rename or move a class here without registering its old topic
(``eventsourcing.utils.register_topic``) or upcasting. Schemas are versioned
with ``class_version`` and ``upcast_vN_vN+1`` static methods (docs/behaviour.md §2).
Each event's ``apply_to`` says what it does to the state; the rules that take
longer, or that several events share, are in ``_event_folds``.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, ClassVar
from uuid import UUID

from eventsourcing.domain import CanInitAggregate, CanMutateAggregate
from pydantic import BaseModel, ConfigDict

from chatledger.domain import _event_folds as folds
from chatledger.domain.approvals import record_approval
from chatledger.domain.conversation import ConversationState, Verdict
from chatledger.domain.tool_outputs import record_tool_output
from chatledger.domain.tool_parts import is_tool_part

if TYPE_CHECKING:
    from chatledger.domain.aggregate import Conversation

__all__ = [
    "ChunksReceived",
    "ContinuationClaimed",
    "ContinuationRequested",
    "ConversationEvent",
    "ConversationStarted",
    "MessageAppended",
    "MessagesCut",
    "MetadataSet",
    "Redacted",
    "SteeringQueued",
    "StreamClosed",
    "StreamOpened",
    "StreamRenewed",
    "TitleSet",
    "ToolApprovalResponded",
    "ToolOutputAdded",
]


class ConversationEvent(BaseModel, CanMutateAggregate[UUID]):
    """Base of every conversation event."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    originator_id: UUID
    """The conversation's aggregate id (derived from tenant and chat id)."""
    originator_version: int
    """Position of the event in the conversation's log, from 1."""
    timestamp: datetime
    """When the event was recorded (UTC)."""
    actor: str
    """Who caused it: ``user:alice``, ``agent:support-bot``, ``system``."""

    class_version: ClassVar[int] = 1

    def apply(self, aggregate: Any) -> None:
        """Change the conversation's state; subclasses say how."""
        self.apply_to(aggregate.state)

    def apply_to(self, state: ConversationState) -> None:
        """Change a conversation state (the pure part of ``apply``)."""


class ConversationStarted(ConversationEvent, CanInitAggregate[UUID]):
    """A conversation was created."""

    originator_topic: str
    """The aggregate class (eventsourcing needs it to rebuild the aggregate)."""
    tenant: str
    """The tenant that owns the conversation."""
    chat_id: str
    """The chat id, unique within the tenant."""
    metadata: dict[str, Any] | None = None
    """Free metadata given at creation."""
    ai_sdk: int = 6
    """The AI SDK major the conversation speaks (6 or 7); events stored before it was recorded are 6."""
    owner: str | None = None
    """Who continues it (``chatledger.domain.owners``); None: started before owners were recorded."""

    class_version: ClassVar[int] = 3

    @staticmethod
    def upcast_v1_v2(state: dict[str, Any]) -> None:
        """Version 1 events predate AI SDK 7: those conversations speak v6."""
        state["ai_sdk"] = 6

    @staticmethod
    def upcast_v2_v3(state: dict[str, Any]) -> None:
        """Version 2 events predate owners: ``owners.owner_of`` decides from what the conversation holds."""
        state["owner"] = None

    def mutate(self, aggregate: Any) -> Conversation:  # type: ignore[override]
        """Create the aggregate from this first event."""
        from chatledger.domain.aggregate import Conversation

        conversation = Conversation.__new__(Conversation)
        conversation.__base_init__(self.originator_id, self.originator_version, self.timestamp)
        conversation.state = ConversationState(self.tenant, self.chat_id, ai_sdk=self.ai_sdk)
        conversation.state.owner = self.owner
        return conversation


class MessageAppended(ConversationEvent):
    """A whole UIMessage (user, system, or an imported assistant message) was appended."""

    message: dict[str, Any]
    """The UIMessage, as JSON, exactly as given."""

    def apply_to(self, state: ConversationState) -> None:
        """Append the message."""
        message = folds.own(self.message)
        state.append_message(message)
        if message["role"] == "user":
            state.continuation = None  # a new user turn overtakes a pending continuation
        for part in message["parts"]:
            if is_tool_part(part) and part.get("state") == "approval-requested":
                state.approval_times[part["toolCallId"]] = self.timestamp.isoformat()


class StreamOpened(ConversationEvent):
    """A model response started streaming into an assistant message."""

    stream_id: str
    """Identifies the stream in the log."""
    message_id: str
    """The assistant message written to."""
    continuation: bool
    """True when the stream continues the last assistant message."""
    trigger: str
    """``submit-message``, ``regenerate-message`` or ``continuation``."""
    request_id: str | None = None
    """The continuation request this stream fulfils, if any."""
    lease_seconds: float | None = None
    """How long the stream stays open with nothing written to it (docs/behaviour.md §7.1); None in
    events stored before leases were recorded (judged with the reader's default)."""
    answer_key: str | None = None
    """Its writer's name for the answer (``Idempotency-Key``): a retried write is recognised."""

    def apply_to(self, state: ConversationState) -> None:
        """Open the stream (a new assistant message unless it continues one); its lease starts now."""
        folds.fulfil_continuation(state, self.request_id, self.message_id, self.continuation)
        state.open_stream(
            self.stream_id,
            self.message_id,
            continuation=self.continuation,
            trigger=self.trigger,
            actor=self.actor,
            opened_at=self.timestamp,
            lease_seconds=self.lease_seconds,
            answer_key=self.answer_key,
        )


class ChunksReceived(ConversationEvent):
    """Chunks arrived on the open stream; one event holds one flushed batch.

    Chunk ``i`` of the batch has stream position ``first_seq + i`` and arrived
    ``ages_ms[i]`` milliseconds before ``timestamp``. Each chunk is kept as
    received (unknown keys too). Replays and refused chunks are recorded but
    do not change the conversation.
    """

    stream_id: str
    """The stream the chunks arrived on."""
    first_seq: int
    """Stream position of the first chunk of the batch."""
    chunks: list[Any]
    """The chunks as received (JSON); a refused non-JSON input is kept as its repr."""
    ages_ms: list[int] = []
    """Per chunk: milliseconds between its arrival and ``timestamp``."""
    replays: list[int] = []
    """Batch indexes of chunks that were replays (docs/behaviour.md §3.2)."""
    refusals: list[tuple[int, str]] = []
    """Batch indexes of refused chunks, with the reason (docs/behaviour.md §3.4)."""
    retractions: list[tuple[int, list[int]]] = []
    """Batch index of each applied ``reset-step`` (AI SDK 7), with the stream positions of the
    chunks it retracted from the view (they stay in the log)."""

    def apply_to(self, state: ConversationState) -> None:
        """Fold the batch's applied chunks; positions already folded live are skipped."""
        folds.fold_batch(state, self)

    def skipped(self) -> set[int]:
        """Batch indexes of the chunks that were recorded but not applied (replays and refusals)."""
        return folds.skipped(self.replays, self.refusals)

    def verdicts(self) -> list[Verdict]:
        """What became of each chunk of the batch."""
        return folds.verdicts(len(self.chunks), self.replays, self.refusals)


class StreamRenewed(ConversationEvent):
    """The open stream's writer is alive but wrote nothing for a while: its lease runs from now.

    Recorded only by an idle writer (a third of its lease after its last
    commit); a writer that commits chunks renews with each batch instead.
    """

    stream_id: str
    """The stream renewed."""

    def apply_to(self, state: ConversationState) -> None:
        """Move the stream's lease on."""
        what = f"a renewal of stream {self.stream_id!r} (version {self.originator_version}) follows"
        folds.open_stream_named(state, self.stream_id, what).renewed_at = self.timestamp


class StreamClosed(ConversationEvent):
    """The open stream ended: ``finished``, ``aborted``, ``errored`` or ``interrupted``."""

    stream_id: str
    """The stream that ended."""
    outcome: str
    """How it ended."""
    reason: str | None = None
    """Why, in words, when known."""

    def apply_to(self, state: ConversationState) -> None:
        """Close the stream."""
        state.close_stream(self.outcome, self.reason)


class ToolApprovalResponded(ConversationEvent):
    """Someone approved or denied a tool call (a denial lands as ``output-denied``)."""

    tool_call_id: str
    """The tool call answered."""
    approval_id: str
    """The approval answered."""
    approved: bool
    """The answer."""
    reason: str | None = None
    """Why, as given by the person answering."""
    auto_continue: bool = True
    """Whether the answer asks the model to continue the turn."""
    late: bool = False
    """v7: the answer came after the call's stream was interrupted; recorded, it changes nothing."""

    def apply_to(self, state: ConversationState) -> None:
        """Record the answer on the tool part."""
        if self.late:
            return
        record_approval(state, self.tool_call_id, self.approval_id, self.approved, self.reason)
        verb = "approval" if self.approved else "denial"
        folds.answered(state, self.auto_continue, self.actor, f"{verb} of {self.tool_call_id}")


class ToolOutputAdded(ConversationEvent):
    """A client gave a tool call's result (``output-available``) or error (``output-error``)."""

    tool_call_id: str
    """The tool call answered."""
    state: str
    """``output-available`` or ``output-error``."""
    output: Any = None
    """The result, for ``output-available``."""
    error_text: str | None = None
    """The error (or custom denial) text, for ``output-error``."""
    auto_continue: bool = True
    """Whether the output asks the model to continue the turn."""
    late: bool = False
    """v7: the output came after the call's stream was interrupted; recorded, it changes nothing."""

    def apply_to(self, state: ConversationState) -> None:
        """Record the output on the tool part."""
        if self.late:
            return
        record_tool_output(state, self.tool_call_id, self.state, self.output, self.error_text)
        folds.answered(state, self.auto_continue, self.actor, f"output of {self.tool_call_id}")


class ContinuationRequested(ConversationEvent):
    """The model should continue the latest assistant message: its tool batch is answered."""

    request_id: str
    """Identifies the request in the queue."""
    message_id: str
    """The assistant message to continue."""
    cause: str
    """What completed the batch (e.g. ``approval call_7``)."""

    def apply_to(self, state: ConversationState) -> None:
        """Queue the request, addressed to the conversation's owner."""
        folds.queue_continuation(
            state, self.request_id, self.message_id, self.cause, self.timestamp
        )


class ContinuationClaimed(ConversationEvent):
    """A worker took a continuation request; it has ``lease_seconds`` to open the stream."""

    request_id: str
    """The request claimed."""
    worker: str
    """Who claimed it."""
    lease_seconds: float
    """How long the claim holds before another worker may take the request."""

    def apply_to(self, state: ConversationState) -> None:
        """Mark the request as claimed."""
        until = self.timestamp + timedelta(seconds=self.lease_seconds)
        folds.claim_continuation(
            state, self.request_id, self.worker, until, self.originator_version
        )


class MessagesCut(ConversationEvent):
    """Messages were cut from the current view (regenerate or edit); they stay in the log."""

    from_message_id: str
    """The first message cut."""
    count: int
    """How many messages were cut."""
    trigger: str
    """``regenerate-message`` or ``edit``."""
    reason: str | None = None
    """Why, when given."""

    def apply_to(self, state: ConversationState) -> None:
        """Cut the messages."""
        index = next(i for i, m in enumerate(state.messages) if m["id"] == self.from_message_id)
        state.cut_from(index)


class TitleSet(ConversationEvent):
    """Someone named the conversation (None: back to the first user text)."""

    title: str | None
    """The title, or None to clear it."""

    def apply_to(self, state: ConversationState) -> None:
        """Record the title."""
        state.title = self.title


class MetadataSet(ConversationEvent):
    """Someone replaced the conversation's metadata."""

    metadata: dict[str, Any]
    """The new metadata, whole (it replaces the previous one)."""

    def apply_to(self, state: ConversationState) -> None:
        """Record the metadata."""
        state.metadata = folds.own(self.metadata)


class SteeringQueued(ConversationEvent):
    """A user message arrived while an answer streamed (AI SDK 7 steering): queued, not refused.

    The running answer takes it at its next step boundary (its ``steering-message``
    chunk with the message's id); if the stream closes without taking it, it
    becomes the next user message, in the order the queue received it.
    """

    message: dict[str, Any]
    """The user UIMessage, as JSON, exactly as given."""
    stream_id: str
    """The stream that was open when it arrived."""

    def apply_to(self, state: ConversationState) -> None:
        """Queue the message."""
        state.steering.append(folds.own(self.message))


class Redacted(ConversationEvent):
    """Someone hid a tool call's input or output, or parts of a message, from every view.

    The events holding the content stay in the log unchanged (the chain still
    verifies); views show ``[redacted]`` instead (``chatledger.domain.redaction``).
    """

    tool_call_id: str | None = None
    """The tool call redacted, or None when a message is."""
    message_id: str | None = None
    """The message redacted, or None when a tool call is."""
    fields: list[str]
    """What is hidden: ``input``/``output`` of a tool call, part kinds of a message."""
    reason: str
    """Why, as given by the person redacting."""

    def apply_to(self, state: ConversationState) -> None:
        """Remember the redaction; the messages themselves stay as folded."""
        state.redactions.append(self.record())

    def record(self) -> dict[str, Any]:
        """The redaction as ``ConversationState.redactions`` keeps it."""
        target = (
            {"toolCallId": self.tool_call_id}
            if self.tool_call_id is not None
            else {"messageId": self.message_id}
        )
        return {**target, "fields": list(self.fields), "version": self.originator_version}
