"""LangChain (and LangGraph state) messages: ``messages_to_dict`` JSON, or ``BaseMessage`` objects.

- **import**: each message becomes a UIMessage keeping its exact
  ``messages_to_dict`` form in its metadata (``langchainMessage``):
  ``human`` → ``user``, ``system`` → ``system``, ``ai`` → ``assistant``
  (text content and ``text`` blocks → ``text``, ``reasoning`` blocks →
  ``reasoning``, ``tool_calls`` → ``dynamic-tool`` calls, other blocks and
  ``invalid_tool_calls`` → ``data-langchain-content``). A ``tool`` message
  answers its call (a tool output; ``status="error"`` an error); when it
  holds more than ``content``, ``tool_call_id`` and ``status`` (an ``id``,
  a ``name``, an ``artifact``, kwargs), it is also kept as a message of its
  own holding it, so it comes back exactly. Other message types are kept
  the same way. Nothing is dropped.
- **export**: messages holding a LangChain message come back exactly, in
  order, each call's plain ``ToolMessage`` right after its ``AIMessage``
  (in call order); other messages are built (``HumanMessage``,
  ``SystemMessage``, ``AIMessage`` with ``tool_calls`` and reasoning
  blocks, a ``ToolMessage`` per result); what has no LangChain form is
  named in the report. ``messages_from_dict(value)`` gives the objects.
"""

from __future__ import annotations

import copy
import json
import uuid
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    messages_from_dict,
    messages_to_dict,
)

from chatledger.adapters.formats.carry import is_tool, model_steps, note_losses, tool_state_loss
from chatledger.adapters.formats.format import (
    Exported,
    Format,
    History,
    Imported,
    Json,
    Step,
    ToolOutput,
    message_list,
)
from chatledger.adapters.formats.losses import LossReport
from chatledger.domain.errors import InvalidInputError

__all__ = ["LANGCHAIN", "METADATA_KEY", "read_messages", "write_messages"]

NAME = "langchain"
METADATA_KEY = "langchainMessage"
"""The message metadata key holding the LangChain message (``messages_to_dict`` form)."""

_ROLES = {"human": "user", "system": "system", "ai": "assistant"}
_OTHER = "data-langchain-content"


def read_messages(value: Any) -> Imported:
    """LangChain messages (``messages_to_dict`` JSON or ``BaseMessage`` objects) as chatledger steps."""
    raw = value if isinstance(value, list) else message_list(value, "a langchain file")
    dicts = _dicts(raw)
    steps: list[Step] = []
    waiting: set[str] = set()
    for held in dicts:
        data, kind = held["data"], held["type"]
        if kind == "tool" and data.get("tool_call_id") in waiting:
            waiting.discard(data["tool_call_id"])
            steps.append(_answer(data))
            if _plain_tool(data):
                continue
        message = _message(held)
        waiting |= {p["toolCallId"] for p in message["parts"] if p["type"] == "dynamic-tool"}
        steps.append(message)
    report = LossReport(NAME, "import", sum(isinstance(step, dict) for step in steps))
    return Imported(steps, report)


def _dicts(raw: list[Any]) -> list[Json]:
    objects: list[BaseMessage] = []
    for index, item in enumerate(raw):
        if isinstance(item, BaseMessage):
            objects.append(item)
            continue
        try:
            objects += messages_from_dict([item])
        except (KeyError, TypeError, ValueError) as error:
            raise InvalidInputError(
                f"langchain message {index} is not in messages_to_dict form "
                f'({{"type": ..., "data": {{...}}}}): {error}'
            ) from None
    dumped: list[Json] = json.loads(json.dumps(messages_to_dict(objects), default=str))
    return dumped


def _plain_tool(data: Json) -> bool:
    """Whether a tool message holds nothing but its content, call id and status (rebuilt exactly)."""
    rebuilt = _tool_dict(data.get("content"), data["tool_call_id"], data.get("status", "success"))
    return bool(rebuilt["data"] == data)


def _answer(data: Json) -> ToolOutput:
    content = data.get("content")
    if data.get("status") == "error":
        return ToolOutput(data["tool_call_id"], error_text=str(content))
    return ToolOutput(data["tool_call_id"], content)


def _message(held: Json) -> Json:
    data, kind = held["data"], held["type"]
    role = _ROLES.get(kind, "assistant")
    parts = _content_parts(data.get("content"), role)
    for call in data.get("tool_calls") or []:
        parts.append({"type": "dynamic-tool", "toolName": call["name"], "toolCallId": call["id"],
                      "state": "input-available", "input": call.get("args") or {}})  # fmt: skip
    for bad in data.get("invalid_tool_calls") or []:
        parts.append({"type": _OTHER, "data": bad})
    if kind not in _ROLES or not parts:
        parts.append({"type": _OTHER, "data": {"message": copy.deepcopy(held)}})
    message_id = data.get("id") if isinstance(data.get("id"), str) else None
    return {"id": f"lc_{message_id or uuid.uuid4().hex}", "role": role,
            "metadata": {METADATA_KEY: held}, "parts": parts}  # fmt: skip


