"""The ``Conversation`` aggregate: decides what an input means, then records it as events.

Chunks are folded the moment they arrive (so a bad chunk is refused at once
and the next one sees the new state) and recorded in batches: ``flush()``
turns the buffered chunks into one ``ChunksReceived`` event, whose ``apply``
skips the positions already folded. Replaying the log therefore rebuilds
exactly the live state.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any, NamedTuple
from uuid import NAMESPACE_URL, UUID, uuid5

from eventsourcing.domain import BaseAggregate

from chatledger.domain.approvals import ApprovalDecision, decide_approval
from chatledger.domain.chunks import check_chunk
from chatledger.domain.continuation import batch_is_answered, latest_assistant
from chatledger.domain.conversation import ConversationState, Verdict
from chatledger.domain.dialects import IMPLICIT_MAJOR, dialect_for
from chatledger.domain.errors import (
    ContinuationNotPendingError,
    InvalidChunkError,
    InvalidInputError,
    InvalidMessageError,
    NoOpenStreamError,
    OversizedChunkError,
    StreamAlreadyOpenError,
)
from chatledger.domain.events import (
    ChunksReceived,
    ContinuationClaimed,
    ContinuationRequested,
    ConversationStarted,
    MessageAppended,
    MessagesCut,
    MetadataSet,
    Redacted,
    SteeringQueued,
    StreamClosed,
    StreamOpened,
    StreamRenewed,
    TitleSet,
    ToolApprovalResponded,
    ToolOutputAdded,
)
from chatledger.domain.lease import expiry_reason, lease_expired
from chatledger.domain.limits import Limits, check_choice, check_name, check_text
from chatledger.domain.parts import check_message
from chatledger.domain.redaction import decide_redaction
from chatledger.domain.tool_outputs import ToolOutputDecision, decide_tool_output

__all__ = [
    "STREAM_OUTCOMES",
    "TITLE_LIMIT",
    "TRIGGERS",
    "Conversation",
    "ReceivedChunk",
    "conversation_id",
    "is_boundary",
]

TITLE_LIMIT = 200
"""The longest title, in characters."""
STREAM_OUTCOMES = ("finished", "aborted", "errored", "interrupted")
TRIGGERS = ("submit-message", "regenerate-message", "continuation")

_NAMESPACE = uuid5(NAMESPACE_URL, "https://chatledger.invalid/conversations")


def conversation_id(tenant: str, chat_id: str) -> UUID:
    """The aggregate id of ``(tenant, chat_id)``: a UUID 5, stable, and distinct per tenant.

    Computed as ``uuid5`` does, but tolerant of ids that are not valid UTF-8
    (such a chat can never have been stored, so lookups simply find nothing).
    """
    name = f"{len(tenant)}:{tenant}/{chat_id}".encode("utf-8", "surrogatepass")
    return UUID(bytes=hashlib.sha1(_NAMESPACE.bytes + name).digest()[:16], version=5)


class ReceivedChunk(NamedTuple):
    """What the store did with one chunk given to a stream (a named tuple: it is made per chunk)."""

    position: int
    """The chunk's position in its stream."""
    verdict: Verdict
    """Applied, replay, or refused."""
    error: InvalidChunkError | None = None
    """Why it was refused."""


_received: Callable[[type[ReceivedChunk], tuple[int, Verdict, None]], ReceivedChunk] = tuple.__new__
"""Makes a ``ReceivedChunk`` without the named tuple's Python-level ``__new__`` (once per chunk)."""
_APPLIED = Verdict.APPLIED
"""Looked up once: reading an enum member off its class costs more than the fast path's fold."""


