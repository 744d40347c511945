"""When the model should continue a turn after tool answers (docs/behaviour.md §4.3), and the turn's status (§4.4)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from chatledger.domain.conversation import ConversationState
from chatledger.domain.owners import OWNER_CLAIM_LIMIT_SECONDS, is_overdue, may_claim, owner_of
from chatledger.domain.tool_parts import current_step_start, is_terminal, is_tool_part, tool_name

__all__ = [
    "ConversationStatus",
    "WaitingCall",
    "awaiting_approval",
    "batch_is_answered",
    "claimable",
    "last_step_tool_parts",
    "last_user_index",
    "latest_assistant",
    "message_to_continue",
    "status_of",
]


def latest_assistant(messages: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The last assistant message of a conversation's messages, or None: the turn everything waits on."""
    for message in reversed(messages):
        if message["role"] == "assistant":
            found: dict[str, Any] = message
            return found
    return None


def last_user_index(state: ConversationState) -> int:
    """Index of the latest user message (-1 when there is none)."""
    for index in range(len(state.messages) - 1, -1, -1):
        if state.messages[index]["role"] == "user":
            return index
    return -1


def awaiting_approval(state: ConversationState) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Every tool call awaiting approval, as (assistant message, tool part), oldest first.

    A call awaits approval while it is ``approval-requested`` in an assistant
    message after the latest user message (docs/behaviour.md §4.4): when one
    assistant message follows another with no user message between them, the
    older one's requests still wait. A new user message leaves earlier requests
    behind where the dialect says so (AI SDK 7: the converters give them an
    "interrupted" result); where it does not (AI SDK 6), the latest assistant
    message before it still waits when no assistant message follows it.
    """
    turn = _assistant_turn(state)
    return [
        (message, part)
        for message in turn
        for part in message["parts"]
        if is_tool_part(part) and part.get("state") == "approval-requested"
    ]


def _assistant_turn(state: ConversationState) -> list[dict[str, Any]]:
    """The assistant messages after the latest user message, oldest first (see ``awaiting_approval``)."""
    turn: list[dict[str, Any]] = []
    for message in reversed(state.messages):
        if message["role"] == "user":
            break
        if message["role"] == "assistant":
            turn.insert(0, message)
    if not turn and not state.dialect.supersedes_approvals:
        latest = latest_assistant(state.messages)
        return [latest] if latest is not None else []
    return turn


def last_step_tool_parts(state: ConversationState) -> list[dict[str, Any]]:
    """The tool parts of the last step of the latest assistant message (the current tool batch)."""
    message = latest_assistant(state.messages)
    if message is None:
        return []
    parts = message["parts"]
    return [part for part in parts[current_step_start(parts) :] if is_tool_part(part)]


def batch_is_answered(state: ConversationState) -> bool:
    """Every call of the current tool batch is approval-responded or terminal (and there is one)."""
    batch = last_step_tool_parts(state)
    return bool(batch) and all(
        part.get("state") == "approval-responded" or is_terminal(part) for part in batch
    )


def message_to_continue(state: ConversationState) -> str | None:
    """The message a continuation would continue now, or None.

    That is the latest assistant message once its whole tool batch is
    answered, unless a continuation is pending or the message is halted.
    """
    if state.continuation is not None or not batch_is_answered(state):
        return None
    answer = latest_assistant(state.messages)
    assert answer is not None  # a batch to answer lives in an assistant message
    if answer["id"] == state.halted_message:
        return None
    message_id: str = answer["id"]
    return message_id


def claimable(
    state: ConversationState,
    request_id: str,
    *,
    worker: str,
    now: datetime,
    owner: str | None = None,
) -> bool:
    """Whether ``worker`` (a worker of ``owner``) may claim the pending request.

    Only a worker of the request's owner may (``owners.may_claim``), and only
    while no other worker's lease on it runs past ``now``.
    """
    pending = state.continuation
    if pending is None or pending["requestId"] != request_id:
        return False
    if not may_claim(pending.get("owner") or owner_of(state), owner):
        return False
    lease = pending.get("leaseUntil")
    return (
        lease is None or datetime.fromisoformat(lease) <= now or pending.get("claimedBy") == worker
    )


@dataclass(frozen=True)
class WaitingCall:
    """A tool call the turn is waiting on."""

    tool_call_id: str
    """The call."""
    tool_name: str
    """The tool."""
    state: str
    """``approval-requested`` or ``input-available``."""
    input: Any
    """The call's input."""
    approval_id: str | None = None
    """The approval to answer, if it awaits one."""


