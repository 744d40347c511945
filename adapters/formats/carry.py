"""What a format without chatledger's parts drops from a UIMessage: one rule per format, one walk.

A format module gives ``why(part, role)``: None when the format carries the
part, else why it cannot. ``note_losses`` walks a message's parts (and its
metadata, which no foreign format carries) and records each loss. Tool
state a format has no words for (an approval, a call still waiting) is
named by ``tool_state_loss``, shared by every format that carries calls
and results only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from chatledger.adapters.formats.format import Json
from chatledger.adapters.formats.losses import LossReport

__all__ = ["BOOKKEEPING_KEYS", "Why", "is_tool", "note_losses", "tool_state_loss"]

Why = Callable[[Json, str], "str | None"]
"""(part, message role) -> None when the format carries the part, else why it does not."""

BOOKKEEPING_KEYS = frozenset({"openaiItem", "openaiRunState", "pydanticAi", "langchainMessage"})
"""Metadata the framework mappings keep for themselves (not the conversation's own metadata)."""


def is_tool(part: Json) -> bool:
    """Whether the part is a tool call (``tool-NAME`` or ``dynamic-tool``)."""
    kind = str(part.get("type", ""))
    return kind == "dynamic-tool" or kind.startswith("tool-")


def tool_state_loss(part: Json) -> str | None:
    """Why a calls-and-results format loses some of this tool part's state (None: it loses none)."""
    state = part.get("state")
    if part.get("providerExecuted"):
        return "a provider-executed call is given only as a description"
    if state in ("input-streaming", "input-available", "approval-requested"):
        return f"the call has no result yet ({state}); the format has no waiting call"
    if state == "output-denied":
        return "a denial becomes a plain result carrying its reason (no approval in the format)"
    approval = part.get("approval")
    if isinstance(approval, dict):
        return "the approval (who decided, and how) has no place in the format"
    return None


def note_losses(
    report: LossReport,
    messages: Iterable[Json],
    why: Why,
    keeps: frozenset[str] | set[str] = frozenset(),
) -> None:
    """Record in ``report`` every part of ``messages`` the format drops, and their own metadata.

    ``keeps``: metadata keys the format carries.
    """
    for message in messages:
        role = str(message.get("role"))
        message_id = str(message.get("id"))
        for index, part in enumerate(message.get("parts", [])):
            reason = why(part, role)
            if reason is not None:
                what = "tool state" if is_tool(part) else str(part.get("type"))
                report.add(what, reason, message_id, index)
        metadata: Any = message.get("metadata")
        if isinstance(metadata, dict) and set(metadata) - BOOKKEEPING_KEYS - set(keeps):
            report.add("metadata", "the format has no message metadata", message_id)


def model_steps(parts: list[Json]) -> list[list[Json]]:
    """An assistant message's parts cut into model calls: a step ends where content follows its tool calls.

    (A UIMessage holds a whole turn; formats without steps hold one model
    reply per message, its calls' results after it, then the next reply.)
    """
    steps: list[list[Json]] = [[]]
    for part in parts:
        if part.get("type") == "step-start":
            if steps[-1]:
                steps.append([])
            continue
        if not is_tool(part) and any(is_tool(p) for p in steps[-1]):
            steps.append([])
        steps[-1].append(part)
    return [step for step in steps if step]
