"""Stored UIMessages as LangChain messages: the history a LangGraph agent is given for a new turn.

``to_langchain_messages`` is what ``LangGraphResponder`` hands a graph as its
``messages`` input: the conversation as every view shows it, in LangChain's
message types. A user message becomes a ``HumanMessage`` (its text parts,
joined), a system message a ``SystemMessage``; an assistant message becomes,
per step (``step-start`` parts divide them), an ``AIMessage`` with the step's
text and tool calls, followed by one ``ToolMessage`` per settled call: its
output (text as is, anything else as JSON), its error (``status="error"``), or
its denial ("denied", with the human's reason). A call with no result yet is
left out with its step's text kept: a model is never shown a tool call without
its answer, which chat model APIs refuse.

Parts LangChain messages have no place for (files, sources, data parts,
reasoning) are not given to the model.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

try:
    from langchain_core.messages import (
        AIMessage,
        BaseMessage,
        HumanMessage,
        SystemMessage,
        ToolMessage,
    )
except ImportError as error:  # the framework is an optional dependency
    raise ImportError(
        "chatledger.adapters.responders.langgraph needs LangGraph, which is not installed: "
        "pip install 'chatledger[langgraph]'"
    ) from error

from chatledger.domain.tool_parts import is_tool_part, tool_name

__all__ = ["denial_text", "output_text", "to_langchain_messages"]

SETTLED = frozenset({"output-available", "output-error", "output-denied"})
"""Tool part states that carry a result the model can be shown."""


def to_langchain_messages(messages: Iterable[Mapping[str, Any]]) -> list[BaseMessage]:
    """The stored UIMessages ``messages`` as LangChain messages (see the module docstring)."""
    converted: list[BaseMessage] = []
    for message in messages:
        role = message.get("role")
        parts = [p for p in message.get("parts") or [] if isinstance(p, Mapping)]
        if role == "user":
            converted.append(HumanMessage(content=_text(parts), id=message.get("id")))
        elif role == "system":
            converted.append(SystemMessage(content=_text(parts), id=message.get("id")))
        elif role == "assistant":
            converted.extend(_assistant(parts))
    return converted


def _text(parts: Iterable[Mapping[str, Any]]) -> str:
    return "".join(str(p.get("text", "")) for p in parts if p.get("type") == "text")


def _assistant(parts: list[Mapping[str, Any]]) -> list[BaseMessage]:
    converted: list[BaseMessage] = []
    for step in _steps(parts):
        text = _text(step)
        settled = [p for p in step if is_tool_part(p) and p.get("state") in SETTLED]
        if not text and not settled:
            continue
        calls = [
            {"name": tool_name(p), "args": _arguments(p.get("input")), "id": str(p["toolCallId"])}
            for p in settled
        ]
        converted.append(AIMessage(content=text, tool_calls=calls))
        converted.extend(_result(p) for p in settled)
    return converted


def _steps(parts: list[Mapping[str, Any]]) -> list[list[Mapping[str, Any]]]:
    """The message's parts divided at each ``step-start``."""
    steps: list[list[Mapping[str, Any]]] = [[]]
    for part in parts:
        if part.get("type") == "step-start" and steps[-1]:
            steps.append([])
        elif part.get("type") != "step-start":
            steps[-1].append(part)
    return steps


def _arguments(value: Any) -> dict[str, Any]:
    """A call's input as LangChain tool call ``args`` (a dict; anything else under ``input``)."""
    return dict(value) if isinstance(value, Mapping) else {"input": value}


def _result(part: Mapping[str, Any]) -> ToolMessage:
    call_id, name = str(part["toolCallId"]), tool_name(part)
    state = part.get("state")
    if state == "output-error":
        text = str(part.get("errorText") or "the tool failed")
        return ToolMessage(content=text, tool_call_id=call_id, name=name, status="error")
    if state == "output-denied":
        approval = part.get("approval")
        reason = approval.get("reason") if isinstance(approval, Mapping) else None
        return ToolMessage(content=denial_text(reason), tool_call_id=call_id, name=name)
    return ToolMessage(content=output_text(part.get("output")), tool_call_id=call_id, name=name)


def output_text(output: Any) -> str:
    """A tool output as a ``ToolMessage``'s content: text as is, anything else as JSON."""
    return output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)


def denial_text(reason: str | None) -> str:
    """What the model reads for a denied call: "denied", and the human's reason if there is one."""
    return (
        f"The user denied this tool call: {reason}" if reason else "The user denied this tool call."
    )