class Conversation(BaseAggregate[UUID]):
    """One conversation's event-sourced aggregate."""

    if TYPE_CHECKING:
        state: ConversationState
        _buffer: list[tuple[Any, float, Verdict, str | None]]

    @classmethod
    def start(
        cls,
        tenant: str,
        chat_id: str,
        *,
        actor: str,
        metadata: dict[str, Any] | None = None,
        ai_sdk: int = IMPLICIT_MAJOR,
    ) -> Conversation:
        """Create a new conversation that speaks AI SDK ``ai_sdk`` (6 or 7).

        Names with control characters are refused.
        """
        check_name("tenant", tenant)
        check_name("chat id", chat_id)
        check_name("actor", actor)
        dialect_for(ai_sdk)  # the major is checked here, once, before it is recorded
        return cls._create(
            ConversationStarted,
            id=conversation_id(tenant, chat_id),
            tenant=tenant,
            chat_id=chat_id,
            actor=actor,
            metadata=metadata,
            ai_sdk=ai_sdk,
        )

    @property
    def buffer(self) -> list[tuple[Any, float, Verdict, str | None]]:
        """Chunks received but not yet recorded: (chunk, arrival, verdict, refusal)."""
        if "_buffer" not in self.__dict__:
            self._buffer = []
        return self._buffer

    def append_message(self, message: Any, *, actor: str, limits: Limits) -> None:
        """Append a whole UIMessage of any role, after checking it is storable and valid.

        While a stream is open, a user message is queued as a steering message
        (``SteeringQueued``) if the conversation's dialect steers; anything
        else is refused then.
        """
        check_name("actor", actor)
        stream = self.state.stream
        steering = stream is not None and self.state.dialect.steers
        if stream is not None and not (steering and _role(message) == "user"):
            raise StreamAlreadyOpenError(self.state.chat_id, stream.stream_id)
        limits.message_size(message)
        message = check_message(message, self.state.dialect)
        queued = any(m["id"] == message["id"] for m in self.state.steering)
        if self.state.has_message(message["id"]) or queued:
            raise InvalidMessageError(
                "a message with this id is already in the conversation", message_id=message["id"]
            )
        if stream is not None:
            self.trigger_event(
                SteeringQueued, message=message, stream_id=stream.stream_id, actor=actor
            )
            return
        self.trigger_event(MessageAppended, message=message, actor=actor)

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
    ) -> None:
        """Open the conversation's one stream (fulfilling a continuation request if named).

        ``lease_seconds``: how long it stays open with nothing written to it (``expire_stream``).
        """
        check_name("stream id", stream_id)
        if not continuation and request_id is None:  # a continuation keeps the last message's id
            check_name("message id", message_id)
        check_name("actor", actor)
        check_name("request id", request_id, optional=True)
        check_choice("trigger", trigger, TRIGGERS)
        state = self.state
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
            request_id=request_id,
            lease_seconds=lease_seconds,
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
                return _received(ReceivedChunk, (position, _APPLIED, None))
        return self.receive_checked(stream_id, chunk, limits=limits)

    def receive_checked(self, stream_id: str, chunk: Any, *, limits: Limits) -> ReceivedChunk:
        """``receive`` by the general path, for any chunk: the reference its fast path agrees with."""
        self._require_stream(stream_id)
        state = self.state
        stream = state.stream
        assert stream is not None
        arrived = time.time()
        try:
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
            self.buffer.append((kept, arrived, Verdict.REFUSED, refusal.reason))
            return ReceivedChunk(refusal.position or 0, Verdict.REFUSED, refusal)
        self.buffer.append((chunk, arrived, verdict, None))
        return ReceivedChunk(stream.next_seq - 1, verdict)

    def flush(self) -> None:
        """Record the buffered chunks as one ``ChunksReceived`` event."""
        if not self.buffer:
            return
        stream = self.state.stream
        assert stream is not None
        entries = self._buffer
        self._buffer = []
        now = time.time()
        # Once per batch, over every chunk: kept to plain loops (an enum member looked up
        # per chunk, or max() per age, cost as much as the fast path's whole fold).
        applied, replay, refused = Verdict.APPLIED, Verdict.REPLAY, Verdict.REFUSED
        odd = [(i, entry) for i, entry in enumerate(entries) if entry[2] is not applied]
        self.trigger_event(
            ChunksReceived,
            stream_id=stream.stream_id,
            first_seq=stream.next_seq - len(entries),
            chunks=[entry[0] for entry in entries],
            ages_ms=[round((now - entry[1]) * 1000) if now > entry[1] else 0 for entry in entries],
            replays=[i for i, entry in odd if entry[2] is replay],
            refusals=[(i, entry[3] or "refused") for i, entry in odd if entry[2] is refused],
            retractions=self._retractions(stream.next_seq - len(entries)),
            actor=stream.actor,
        )

    def _retractions(self, first_seq: int) -> list[tuple[int, list[int]]]:
        """The resets of the batch starting at ``first_seq``: (batch index, retracted positions)."""
        stream = self.state.stream
        assert stream is not None
        found = sorted(stream.retractions.items())
        stream.retractions.clear()
        return [(at - first_seq, positions) for at, positions in found if at >= first_seq]

    def close_stream(self, stream_id: str, outcome: str, reason: str | None, *, actor: str) -> None:
        """Record what is buffered, then close the stream with its outcome."""
        check_choice("outcome", outcome, STREAM_OUTCOMES)
        check_text("reason", reason)
        check_name("actor", actor)
        self._require_stream(stream_id)
        self.flush()
        wanted = self.state.wants_continuation
        if self.state.steering:
            wanted = None  # the user spoke meanwhile: that turn comes next, not a continuation
        if self.state.halts():
            # The provider stream ended without completing; nothing continues it.
            wanted = None
            if outcome == "finished":
                outcome = "interrupted"
                reason = reason or "the model's stream ended without completing"
        self.trigger_event(
            StreamClosed, stream_id=stream_id, outcome=outcome, reason=reason, actor=actor
        )
        if wanted is not None:
            # docs/behaviour.md §4.3: an answer given while the stream was open is decided now.
            self._request_continuation(
                f"{wanted['cause']} (given while a stream was open)", actor=wanted["actor"]
            )

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
        check_name("approval id", approval_id, optional=True)
        check_name("tool call id", tool_call_id, optional=True)
        if type(approved) is not bool:
            raise InvalidInputError(f"approved must be true or false, not {approved!r}"[:200])
        check_text("reason", reason)
        check_name("actor", actor)
        decision = decide_approval(
            self.state, approval_id=approval_id, tool_call_id=tool_call_id, approved=approved
        )
        if decision.changed and self.state.in_halted_message(decision.tool_call_id):
            self.trigger_event(
                ToolApprovalResponded,
                tool_call_id=decision.tool_call_id,
                approval_id=decision.approval_id,
                approved=approved,
                reason=reason,
                auto_continue=False,
                late=True,
                actor=actor,
            )
            current = str((self.state.tool_part(decision.tool_call_id) or {}).get("state"))
            return ApprovalDecision(decision.tool_call_id, decision.approval_id, False, current)
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
            if auto_continue and self.state.stream is None:
                verb = "approval" if approved else "denial"
                self._request_continuation(f"{verb} of {decision.tool_call_id}", actor=actor)
        return decision

    def add_tool_output(
        self,
        tool_call_id: str,
        *,
        state: str,
        output: Any,
        error_text: str | None,
        actor: str,
        auto_continue: bool,
        limits: Limits,
    ) -> ToolOutputDecision:
        """Record a client's tool result or error; a terminal call keeps its first result."""
        check_name("tool call id", tool_call_id)
        check_text("error text", error_text)
        check_name("actor", actor)
        decision = decide_tool_output(self.state, tool_call_id, state)
        if decision.changed:
            # A result for a call of a halted (interrupted) message is recorded as late:
            # it changes nothing and continues nothing.
            late = self.state.in_halted_message(tool_call_id)
            limits.check_tool_output(output, tool_call_id=tool_call_id)
            self.trigger_event(
                ToolOutputAdded,
                tool_call_id=tool_call_id,
                state=state,
                output=output if state == "output-available" else None,
                error_text=error_text if state == "output-error" else None,
                auto_continue=auto_continue and not late,
                actor=actor,
                **({"late": True} if late else {}),
            )
            if late:
                current = str((self.state.tool_part(tool_call_id) or {}).get("state"))
                return ToolOutputDecision(tool_call_id, False, current)
            if auto_continue and self.state.stream is None:
                self._request_continuation(f"output of {tool_call_id}", actor=actor)
        return decision

    def _request_continuation(self, cause: str, *, actor: str) -> bool:
        """Queue one continuation if the whole tool batch is answered and none is pending."""
        state = self.state
        if state.continuation is not None or not batch_is_answered(state):
            return False
        latest = latest_assistant(state.messages)
        if latest is not None and latest["id"] == state.halted_message:
            return False
        answer = latest_assistant(state.messages)
        assert answer is not None  # a batch to answer lives in an assistant message
        message_id = answer["id"]
        self.trigger_event(
            ContinuationRequested,
            request_id=f"cont_{self.id.hex[:8]}_{self.version + 1}",
            message_id=message_id,
            cause=cause,
            actor=actor,
        )
        return True

    def claim_continuation(
        self, request_id: str, *, worker: str, lease_seconds: float, now: datetime
    ) -> bool:
        """Take a pending request unless another worker holds an unexpired lease on it."""
        check_name("request id", request_id)
        check_name("worker", worker)
        pending = self.state.continuation
        if pending is None or pending["requestId"] != request_id:
            return False
        lease = pending.get("leaseUntil")
        if (
            lease is not None
            and datetime.fromisoformat(lease) > now
            and pending.get("claimedBy") != worker
        ):
            return False
        self.trigger_event(
            ContinuationClaimed,
            request_id=request_id,
            worker=worker,
            lease_seconds=lease_seconds,
            actor=worker,
        )
        return True

    def cut_messages(
        self, from_message_id: str, *, trigger: str, reason: str | None, actor: str
    ) -> int:
        """Cut ``from_message_id`` and every later message from the view (regenerate, edit)."""
        check_name("message id", from_message_id)
        check_name("trigger", trigger)
        check_text("reason", reason)
        check_name("actor", actor)
        state = self.state
        if state.stream is not None:
            raise StreamAlreadyOpenError(state.chat_id, state.stream.stream_id)
        index = next((i for i, m in enumerate(state.messages) if m["id"] == from_message_id), None)
        if index is None:
            raise InvalidMessageError(
                "no message with this id in the conversation", message_id=from_message_id
            )
        count = len(state.messages) - index
        self.trigger_event(
            MessagesCut,
            from_message_id=from_message_id,
            count=count,
            trigger=trigger,
            reason=reason,
            actor=actor,
        )
        return count

    def set_title(self, title: str | None, *, actor: str) -> bool:
        """Name the conversation (None: untitled again); False when it already has that title."""
        if title is not None:
            if not isinstance(title, str):
                raise InvalidInputError(
                    f"the title must be a string or None, not {type(title).__name__}"
                )
            title = " ".join(title.split())
            if not title:
                raise InvalidInputError("the title must not be blank (give None to clear it)")
            if len(title) > TITLE_LIMIT:
                raise InvalidInputError(
                    f"the title has {len(title)} characters; at most {TITLE_LIMIT} are allowed"
                )
        if title == self.state.title:
            return False
        self.trigger_event(TitleSet, title=title, actor=actor)
        return True

    def set_metadata(self, metadata: dict[str, Any], *, actor: str) -> bool:
        """Replace the conversation's metadata; False when it already is exactly that."""
        if not isinstance(metadata, dict) or not all(isinstance(k, str) for k in metadata):
            raise InvalidInputError("metadata must be a JSON object (a dict with string keys)")
        if metadata == self.state.metadata:
            return False
        self.trigger_event(MetadataSet, metadata=metadata, actor=actor)
        return True

    def redact(
        self,
        *,
        tool_call_id: str | None,
        message_id: str | None,
        fields: list[str] | None,
        reason: str,
        actor: str,
    ) -> bool:
        """Hide a tool call's input/output or a message's parts from every view; False if already hidden.

        ``fields`` (default: all) are ``input``/``output`` for a tool call and
        part kinds for a message (``chatledger.domain.redaction``). A reason is
        required: the redaction is itself audited.
        """
        check_name("tool call id", tool_call_id, optional=True)
        check_name("message id", message_id, optional=True)
        check_name("actor", actor)
        if not isinstance(reason, str) or not reason.strip():
            raise InvalidInputError("a redaction needs a reason (who asked for it, and why)")
        check_text("reason", reason)
        decision = decide_redaction(
            self.state, tool_call_id=tool_call_id, message_id=message_id, fields=fields
        )
        if decision is None:
            return False
        self.trigger_event(
            Redacted,
            tool_call_id=decision.tool_call_id,
            message_id=decision.message_id,
            fields=decision.fields,
            reason=reason,
            actor=actor,
        )
        return True

    def _require_stream(self, stream_id: str) -> None:
        stream = self.state.stream
        if stream is None or stream.stream_id != stream_id:
            raise NoOpenStreamError(self.state.chat_id, stream_id)


def _role(message: Any) -> Any:
    return message.get("role") if isinstance(message, dict) else None


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
