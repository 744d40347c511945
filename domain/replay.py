"""Which tool chunks are replays of calls the conversation already knows (docs/behaviour.md §3.2)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from chatledger.domain.tool_parts import is_terminal

__all__ = ["is_replay"]


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
