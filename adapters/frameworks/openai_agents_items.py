"""OpenAI Agents session items as chatledger UIMessages, and back.

The mapping ``ChatLedgerSession`` (``openai_agents.py``) writes and reads: each
item becomes one UIMessage keeping the item itself in its metadata; a
``function_call_output`` answers its call's part. Pure functions over JSON
items; no store access and no import of the SDK.
"""

from __future__ import annotations

import copy
import json
import uuid
from typing import Any

from chatledger.domain.convert import to_model_messages
from chatledger.domain.errors import InvalidInputError

Item = dict[str, Any]

ITEM_METADATA_KEY = "openaiItem"
"""The message metadata key holding the original item."""

_OUTPUT_KEYS = frozenset({"type", "call_id", "output"})
_TEXT_CONTENT = ("input_text", "output_text")
_ROLES = {"user": "user", "assistant": "assistant", "system": "system", "developer": "system"}
_DENIED_TEXT = "Tool call execution denied."


def json_copy(item: Any) -> Item:
    """A private JSON copy of an item (refuses what JSON cannot hold)."""
    try:
        copied = json.loads(json.dumps(item))
    except (TypeError, ValueError) as error:
        raise InvalidInputError(f"a session item must be JSON: {error}") from None
    if not isinstance(copied, dict):
        raise InvalidInputError(f"a session item must be a JSON object, not {type(item).__name__}")
    return copied


def is_plain_output(item: Item) -> bool:
    return (
        item.get("type") == "function_call_output"
        and set(item) == _OUTPUT_KEYS
        and isinstance(item["call_id"], str)
    )


def message_for(item: Item) -> dict[str, Any]:
    """The UIMessage recording one item (the item itself in its metadata)."""
    role = "assistant"
    parts: list[dict[str, Any]]
    kind = item.get("type", "message")
    if kind == "message" and item.get("role") in _ROLES:
        role = _ROLES[item["role"]]
        parts = _content_parts(item.get("content"))
    elif (
        kind == "function_call"
        and isinstance(item.get("call_id"), str)
        and isinstance(item.get("name"), str)
    ):
        parts = [
            {
                "type": "dynamic-tool",
                "toolName": item["name"],
                "toolCallId": item["call_id"],
                "state": "input-available",
                "input": _arguments(item.get("arguments")),
            }
        ]
    else:
        parts = []
    if not parts:
        parts = [{"type": "data-openai-item", "data": copy.deepcopy(item)}]
    return {
        "id": f"oai_{uuid.uuid4().hex}",
        "role": role,
        "metadata": {ITEM_METADATA_KEY: item},
        "parts": parts,
    }


def _content_parts(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if not isinstance(content, list):
        return []
    parts: list[dict[str, Any]] = []
    for block in content:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind in _TEXT_CONTENT and isinstance(block.get("text"), str):
            parts.append({"type": "text", "text": block["text"]})
        elif kind == "refusal" and isinstance(block.get("refusal"), str):
            parts.append({"type": "text", "text": block["refusal"]})
        else:
            parts.append({"type": "data-openai-content", "data": copy.deepcopy(block)})
    return parts


def _arguments(arguments: Any) -> Any:
    """A call's input: its JSON ``arguments`` parsed, or the text itself when it is not JSON."""
    if not isinstance(arguments, str):
        return arguments
    try:
        return json.loads(arguments)
    except ValueError:
        return arguments


def item_of(message: dict[str, Any]) -> Item | None:
    metadata = message.get("metadata")
    item = metadata.get(ITEM_METADATA_KEY) if isinstance(metadata, dict) else None
    return copy.deepcopy(item) if isinstance(item, dict) else None


def output_item(message: dict[str, Any], item: Item) -> tuple[Item, bool] | None:
    """The ``function_call_output`` item of a call message whose part has a result.

    With it, whether the part holds a result (``output-available``) rather
    than a denial's or an error's text.
    """
    if item.get("type") != "function_call":
        return None
    part = next((p for p in message["parts"] if p.get("type") == "dynamic-tool"), None)
    if part is None or part.get("toolCallId") != item.get("call_id"):
        return None
    state = part.get("state")
    if state == "output-available":
        output = copy.deepcopy(part.get("output"))
    elif state == "output-error":
        output = part.get("errorText")
    elif state == "output-denied":
        approval = part.get("approval")
        reason = approval.get("reason") if isinstance(approval, dict) else None
        output = reason or _DENIED_TEXT
    else:
        return None
    given = {"type": "function_call_output", "call_id": item["call_id"], "output": output}
    return given, state == "output-available"


def foreign_items(message: dict[str, Any]) -> list[Item]:
    """Items for a message this session did not write (the converter's Responses items)."""
    items: list[Item] = to_model_messages([message], "openai-responses", unanswered="omit")
    return items
