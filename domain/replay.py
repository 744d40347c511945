"""Which tool chunks are replays of calls the conversation already knows (docs/behaviour.md §3.2)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from chatledger.domain.errors import InvalidChunkError
from chatledger.domain.tool_parts import is_terminal

__all__ = ["approval_response_is_replay", "is_replay"]


def is_replay(chunk: Mapping[str, Any], existing: Mapping[str, Any]) -> bool:
    """True when ``chunk`` re-sends what ``existing`` (same toolCallId) already holds.

    Replays are recorded but change nothing: a provider re-sending an earlier
    call in a continuation must never move its part backwards.
    """
    kind = chunk["type"]
    state = existing.get("state")
    if kind == "tool-input-start":
        return True
    if kind in ("tool-input-delta", "tool-input-available"):
        return state != "input-streaming"
    if kind == "tool-input-error":
        return is_terminal(existing)
    if kind == "tool-approval-request":
        if state == "approval-responded" or is_terminal(existing):
            return True
        approval = existing.get("approval")
        return (
            state == "approval-requested"
            and isinstance(approval, Mapping)
            and approval.get("id") == chunk["approvalId"]
        )
    if kind == "tool-output-denied":
        if state == "approval-responded":
            # An approved call cannot be denied after the fact; a denied one (imported
            # from a client) may take its denial: never leave a denial pending (§4.2).
            approval = existing.get("approval")
            return not (isinstance(approval, Mapping) and approval.get("approved") is False)
        return is_terminal(existing)
    if kind in ("tool-output-available", "tool-output-error"):
        return is_terminal(existing)
    return False


def approval_response_is_replay(
    chunk: Mapping[str, Any], part: Mapping[str, Any], position: int
) -> bool:
    """Whether a v7 ``tool-approval-response`` re-sends the answer ``part`` already has.

    The first answer for a call wins: the same answer again, or an answer for a
    call that already has an output (preliminary too), changes nothing (the SDK
    would move the part back to ``approval-responded``). A contrary answer to an
    answered call is refused (recorded, not applied).
    """
    state = part.get("state")
    if state in ("approval-requested", "input-streaming", "input-available"):
        return False  # not answered yet: the response applies
    approval = part.get("approval")
    previous = approval.get("approved") if isinstance(approval, Mapping) else None
    if previous is None and state == "output-denied":
        previous = False
    if previous is None or previous == chunk["approved"]:
        return True
    raise InvalidChunkError(
        f"approval {chunk['approvalId']!r} of tool call {part.get('toolCallId')!r} was already "
        f"answered ({'approved' if previous else 'denied'}); the first answer stands",
        chunk_type="tool-approval-response",
        tool_call_id=part.get("toolCallId"),
    ).at(position)
