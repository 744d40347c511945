"""Pydantic AI message history (``list[ModelMessage]``: ``result.all_messages()``).

The mapping is the one ``ChatLedgerConversationStore`` uses
(``chatledger.adapters.frameworks.pydantic_ai_mapping``):

- **import**: each message becomes the message ``entry_message`` makes (its
  exact JSON kept in the metadata; text, thinking and tool calls as parts),
  chained as entries; a ``ToolReturnPart`` answers its call (a tool output),
  a tool's ``RetryPromptPart`` or a return that did not succeed answers it
  with an error, as the store records them. Nothing is dropped.
- **export**: messages holding an entry come back exactly; others are built
  from their parts (``text`` → ``UserPromptPart`` / ``SystemPromptPart`` /
  ``TextPart``, ``reasoning`` → ``ThinkingPart``, a tool call →
  ``ToolCallPart`` with its result in the next ``ModelRequest`` as a
  ``ToolReturnPart``, ``outcome`` ``failed`` for an error, ``denied`` for a denial); what has no
  Pydantic AI form is named in the report. Pydantic AI's record markers are
  the store's bookkeeping, not messages, and are left out.

The value is JSON (``ModelMessagesTypeAdapter``'s form); reading also takes
``ModelMessage`` objects. ``ModelMessagesTypeAdapter.validate_python(value)``
turns an export into objects.
"""

from __future__ import annotations

import uuid
from typing import Any

from pydantic import ValidationError
from pydantic_ai.conversation_store import ConversationEntry
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelRequestPart,
    ModelResponse,
    ModelResponsePart,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
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
from chatledger.adapters.frameworks.pydantic_ai_mapping import (
    RECORD_PART,
    entry_json,
    entry_message,
    tool_text,
)
from chatledger.domain.errors import InvalidInputError

__all__ = ["PYDANTIC_AI", "read_model_messages", "write_model_messages"]

NAME = "pydantic-ai"


def read_model_messages(value: Any) -> Imported:
    """``ModelMessage``s (JSON or objects) as messages and the tool outputs they give."""
    raw = value if isinstance(value, list) else message_list(value, "a pydantic-ai file")
    try:
        history = ModelMessagesTypeAdapter.validate_python(raw)
    except ValidationError as error:
        raise InvalidInputError(f"not Pydantic AI messages: {error}"[:2000]) from None
    steps: list[Step] = []
    waiting: set[str] = set()
    parent: str | None = None
    for message in history:
        entry = ConversationEntry(id=f"pai_{uuid.uuid4().hex}", parent_id=parent, message=message)
        parent = entry.id
        if isinstance(message, ModelRequest):
            steps += _answers(message, waiting)
        ui = entry_message(entry, set())
        steps.append(ui)
        waiting |= {p["toolCallId"] for p in ui["parts"] if p["type"] == "dynamic-tool"}
    report = LossReport(NAME, "import", sum(isinstance(step, dict) for step in steps))
    return Imported(steps, report)


def _answers(request: ModelRequest, waiting: set[str]) -> list[Step]:
    outputs: list[Step] = []
    for part in request.parts:
        if not isinstance(part, ToolReturnPart | RetryPromptPart):
            continue
        if part.tool_call_id not in waiting or (
            isinstance(part, RetryPromptPart) and not part.tool_name
        ):
            continue
        waiting.discard(part.tool_call_id)
        if isinstance(part, ToolReturnPart) and part.outcome == "success":
            content = ModelMessagesTypeAdapter.dump_python(
                [ModelRequest(parts=[part])], mode="json"
            )[0]["parts"][0]["content"]
            outputs.append(ToolOutput(part.tool_call_id, content))
        else:
            outputs.append(ToolOutput(part.tool_call_id, error_text=tool_text(part)))
    return outputs


def write_model_messages(messages: list[Json], _major: int, _history: History) -> Exported:
    """The conversation as ``ModelMessage`` JSON (exact for messages Pydantic AI stored)."""
    report = LossReport(NAME, "export", len(messages))
    out: list[Any] = []
    foreign: list[Json] = []
    for message in messages:
        held = entry_json(message)
        if held is not None:
            out.append(held["message"])
            continue
        if any(part.get("type") == RECORD_PART for part in message["parts"]):
            continue
        foreign.append(message)
        out += _dump(_built(message))
    note_losses(report, foreign, _why)
    return Exported(out, report)


def _built(message: Json) -> list[ModelMessage]:
    role = message["role"]
    texts = [p["text"] for p in message["parts"] if p.get("type") == "text"]
    if role == "system":
        return [ModelRequest(parts=[SystemPromptPart(content=text) for text in texts])]
    if role == "user":
        return [ModelRequest(parts=[UserPromptPart(content=text) for text in texts])]
    built: list[ModelMessage] = []
    for step in model_steps(message["parts"]):
        built += _reply(step)
    return built


def _reply(step: list[Json]) -> list[ModelMessage]:
    """One model reply: a ``ModelResponse``, and a ``ModelRequest`` with its calls' results."""
    parts: list[ModelResponsePart] = []
    results: list[ModelRequestPart] = []
    for part in step:
        kind = part.get("type")
        if kind == "text":
            parts.append(TextPart(content=part["text"]))
        elif kind == "reasoning":
            parts.append(ThinkingPart(content=part["text"]))
        elif is_tool(part) and not part.get("providerExecuted"):
            name = part.get("toolName") or str(kind).removeprefix("tool-")
            call_id = part["toolCallId"]
            parts.append(ToolCallPart(tool_name=name, args=part.get("input"), tool_call_id=call_id))
            result = _result(part, name, call_id)
            if result is not None:
                results.append(result)
    built: list[ModelMessage] = [ModelResponse(parts=parts)]
    if results:
        built.append(ModelRequest(parts=results))
    return built


def _result(part: Json, name: str, call_id: str) -> ModelRequestPart | None:
    state = part.get("state")
    if state == "output-available":
        return ToolReturnPart(tool_name=name, content=part.get("output"), tool_call_id=call_id)
    if state == "output-error":
        return ToolReturnPart(
            tool_name=name, content=str(part.get("errorText")), tool_call_id=call_id,
            outcome="failed",
        )  # fmt: skip
    if state == "output-denied":
        approval = part.get("approval") or {}
        reason = approval.get("reason") if isinstance(approval, dict) else None
        return ToolReturnPart(
            tool_name=name, content=reason or "The tool call was denied.", tool_call_id=call_id,
            outcome="denied",
        )  # fmt: skip
    return None


def _dump(built: list[ModelMessage]) -> list[Any]:
    dumped: list[Any] = ModelMessagesTypeAdapter.dump_python(built, mode="json")
    return dumped


def _why(part: Json, role: str) -> str | None:
    kind = str(part.get("type"))
    if kind in ("text", "step-start"):
        return None
    if kind == "reasoning" and role == "assistant":
        return None
    if is_tool(part) and role == "assistant":
        if part.get("providerExecuted"):
            return "a provider-executed call has no Pydantic AI form here"
        loss = tool_state_loss(part)
        return None if loss and loss.startswith("a denial") else loss
    return f"Pydantic AI messages have no place for a {kind} part in a {role} message"


PYDANTIC_AI = Format(
    NAME, "Pydantic AI ModelMessages (ModelMessagesTypeAdapter JSON), a JSON array",
    read_model_messages, write_model_messages,
)  # fmt: skip
