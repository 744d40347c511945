"""Pydantic AI entries and records as chatledger UIMessages, and back.

The mapping that ``ChatLedgerConversationStore`` (``pydantic_ai.py``) writes and
reads. Pure functions over Pydantic AI's types; no store access. The current
view of a chat is the conversation's history, head last, then one record marker:

- each entry → one appended UIMessage whose id is the entry id; its metadata
  ``{"pydanticAi": {"entryId", "parentId", "kind", "message"}}`` keeps the
  exact ``ModelMessagesTypeAdapter`` JSON of the message, which is what is
  given back (so ``load`` returns messages equal to those saved);
- a ``ModelRequest`` → a ``user`` message (``system`` when it only holds system
  prompts): text user prompts and system prompts → ``text`` parts, anything
  else (tool returns, retry prompts, files) → ``data-pydantic-ai-part`` parts;
- a ``ModelResponse`` → an ``assistant`` message: ``TextPart`` → ``text``,
  ``ThinkingPart`` → ``reasoning``, ``ToolCallPart`` → a ``dynamic-tool`` part
  (``input-available``; ``approval-requested`` when the record being written
  lists the call in ``deferred_tool_requests.approvals``, so
  ``store.status(chat)`` says ``awaiting-approval`` and
  ``store.pending_approvals()`` lists it), anything else →
  ``data-pydantic-ai-part``;
- a ``ToolReturnPart`` answers its call's part (``ChatLedgerConversationStore``
  records it, with the store's ``actor``):
  ``outcome="denied"`` → ``respond_to_approval(approved=False, reason=content)``
  (``output-denied``; an ``output-error`` carrying the message when the call
  was not awaiting approval), ``"success"`` → ``add_tool_output`` (after an
  approval when the call awaited one), other outcomes, and a tool's
  ``RetryPromptPart`` (``ModelRetry``), → an ``output-error``; no
  continuation is queued (Pydantic AI drives its runs);
- the record → a ``system`` message with a ``data-pydantic-ai-record`` part,
  the record's JSON in its metadata (``{"pydanticAi": {"record": ...}}``).
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from pydantic import TypeAdapter
from pydantic_ai.conversation_store import ConversationEntry, ConversationRecord
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from chatledger.domain.owners import PYDANTIC_AI_RECORD_PART

__all__ = [
    "METADATA_KEY",
    "OTHER_PART",
    "RECORD_PART",
    "Json",
    "branch_tips",
    "delete_marker",
    "entry_json",
    "entry_message",
    "entry_of",
    "record_in",
    "record_message",
    "recorded_decisions",
    "tool_states",
    "tool_text",
]

METADATA_KEY = "pydanticAi"
"""The message metadata key holding an entry (or a record) as Pydantic AI stored it."""

RECORD_PART = PYDANTIC_AI_RECORD_PART
OTHER_PART = "data-pydantic-ai-part"

_RECORDS: TypeAdapter[ConversationRecord] = TypeAdapter(ConversationRecord)

Json = dict[str, Any]


def delete_marker() -> Json:
    """A message to cut when a delete finds the view already empty (a cut needs a message)."""
    return {
        "id": f"pai_deleted_{uuid.uuid4().hex}",
        "role": "system",
        "parts": [{"type": RECORD_PART, "data": {"deleted": True}}],
    }


def _message_json(message: ModelMessage) -> Json:
    dumped: Json = ModelMessagesTypeAdapter.dump_python([message], mode="json")[0]
    return dumped


def entry_message(entry: ConversationEntry, awaiting: set[str]) -> Json:
    """The UIMessage recording one entry (its exact JSON in the metadata)."""
    message = entry.message
    parts: list[Json] = []
    role = "user"
    if isinstance(message, ModelRequest):
        if message.parts and all(isinstance(p, SystemPromptPart) for p in message.parts):
            role = "system"
        for part in message.parts:
            text = _prompt_text(part, role)
            parts.append({"type": "text", "text": text} if text is not None else _other_part(part))
    elif isinstance(message, ModelResponse):
        role = "assistant"
        for response_part in message.parts:
            if isinstance(response_part, TextPart):
                parts.append({"type": "text", "text": response_part.content})
            elif isinstance(response_part, ThinkingPart):
                parts.append({"type": "reasoning", "text": response_part.content})
            elif isinstance(response_part, ToolCallPart):
                parts.append(_tool_part(response_part, awaiting))
            else:
                parts.append(_other_part(response_part))
    if not parts:
        parts.append({"type": OTHER_PART, "data": {"empty": True}})
    return {
        "id": entry.id,
        "role": role,
        "metadata": {
            METADATA_KEY: {
                "entryId": entry.id,
                "parentId": entry.parent_id,
                "kind": entry.kind,
                "message": _message_json(message),
            }
        },
        "parts": parts,
    }


def _prompt_text(part: Any, role: str) -> str | None:
    """The text of a text user prompt (or of a system prompt in a system message), else None."""
    if isinstance(part, UserPromptPart) and isinstance(part.content, str):
        return part.content
    if isinstance(part, SystemPromptPart) and role == "system":
        return part.content
    return None


def _tool_part(call: ToolCallPart, awaiting: set[str]) -> Json:
    part: Json = {
        "type": "dynamic-tool",
        "toolName": call.tool_name,
        "toolCallId": call.tool_call_id,
        "state": "input-available",
        "input": _arguments(call),
    }
    if call.tool_call_id in awaiting:
        part["state"] = "approval-requested"
        part["approval"] = {"id": f"approval_{call.tool_call_id}"}
    return part


def _arguments(call: ToolCallPart) -> Any:
    """A call's input: its arguments as an object, or the text when it is not JSON."""
    if isinstance(call.args, str):
        try:
            return json.loads(call.args)
        except ValueError:
            return call.args
    return json.loads(json.dumps(call.args or {}, default=str))


