"""Deciding what a client's tool output means for a tool call (docs/behaviour.md §4.1, AI SDK ``addToolOutput``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from chatledger.domain.conversation import ConversationState
from chatledger.domain.errors import ToolCallNotReadyError, UnknownToolCallError
from chatledger.domain.limits import check_choice
from chatledger.domain.tool_parts import is_terminal

__all__ = [
    "DEFAULT_DENIAL_TEXT",
    "OUTPUT_STATES",
    "ToolOutputDecision",
    "decide_tool_output",
    "record_tool_output",
]

DEFAULT_DENIAL_TEXT = "Tool execution denied by user."
"""``errorText`` of an ``output-error`` given without one (a custom denial)."""

OUTPUT_STATES = ("output-available", "output-error")
_ACCEPTING = frozenset({"input-available", "approval-requested", "approval-responded"})


@dataclass(frozen=True)
class ToolOutputDecision:
    """The outcome of deciding a tool output."""

    tool_call_id: str
    """The tool call answered."""
    changed: bool
    """False when the part was already terminal (first write wins)."""
    state: str
    """The part's state after the output."""


def decide_tool_output(
    state: ConversationState, tool_call_id: str, output_state: str
) -> ToolOutputDecision:
    """Accept an output for a call that is ready for one; a terminal call keeps its first result."""
    check_choice("state", output_state, OUTPUT_STATES)
    part = state.tool_part(tool_call_id)
    if part is None:
        raise UnknownToolCallError(tool_call_id=tool_call_id)
    current = str(part.get("state"))
    if is_terminal(part):
        return ToolOutputDecision(tool_call_id, False, current)
    if current not in _ACCEPTING:
        raise ToolCallNotReadyError(tool_call_id, current)
    return ToolOutputDecision(tool_call_id, True, output_state)


def record_tool_output(
    state: ConversationState,
    tool_call_id: str,
    output_state: str,
    output: Any,
    error_text: str | None,
) -> None:
    """Write the output as the SDK's ``addToolOutput`` does, keeping input and other fields.

    An approval is kept only if it was granted (as AI SDK v7 does): v6 keeps an
    unanswered ``approval: {id}``, which its own ``validateUIMessages`` rejects.
    """
    part = state.tool_part(tool_call_id)
    assert part is not None
    approval = part.get("approval")
    if isinstance(approval, dict) and approval.get("approved") is not True:
        del part["approval"]
    part["state"] = output_state
    if output_state == "output-available":
        part["output"] = output
        part["preliminary"] = False
        part.pop("errorText", None)
    else:
        part["errorText"] = error_text if error_text is not None else DEFAULT_DENIAL_TEXT
        part.pop("output", None)
        part.pop("preliminary", None)