def _content_parts(content: Any, role: str) -> list[Json]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    parts: list[Json] = []
    for block in content or []:
        if isinstance(block, str):
            parts.append({"type": "text", "text": block})
        elif (
            isinstance(block, dict)
            and block.get("type") == "text"
            and isinstance(block.get("text"), str)
        ):
            parts.append({"type": "text", "text": block["text"]})
        elif isinstance(block, dict) and block.get("type") == "reasoning" and role == "assistant":
            parts.append({"type": "reasoning", "text": str(block.get("reasoning", ""))})
        else:
            parts.append({"type": _OTHER, "data": block})
    return parts


# -- export ---------------------------------------------------------------------------------


def write_messages(messages: list[Json], _major: int, _history: History) -> Exported:
    """The conversation as ``messages_to_dict`` JSON (exact for messages LangChain gave).

    The results of an ``AIMessage``'s calls follow it in call order: those
    kept as messages of their own where they are, the plain ones rebuilt
    from the calls' parts.
    """
    report = LossReport(NAME, "export", len(messages))
    carried = {
        held["data"].get("tool_call_id")
        for message in messages
        if (held := _held(message)) is not None and held["type"] == "tool"
    }
    out: list[Json] = []
    foreign: list[Json] = []
    pending: list[Json] = []  # the last AIMessage's tool parts whose results are not out yet

    def flush(upto: str | None = None) -> None:
        while pending:
            part = pending.pop(0)
            if part["toolCallId"] == upto:
                return
            if part["toolCallId"] not in carried:
                result = _result(part, named=False)
                if result is not None:
                    out.append(result)

    for message in messages:
        held = _held(message)
        if held is None:
            flush()
            foreign.append(message)
            out += _built(message)
            continue
        call_id = held["data"].get("tool_call_id") if held["type"] == "tool" else None
        if call_id is not None and any(p["toolCallId"] == call_id for p in pending):
            flush(upto=call_id)
        else:
            flush()
        out.append(held)
        pending += [p for p in message["parts"] if p["type"] == "dynamic-tool"]
    flush()
    note_losses(report, foreign, _why)
    return Exported(out, report)


def _held(message: Json) -> Json | None:
    metadata = message.get("metadata")
    held = metadata.get(METADATA_KEY) if isinstance(metadata, dict) else None
    return copy.deepcopy(held) if isinstance(held, dict) else None


def _built(message: Json) -> list[Json]:
    role = message["role"]
    texts = [p["text"] for p in message["parts"] if p.get("type") == "text"]
    if role != "assistant":
        cls = HumanMessage if role == "user" else SystemMessage
        return _to_dicts([cls(content="\n".join(texts))])
    built: list[Json] = []
    for step in model_steps(message["parts"]):
        built += _reply(step)
    return built


def _reply(step: list[Json]) -> list[Json]:
    """One model reply: an ``AIMessage`` and the ``ToolMessage``s answering its calls."""
    texts = [p["text"] for p in step if p.get("type") == "text"]
    blocks: list[Any] = []
    calls: list[Json] = []
    results: list[Json] = []
    for part in step:
        if part.get("type") == "text":
            blocks.append({"type": "text", "text": part["text"]})
        elif part.get("type") == "reasoning":
            blocks.append({"type": "reasoning", "reasoning": part["text"]})
        elif is_tool(part) and not part.get("providerExecuted"):
            name = part.get("toolName") or str(part["type"]).removeprefix("tool-")
            args = (
                part.get("input")
                if isinstance(part.get("input"), dict)
                else {"input": part.get("input")}
            )
            calls.append(
                {"name": name, "args": args, "id": part["toolCallId"], "type": "tool_call"}
            )
            result = _result(part, named=True)
            if result is not None:
                results.append(result)
    content: Any = texts[0] if len(blocks) == 1 and len(texts) == 1 else blocks
    return [*_to_dicts([AIMessage(content=content or "", tool_calls=calls)]), *results]


def _result(part: Json, *, named: bool) -> Json | None:
    state = part.get("state")
    name = (part.get("toolName") or str(part["type"]).removeprefix("tool-")) if named else None
    if state == "output-available":
        return _tool_dict(part.get("output"), part["toolCallId"], "success", name)
    if state == "output-error":
        return _tool_dict(part.get("errorText"), part["toolCallId"], "error", name)
    if state == "output-denied":
        approval = part.get("approval") or {}
        reason = approval.get("reason") if isinstance(approval, dict) else None
        return _tool_dict(reason or "The tool call was denied.", part["toolCallId"], "error", name)
    return None


def _tool_dict(content: Any, call_id: str, status: str, name: str | None = None) -> Json:
    text = content if isinstance(content, str | list) else json.dumps(content)
    return _to_dicts([ToolMessage(content=text, tool_call_id=call_id, status=status, name=name)])[0]


def _to_dicts(built: list[BaseMessage]) -> list[Json]:
    dumped: list[Json] = json.loads(json.dumps(messages_to_dict(built), default=str))
    return dumped


def _why(part: Json, role: str) -> str | None:
    kind = str(part.get("type"))
    if kind in ("text", "step-start"):
        return None
    if kind == "reasoning" and role == "assistant":
        return None
    if is_tool(part) and role == "assistant":
        return tool_state_loss(part)
    return f"LangChain messages have no place for a {kind} part in a {role} message"


LANGCHAIN = Format(NAME, "LangChain / LangGraph messages (messages_to_dict JSON)",
                   read_messages, write_messages)  # fmt: skip