def _other_part(part: Any) -> Json:
    data = TypeAdapter(type(part)).dump_python(part, mode="json")
    return {"type": OTHER_PART, "data": data}


def tool_text(part: ToolReturnPart | RetryPromptPart) -> str:
    """What the model is told: a return's text content, or the retry prompt."""
    if isinstance(part, RetryPromptPart):
        return part.model_response()
    content = part.content
    return content if isinstance(content, str) else part.model_response_str()


def record_message(record: ConversationRecord) -> Json:
    """The record marker message: the record's JSON in its metadata, a summary in its part."""
    data = _RECORDS.dump_python(record, mode="json")
    summary = {
        "revision": record.revision,
        "headId": record.head_id,
        "awaitingApproval": [
            call.tool_call_id
            for call in (
                record.deferred_tool_requests.approvals if record.deferred_tool_requests else []
            )
        ],
    }
    return {
        "id": f"pai_record_{record.revision}",
        "role": "system",
        "metadata": {METADATA_KEY: {"record": data}},
        "parts": [{"type": RECORD_PART, "data": summary}],
    }


def _meta(message: Json) -> Json | None:
    metadata = message.get("metadata")
    held = metadata.get(METADATA_KEY) if isinstance(metadata, dict) else None
    return held if isinstance(held, dict) else None


def entry_json(message: Json) -> Json | None:
    """The entry JSON a message keeps in its metadata, or None for a message that holds no entry."""
    held = _meta(message)
    return held if held is not None and "message" in held else None


def entry_of(message: Json) -> ConversationEntry | None:
    """The entry a message records, rebuilt from its exact JSON (None when it records none)."""
    held = entry_json(message)
    if held is None:
        return None
    model_message = ModelMessagesTypeAdapter.validate_python([held["message"]])[0]
    return ConversationEntry(
        id=held["entryId"], parent_id=held["parentId"], message=model_message, kind=held["kind"]
    )


def record_in(messages: list[Json]) -> ConversationRecord | None:
    """The last record marker of the view."""
    for message in reversed(messages):
        held = _meta(message)
        if held is not None and "record" in held:
            return _RECORDS.validate_python(held["record"])
    return None


def branch_tips(messages: list[Json]) -> list[str]:
    """The heads of the branches the view's current record left behind."""
    record = record_in(messages)
    return list(record.branches) if record is not None else []


def tool_states(messages: list[Json]) -> dict[str, str]:
    """Each tool call's part state in the view, by call id."""
    states: dict[str, str] = {}
    for message in messages:
        for part in message["parts"]:
            if part.get("type") == "dynamic-tool":
                states[part["toolCallId"]] = part.get("state", "")
    return states


def recorded_decisions(
    messages: list[Json], calls: list[str]
) -> dict[str, tuple[bool, str | None]]:
    """The human decisions recorded on ``calls`` in the view: call id -> (approved, reason).

    An approval leaves its part ``approval-responded`` (or with the output of
    a run that already went on), a denial ``output-denied``; a call not
    answered yet is left out.
    """
    found: dict[str, tuple[bool, str | None]] = {}
    for message in messages:
        for part in message["parts"]:
            approval = part.get("approval")
            if part.get("type") != "dynamic-tool" or part.get("toolCallId") not in calls:
                continue
            if isinstance(approval, dict) and isinstance(approval.get("approved"), bool):
                found[part["toolCallId"]] = (approval["approved"], approval.get("reason"))
    return found
