"""Replaying a recorded conversation: what each turn did, which recorded call matches, where two runs diverge.

Pure: no I/O. A **turn** is one user message and everything the assistant
did until the next one (its streams, including the continuations after
approvals and tool outputs). ``turn_records`` reads the turns out of a
conversation's events (the recording, or a replay of it, the same way);
``CallBook`` says which recorded call a call of the new run matches (same
tool, exactly the same input, same turn, each recorded call used once):
only a matched call is served the recorded result or decision;
``divergences`` compares two runs turn by turn.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "KINDS",
    "CallBook",
    "Divergence",
    "RecordedCall",
    "TurnRecord",
    "divergences",
    "same_input",
    "turn_records",
]

KINDS = (
    "text",
    "tool-call",
    "tool-input",
    "approval",
    "finish-reason",
    "unmatched-tool-call",
    "unanswered-approval",
    "missing-turn",
)
"""Every kind of divergence, as the report names them."""


@dataclass
class RecordedCall:
    """A tool call of a turn, with what answered it."""

    tool_call_id: str
    tool_name: str
    input: Any
    approval_requested: bool = False
    decision: dict[str, Any] | None = None
    """The human's answer to its approval: ``{"approved", "reason", "actor"}``."""
    output: dict[str, Any] | None = None
    """Its result: ``{"state": "output-available", "output"}``, ``{"state": "output-error",
    "errorText"}`` or ``{"state": "output-denied"}``; ``by`` says who gave it (``model`` for the
    responder's own chunk, else the actor of a tool output added from outside)."""

    def to_json(self) -> dict[str, Any]:
        """The call as JSON (camelCase)."""
        return {
            "toolCallId": self.tool_call_id,
            "toolName": self.tool_name,
            "input": self.input,
            "approvalRequested": self.approval_requested,
            "decision": self.decision,
            "output": self.output,
        }


@dataclass
class TurnRecord:
    """What one turn held: its user message, the assistant's text, its tool calls, how it finished."""

    index: int
    """The turn's position, from 1."""
    user_message: dict[str, Any]
    user_actor: str = "system"
    before: list[tuple[dict[str, Any], str]] = field(default_factory=list)
    """Non-user messages appended just before the user message (system prompts), with their actor."""
    text: str = ""
    """The assistant's text, every step's text parts joined."""
    calls: list[RecordedCall] = field(default_factory=list)
    finish_reason: str | None = None
    """The ``finishReason`` of the turn's last ``finish`` chunk."""

    def call(self, tool_call_id: str) -> RecordedCall | None:
        """The turn's call ``tool_call_id``, if any."""
        return next((call for call in self.calls if call.tool_call_id == tool_call_id), None)

    def to_json(self) -> dict[str, Any]:
        """The turn as JSON (camelCase)."""
        return {
            "turn": self.index,
            "userMessageId": self.user_message.get("id"),
            "text": self.text,
            "toolCalls": [call.to_json() for call in self.calls],
            "finishReason": self.finish_reason,
        }


@dataclass(frozen=True)
class Divergence:
    """One place where the replay differs from the recording."""

    turn: int
    kind: str
    """One of ``KINDS``."""
    detail: str
    """What differs, in words."""
    recorded: Any = None
    replayed: Any = None

    def to_json(self) -> dict[str, Any]:
        """The divergence as JSON."""
        return {
            "turn": self.turn,
            "kind": self.kind,
            "detail": self.detail,
            "recorded": self.recorded,
            "replayed": self.replayed,
        }


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def same_input(a: Any, b: Any) -> bool:
    """Whether two tool inputs are the same JSON value (key order aside; ``1`` and ``1.0`` differ)."""
    return type(a) is type(b) and _canonical(a) == _canonical(b)


def _applied(event: Any) -> Iterable[dict[str, Any]]:
    """The chunks of a ``ChunksReceived`` batch that changed the conversation (not replays, refusals)."""
    skipped = event.skipped()
    for index, chunk in enumerate(event.chunks):
        if index not in skipped and isinstance(chunk, dict):
            yield chunk


def turn_records(events: Iterable[Any]) -> list[TurnRecord]:
    """The turns of a conversation, read from its events in log order.

    Messages appended before the first user message (and non-user messages
    between turns) ride with the next user message; a chunk's call is found
    by its ``toolCallId`` in the current turn.
    """
    turns: list[TurnRecord] = []
    waiting: list[tuple[dict[str, Any], str]] = []
    for event in events:
        kind = type(event).__name__
        if kind == "MessageAppended":
            message = event.message
            if message.get("role") == "user":
                turns.append(TurnRecord(len(turns) + 1, message, event.actor, waiting))
                waiting = []
            elif message.get("role") != "assistant":
                waiting.append((message, event.actor))
            continue
        if not turns:
            continue
        turn = turns[-1]
        if kind == "ChunksReceived":
            for chunk in _applied(event):
                _take_chunk(turn, chunk)
        elif kind == "ToolApprovalResponded" and not event.late:
            call = turn.call(event.tool_call_id)
            if call is not None:
                call.decision = {
                    "approved": event.approved,
                    "reason": event.reason,
                    "actor": event.actor,
                }
        elif kind == "ToolOutputAdded" and not event.late:
            call = turn.call(event.tool_call_id)
            if call is not None and call.output is None:
                call.output = _output(event.state, event.output, event.error_text, event.actor)
    return turns


