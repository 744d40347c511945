"""Deciding what an approval answer means for a tool call (docs/behaviour.md §4.2)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from chatledger.domain.continuation import last_user_index
from chatledger.domain.conversation import ConversationState
from chatledger.domain.errors import (
    ApprovalConflictError,
    InvalidInputError,
    UnknownToolCallError,
)

__all__ = ["ApprovalDecision", "decide_approval", "is_superseded", "record_approval"]


@dataclass(frozen=True)
class ApprovalDecision:
    """The outcome of deciding an approval answer."""

    tool_call_id: str
    """The tool call answered."""
    approval_id: str
    """The approval answered."""
    changed: bool
    """False for a duplicate, or for a call no longer awaiting approval."""
    state: str
    """The part's state after the answer."""


def decide_approval(
    state: ConversationState, *, approval_id: str | None, tool_call_id: str | None, approved: bool
) -> ApprovalDecision:
    """Find the part and decide; raises on an unknown call or a conflicting second answer."""
    part = _find(state, approval_id, tool_call_id)
    call_id: str = part["toolCallId"]
    approval: dict[str, Any] = part.get("approval") or {}
    current = part.get("state")
    answered_id = str(approval.get("id", approval_id or call_id))
    if current == "approval-requested" and is_superseded(state, call_id):
        # A later user message left this request behind; answering it changes nothing.
        return ApprovalDecision(call_id, answered_id, False, str(current))
    if current == "approval-requested" or (current == "input-available" and not approval):
        new_state = "approval-responded" if approved else "output-denied"
        return ApprovalDecision(call_id, answered_id, True, new_state)
    previous = approval.get("approved")
    if isinstance(previous, bool) and previous != approved:
        raise ApprovalConflictError(call_id, answered_id, previous)
    return ApprovalDecision(call_id, answered_id, False, str(current))


def is_superseded(state: ConversationState, tool_call_id: str) -> bool:
    """Whether a later user message left the call's approval request behind (if the dialect says so)."""
    if not state.dialect.supersedes_approvals:
        return False
    where = state.tool_index.get(tool_call_id)
    return where is not None and where[0] < last_user_index(state)


def record_approval(
    state: ConversationState,
    tool_call_id: str,
    approval_id: str,
    approved: bool,
    reason: str | None,
) -> None:
    """Apply an answer: approved -> approval-responded; denied -> output-denied (never left pending)."""
    part = state.tool_part(tool_call_id)
    assert part is not None
    approval = {**(part.get("approval") or {}), "id": approval_id, "approved": approved}
    if reason is not None:
        approval["reason"] = reason
    part["approval"] = approval
    part["state"] = "approval-responded" if approved else "output-denied"


def _find(
    state: ConversationState, approval_id: str | None, tool_call_id: str | None
) -> dict[str, Any]:
    if tool_call_id is not None:
        part = state.tool_part(tool_call_id)
        if part is None:
            raise UnknownToolCallError(tool_call_id=tool_call_id)
        return part
    if approval_id is None:
        raise InvalidInputError("name the approval: give approval_id or tool_call_id")
    call_id = state.approval_calls.get(approval_id)
    part = state.tool_part(call_id) if call_id is not None else None
    if part is None:
        raise UnknownToolCallError(
            f"no tool call has approval {approval_id!r} in this conversation"
        )
    return part
