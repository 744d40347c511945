"""OpenAI Agents SDK session items (``session.get_items()``: Responses API input items).

The mapping is the one ``ChatLedgerSession`` reads and writes
(``chatledger.adapters.frameworks.openai_agents_items``), not a second one:

- **import**: each item becomes the message ``message_for`` makes (the item
  kept exactly in its metadata), except a bare ``function_call_output`` for
  a call imported before and not answered yet, which answers that call (a
  tool output, as the session records it). Nothing is dropped.
- **export**: ``session_entries``: items the session (or an import) stored
  come back exactly, in the order they were added; messages written
  otherwise are given as the converter's ``openai-responses`` items, and
  what those cannot carry is named in the report (reasoning without an
  OpenAI item id, data parts, files the model made, approvals, calls still
  waiting, message metadata).
"""

from __future__ import annotations

from typing import Any

from chatledger.adapters.formats.carry import is_tool, note_losses, tool_state_loss
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
from chatledger.adapters.frameworks.openai_agents_items import (
    is_plain_output,
    item_of,
    json_copy,
    message_for,
    session_entries,
)

__all__ = ["OPENAI_AGENTS", "read_items", "write_items"]

NAME = "openai-agents"
_USER_FILES = ("image/", "application/pdf", "text/")


def read_items(value: Any) -> Imported:
    """Session items (a JSON array, or ``{"items": [...]}``) as messages and tool outputs."""
    items = [json_copy(item) for item in message_list(value, "an openai-agents file", "items")]
    steps: list[Step] = []
    waiting: set[str] = set()
    for item in items:
        if is_plain_output(item) and item["call_id"] in waiting:
            waiting.discard(item["call_id"])
            steps.append(ToolOutput(item["call_id"], item["output"]))
            continue
        message = message_for(item)
        steps.append(message)
        for part in message["parts"]:
            if part["type"] == "dynamic-tool":
                waiting.add(part["toolCallId"])
    report = LossReport(NAME, "import", sum(isinstance(step, dict) for step in steps))
    return Imported(steps, report)


def write_items(messages: list[Json], _major: int, history: History) -> Exported:
    """The conversation's session items, in the order they were added."""
    report = LossReport(NAME, "export", len(messages))
    note_losses(report, (m for m in messages if item_of(m) is None), _why)
    items = [entry.item for entry in session_entries(messages, None, history)]
    return Exported(items, report)


def _why(part: Json, role: str) -> str | None:
    kind = str(part.get("type"))
    if kind in ("text", "step-start", "steering-message"):
        return None
    if is_tool(part):
        return tool_state_loss(part)
    if kind == "reasoning":
        metadata = part.get("providerMetadata") or {}
        if isinstance(metadata.get("openai"), dict) and metadata["openai"].get("itemId"):
            return None
        return "items hold reasoning only as a stored OpenAI reasoning item (no itemId here)"
    if kind == "file":
        media = str(part.get("mediaType", ""))
        if role == "user" and media.startswith(_USER_FILES):
            return None
        return "items have no place for this file (a note stands in for it)"
    return "items have no such content"


OPENAI_AGENTS = Format(
    NAME, "OpenAI Agents SDK session items (Responses API input items), a JSON array",
    read_items, write_items,
)  # fmt: skip