def _output(state: str, output: Any, error_text: str | None, by: str) -> dict[str, Any]:
    if state == "output-available":
        return {"state": state, "output": output, "by": by}
    if state == "output-error":
        return {"state": state, "errorText": error_text, "by": by}
    return {"state": state, "by": by}


def _take_chunk(turn: TurnRecord, chunk: dict[str, Any]) -> None:
    kind = chunk.get("type")
    if kind == "text-delta":
        turn.text += str(chunk.get("delta", ""))
    elif kind == "finish":
        turn.finish_reason = chunk.get("finishReason")
    elif kind == "tool-input-available":
        if turn.call(str(chunk.get("toolCallId"))) is None:
            turn.calls.append(
                RecordedCall(
                    str(chunk["toolCallId"]), str(chunk.get("toolName")), chunk.get("input")
                )
            )
    elif kind == "tool-approval-request":
        call = turn.call(str(chunk.get("toolCallId")))
        if call is not None:
            call.approval_requested = True
    elif kind in ("tool-output-available", "tool-output-error", "tool-output-denied"):
        call = turn.call(str(chunk.get("toolCallId")))
        if call is not None and call.output is None:
            state = kind.removeprefix("tool-")
            call.output = _output(state, chunk.get("output"), chunk.get("errorText"), "model")


class CallBook:
    """Which recorded call each call of the new run matches: same turn, same tool, the same input exactly.

    A recorded call is matched at most once; a new call, once matched,
    keeps its match (its approval and its result come from the same
    recorded call). Nothing else is ever matched: a call with another
    input, another tool or in another turn gets nothing from the recording.
    """

    def __init__(self, recorded: list[TurnRecord]) -> None:
        self._turns = {turn.index: turn for turn in recorded}
        self._used: set[tuple[int, str]] = set()
        self._matched: dict[tuple[int, str], RecordedCall] = {}

    def match(
        self, turn: int, tool_call_id: str, tool_name: str, input: Any
    ) -> RecordedCall | None:
        """The recorded call that new call ``tool_call_id`` of ``turn`` matches, if one does."""
        key = (turn, tool_call_id)
        if key in self._matched:
            found = self._matched[key]
            return (
                found if found.tool_name == tool_name and same_input(found.input, input) else None
            )
        record = self._turns.get(turn)
        for call in record.calls if record is not None else ():
            if (turn, call.tool_call_id) in self._used:
                continue
            if call.tool_name == tool_name and same_input(call.input, input):
                self._used.add((turn, call.tool_call_id))
                self._matched[key] = call
                return call
        return None


def divergences(recorded: list[TurnRecord], replayed: list[TurnRecord]) -> list[Divergence]:
    """Where ``replayed`` differs from ``recorded``, turn by turn, in a stable order.

    Per turn: the text; each tool call by position (another tool:
    ``tool-call``; the same tool with another input: ``tool-input``); which
    calls asked for approval; the finish reason. A recorded turn the replay
    never reached is ``missing-turn``.
    """
    found: list[Divergence] = []
    by_index = {turn.index: turn for turn in replayed}
    for turn in recorded:
        new = by_index.get(turn.index)
        if new is None:
            found.append(
                Divergence(turn.index, "missing-turn", "the replay did not reach this turn")
            )
            continue
        found.extend(_turn_divergences(turn, new))
    return found


def _turn_divergences(old: TurnRecord, new: TurnRecord) -> list[Divergence]:
    found: list[Divergence] = []
    n = old.index
    if old.text != new.text:
        found.append(Divergence(n, "text", "the assistant's text differs", old.text, new.text))
    for position in range(max(len(old.calls), len(new.calls))):
        a = old.calls[position] if position < len(old.calls) else None
        b = new.calls[position] if position < len(new.calls) else None
        if a is not None and b is not None and a.tool_name == b.tool_name:
            if not same_input(a.input, b.input):
                found.append(
                    Divergence(
                        n, "tool-input", f"tool call {position + 1} ({a.tool_name}) has another input",
                        a.input, b.input,
                    )
                )  # fmt: skip
            continue
        found.append(
            Divergence(
                n, "tool-call", f"tool call {position + 1} differs",
                _call_name(a), _call_name(b),
            )
        )  # fmt: skip
    asked_old = [call.tool_name for call in old.calls if call.approval_requested]
    asked_new = [call.tool_name for call in new.calls if call.approval_requested]
    if asked_old != asked_new:
        found.append(
            Divergence(n, "approval", "other calls asked for approval", asked_old, asked_new)
        )
    if old.finish_reason != new.finish_reason:
        found.append(
            Divergence(
                n, "finish-reason", "the turn finished otherwise",
                old.finish_reason, new.finish_reason,
            )
        )  # fmt: skip
    return found


def _call_name(call: RecordedCall | None) -> dict[str, Any] | None:
    return None if call is None else {"toolName": call.tool_name, "input": call.input}