@dataclass(frozen=True)
class ConversationStatus:
    """Where a conversation's turn stands (docs/behaviour.md §4.4)."""

    status: str
    """``idle``, ``streaming``, ``awaiting-approval``, ``awaiting-tool-output`` or ``ready-to-continue``."""
    last_outcome: str | None = None
    """How the last stream ended (``finished``, ``aborted``, ``errored``, ``interrupted``)."""
    last_reason: str | None = None
    """Why, when known."""
    waiting_for: list[WaitingCall] = field(default_factory=list)
    """The tool calls the turn waits on."""
    continuation_request: str | None = None
    """The id of a pending continuation request."""
    stream_id: str | None = None
    """The open stream, when streaming (close a crashed one with ``close_stream``)."""
    owner: str = "any"
    """Who continues the conversation (``chatledger.domain.owners``)."""
    continuation_requested_at: str | None = None
    """When the pending continuation request was made (ISO 8601, UTC): its age shows who is late."""
    overdue: bool = False
    """The pending request has waited past the owner's claim limit with no live claim."""

    def to_json(self) -> dict[str, Any]:
        """The status as JSON (camelCase), as the HTTP API and ``chatledger status --json`` show it."""
        return {
            "status": self.status,
            "lastOutcome": self.last_outcome,
            "lastReason": self.last_reason,
            "waitingFor": [
                {
                    "toolCallId": call.tool_call_id,
                    "toolName": call.tool_name,
                    "state": call.state,
                    "input": call.input,
                    "approvalId": call.approval_id,
                }
                for call in self.waiting_for
            ],
            "continuationRequest": self.continuation_request,
            "streamId": self.stream_id,
            "owner": self.owner,
            "continuationRequestedAt": self.continuation_requested_at,
            "overdue": self.overdue,
        }


def status_of(
    state: ConversationState,
    now: datetime | None = None,
    claim_limit_seconds: float = OWNER_CLAIM_LIMIT_SECONDS,
) -> ConversationStatus:
    """Derive the status from the state; with ``now``, whether its pending request is overdue."""
    outcome = state.last_outcome or {}
    common: dict[str, Any] = {
        "last_outcome": outcome.get("outcome"),
        "last_reason": outcome.get("reason"),
        "owner": owner_of(state),
    }
    request = state.continuation.get("requestId") if state.continuation else None
    if state.continuation is not None:
        common["continuation_requested_at"] = state.continuation.get("requestedAt")
        common["overdue"] = now is not None and _overdue(
            state.continuation, now, claim_limit_seconds
        )
    if state.stream is not None:
        return ConversationStatus(
            "streaming", continuation_request=request, stream_id=state.stream.stream_id, **common
        )
    awaiting = [part for _, part in awaiting_approval(state)]
    if awaiting:
        return ConversationStatus("awaiting-approval", waiting_for=_waiting(awaiting), **common)
    message = latest_assistant(state.messages)
    parts = [p for p in (message or {"parts": []})["parts"] if is_tool_part(p)]
    pending = [
        p for p in parts if p.get("state") == "input-available" and not p.get("providerExecuted")
    ]
    if pending:
        return ConversationStatus("awaiting-tool-output", waiting_for=_waiting(pending), **common)
    if request is not None or (batch_is_answered(state) and _unfinished(state)):
        return ConversationStatus("ready-to-continue", continuation_request=request, **common)
    return ConversationStatus("idle", **common)


def _overdue(continuation: dict[str, Any], now: datetime, limit_seconds: float) -> bool:
    lease = continuation.get("leaseUntil")
    return is_overdue(
        datetime.fromisoformat(continuation["requestedAt"]),
        now,
        limit_seconds,
        datetime.fromisoformat(lease) if lease else None,
    )


def _unfinished(state: ConversationState) -> bool:
    """The answered batch still needs the model: answers came after the last stream, or an approved call never ran."""
    return state.answered_since_stream or any(
        part.get("state") == "approval-responded" for part in last_step_tool_parts(state)
    )


def _waiting(parts: list[dict[str, Any]]) -> list[WaitingCall]:
    return [
        WaitingCall(
            part["toolCallId"],
            tool_name(part),
            part["state"],
            part.get("input"),
            (part.get("approval") or {}).get("id"),
        )
        for part in parts
    ]
