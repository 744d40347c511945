"""The ``Conversation`` aggregate: decides what an input means, then records it as events.

Its stream commands (open, receive, flush, close) come from its base class,
``stream_commands.StreamCommands``; here are the others: starting, messages,
answers to tool calls, continuations, cuts, title, metadata and redaction.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from functools import lru_cache
from typing import Any
from uuid import NAMESPACE_URL, UUID, uuid5

from chatledger.domain.approvals import ApprovalDecision, decide_approval
from chatledger.domain.branch_events import BranchSwitched
from chatledger.domain.branches import decide_switch
from chatledger.domain.continuation import claimable
from chatledger.domain.dialects import IMPLICIT_MAJOR, dialect_for
from chatledger.domain.errors import InvalidInputError, InvalidMessageError, StreamAlreadyOpenError
from chatledger.domain.events import (
    ContinuationClaimed,
    ConversationStarted,
    MessageAppended,
    MessagesCut,
    MetadataSet,
    Redacted,
    SteeringQueued,
    TitleSet,
    ToolApprovalResponded,
    ToolOutputAdded,
)
from chatledger.domain.limits import (
    Limits,
    check_flag,
    check_name,
    check_names,
    check_text,
    check_title,
)
from chatledger.domain.owner_events import ContinuationRetired, OwnerSet
from chatledger.domain.owners import ANY, check_owner, owner_of
from chatledger.domain.parts import check_message
from chatledger.domain.redaction import decide_redaction
from chatledger.domain.stream_commands import STREAM_OUTCOMES, TRIGGERS, StreamCommands
from chatledger.domain.stream_rules import ReceivedChunk
from chatledger.domain.tool_outputs import ToolOutputDecision, decide_tool_output

# STREAM_OUTCOMES, TRIGGERS and ReceivedChunk come with the stream commands: named here too,
# as the aggregate's own vocabulary.
__all__ = [
    "STREAM_OUTCOMES",
    "TRIGGERS",
    "Conversation",
    "ReceivedChunk",
    "conversation_id",
]

_NAMESPACE = uuid5(NAMESPACE_URL, "https://chatledger.invalid/conversations")


def conversation_id(tenant: str, chat_id: str) -> UUID:
    """The aggregate id of ``(tenant, chat_id)``: a UUID 5, stable, and distinct per tenant.

    Computed as ``uuid5`` does, but tolerant of ids that are not valid UTF-8
    (such a chat can never have been stored, so lookups simply find nothing).
    A tenant or chat id that is not a string is refused (InvalidInputError),
    before the memo, which could not even hash a list.
    """
    for what, given in (("tenant", tenant), ("chat id", chat_id)):
        if not isinstance(given, str):
            raise InvalidInputError(f"{what} must be a string, not {type(given).__name__}")
    return _conversation_id(tenant, chat_id)


@lru_cache(maxsize=4096)  # asked several times per turn (commit, cache, flusher, chain)
def _conversation_id(tenant: str, chat_id: str) -> UUID:
    name = f"{len(tenant)}:{tenant}/{chat_id}".encode("utf-8", "surrogatepass")
    return UUID(bytes=hashlib.sha1(_NAMESPACE.bytes + name).digest()[:16], version=5)


class Conversation(StreamCommands):
    """One conversation's event-sourced aggregate."""

    @classmethod
    def start(
        cls,
        tenant: str,
        chat_id: str,
        *,
        actor: str,
        metadata: dict[str, Any] | None = None,
        ai_sdk: int = IMPLICIT_MAJOR,
        owner: str = ANY,
    ) -> Conversation:
        """Create a new conversation that speaks AI SDK ``ai_sdk`` (6 or 7), continued by ``owner``.

        Names with control characters are refused.
        """
        check_names(tenant=tenant, chat_id=chat_id, actor=actor)
        check_owner(owner)
        if metadata is not None:
            _check_metadata(metadata)
        dialect_for(ai_sdk)  # the major is checked here, once, before it is recorded
        return cls._create(
            ConversationStarted,
            id=conversation_id(tenant, chat_id),
            tenant=tenant,
            chat_id=chat_id,
            actor=actor,
            metadata=metadata,
            ai_sdk=ai_sdk,
            owner=owner,
        )

    def append_message(self, message: Any, *, actor: str, limits: Limits) -> None:
        """Append a whole UIMessage of any role, after checking it is storable and valid.

        While a stream is open, a user message is queued as a steering message
        (``SteeringQueued``) if the conversation's dialect steers; anything
        else is refused then.
        """
        check_name("actor", actor)
        state = self.state
        stream = state.stream
        if stream is not None and not (state.dialect.steers and _role(message) == "user"):
            raise StreamAlreadyOpenError(state.chat_id, stream.stream_id)
        limits.message_size(message)
        message = check_message(message, state.dialect)
        queued = any(m["id"] == message["id"] for m in state.steering)
        if state.has_message(message["id"]) or queued:
            raise InvalidMessageError(
                "a message with this id is already in the conversation", message_id=message["id"]
            )
        if stream is not None:
            self.trigger_event(
                SteeringQueued, message=message, stream_id=stream.stream_id, actor=actor
            )
            return
        self.trigger_event(MessageAppended, message=message, actor=actor)

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
        check_names(approval_id=approval_id, tool_call_id=tool_call_id, optional=True)
        check_flag("approved", approved)
        check_flag("auto_continue", auto_continue)
        check_text("reason", reason)
        check_name("actor", actor)
        decision = decide_approval(
            self.state, approval_id=approval_id, tool_call_id=tool_call_id, approved=approved
        )
        if not decision.changed:
            return decision
        call = decision.tool_call_id
        verb = "approval" if approved else "denial"
        if self._record_answer(
            ToolApprovalResponded,
            call,
            f"{verb} of {call}",
            actor=actor,
            auto_continue=auto_continue,
            approval_id=decision.approval_id,
            approved=approved,
            reason=reason,
        ):
            return decision
        return ApprovalDecision(call, decision.approval_id, False, self._part_state(call))

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
        check_flag("auto_continue", auto_continue)
        decision = decide_tool_output(self.state, tool_call_id, state)
        if not decision.changed:
            return decision
        limits.check_tool_output(output, tool_call_id=tool_call_id)
        if self._record_answer(
            ToolOutputAdded,
            tool_call_id,
            f"output of {tool_call_id}",
            actor=actor,
            auto_continue=auto_continue,
            state=state,
            output=output if state == "output-available" else None,
            error_text=error_text if state == "output-error" else None,
        ):
            return decision
        return ToolOutputDecision(tool_call_id, False, self._part_state(tool_call_id))

    def _record_answer(
        self,
        event: type[ToolApprovalResponded | ToolOutputAdded],
        tool_call_id: str,
        cause: str,
        *,
        actor: str,
        auto_continue: bool,
        **fields: Any,
    ) -> bool:
        """Record an answer to a call, then ask to continue if it completes the batch; False when late.

        An answer for a call of a halted (interrupted) message is recorded as
        late: it changes nothing and continues nothing.
        """
        late = self.state.in_halted_message(tool_call_id)
        self.trigger_event(
            event,
            tool_call_id=tool_call_id,
            **fields,
            auto_continue=auto_continue and not late,
            actor=actor,
            **({"late": True} if late else {}),
        )
        if not late and auto_continue and self.state.stream is None:
            self._request_continuation(cause, actor=actor)
        return not late

    def _part_state(self, tool_call_id: str) -> str:
        return str((self.state.tool_part(tool_call_id) or {}).get("state"))

    def claim_continuation(
        self,
        request_id: str,
        *,
        worker: str,
        lease_seconds: float,
        now: datetime,
        owner: str | None = None,
    ) -> bool:
        """Take a pending request as a worker of ``owner``, unless it is another owner's request or
        another worker holds an unexpired lease on it."""
        check_names(request_id=request_id, worker=worker)
        if not claimable(self.state, request_id, worker=worker, now=now, owner=owner):
            return False
        self.trigger_event(
            ContinuationClaimed,
            request_id=request_id,
            worker=worker,
            lease_seconds=lease_seconds,
            actor=worker,
        )
        return True

    def set_owner(self, owner: str, *, actor: str, reason: str | None) -> bool:
        """Hand the conversation to ``owner`` (a pending request with it); False if it already is."""
        check_owner(owner)
        check_name("actor", actor)
        check_text("reason", reason)
        previous = owner_of(self.state)
        if owner == previous and self.state.owner is not None:
            return False
        self.trigger_event(OwnerSet, owner=owner, previous=previous, reason=reason, actor=actor)
        return True

    def retire_continuation(self, *, actor: str, reason: str) -> str | None:
        """Retire the pending continuation request (its owner continued by its own means); its id, or None."""
        check_name("actor", actor)
        check_text("reason", reason)
        pending = self.state.continuation
        if pending is None:
            return None
        request_id: str = pending["requestId"]
        self.trigger_event(ContinuationRetired, request_id=request_id, reason=reason, actor=actor)
        return request_id

    def cut_messages(
        self, from_message_id: str, *, trigger: str, reason: str | None, actor: str
    ) -> int:
        """Cut ``from_message_id`` and every later message from the view (regenerate, edit)."""
        check_names(message_id=from_message_id, trigger=trigger)
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

    def switch_branch(self, to: str, *, reason: str | None, actor: str) -> str | None:
        """Show the branch of message ``to`` (down its latest path); its new leaf, None if already shown."""
        check_names(message_id=to)
        check_text("reason", reason)
        check_name("actor", actor)
        if self.state.stream is not None:
            raise StreamAlreadyOpenError(self.state.chat_id, self.state.stream.stream_id)
        decision = decide_switch(self.state.branches, to)
        if decision is None:
            return None
        leaf, previous = decision
        self.trigger_event(
            BranchSwitched, leaf=leaf, previous_leaf=previous, reason=reason, actor=actor
        )
        return leaf

    def set_title(self, title: str | None, *, actor: str) -> bool:
        """Name the conversation (None: untitled again); False when it already has that title."""
        title = check_title(title)
        if title == self.state.title:
            return False
        self.trigger_event(TitleSet, title=title, actor=actor)
        return True

    def set_metadata(self, metadata: dict[str, Any], *, actor: str) -> bool:
        """Replace the conversation's metadata; False when it already is exactly that."""
        _check_metadata(metadata)
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
        check_names(tool_call_id=tool_call_id, message_id=message_id, optional=True)
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


def _role(message: Any) -> Any:
    return message.get("role") if isinstance(message, dict) else None


def _check_metadata(metadata: object) -> None:
    """Refuse metadata that is not a JSON object (a dict with string keys)."""
    if not isinstance(metadata, dict) or not all(isinstance(k, str) for k in metadata):
        raise InvalidInputError("metadata must be a JSON object (a dict with string keys)")
