"""OpenAI Agents session items as chatledger UIMessages, and back, in the order they were added.

The mapping ``ChatLedgerSession`` (``openai_agents.py``) writes and reads.
Pure functions over JSON items (and audit entries, when given); no store
access and no import of the SDK.

The mapping, one added item at a time (items are Responses API input items):

- a ``message`` item (``type: "message"`` or a bare ``{"role", "content"}``)
  → one appended UIMessage of that role (``developer`` → ``system``): string
  content, ``input_text``, ``output_text`` and ``refusal`` content → ``text``
  parts, any other content → a ``data-openai-content`` part;
- ``function_call`` → one assistant UIMessage with a ``dynamic-tool`` part
  (``toolName``, ``toolCallId`` = ``call_id``, ``input`` = the parsed
  ``arguments``, state ``input-available``);
- ``function_call_output`` (exactly ``type``, ``call_id`` and ``output``) for
  a call awaiting its result → ``store.add_tool_output`` on that part
  (``output-available``, the session's actor, no auto-continuation: the
  Runner drives the turn), so the audit shows who answered the call;
- anything else (reasoning, other tool calls, an output nothing awaits, ...)
  → an assistant UIMessage holding the item in a ``data-openai-item`` part.

**Exactness.** Each appended message keeps the original item, JSON-copied,
in its metadata (``{"openaiItem": item}``), and ``get_items`` returns those
items, so the Runner gets back exactly what it stored. An output item is
rebuilt from its tool part (``{"type": "function_call_output", "call_id",
"output"}``, which is all such an item holds) and placed where it was added,
by the log position of its ``tool-output-added`` event; a part answered
otherwise (denied, or an error, through the store) gives its reason or error
text as the output (placed at the denial or error), unless a later message
holds an output item for the call. Messages written by other means
(streams, ``append_message``) are given as the converter's
``openai-responses`` items.
"""

from __future__ import annotations

import copy
import json
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from chatledger.domain.convert import to_model_messages
from chatledger.domain.errors import InvalidInputError
from chatledger.domain.timeline import TimelineEntry

__all__ = [
    "ITEM_METADATA_KEY",
    "Entry",
    "Item",
    "foreign_items",
    "is_plain_output",
    "item_of",
    "json_copy",
    "message_for",
    "output_item",
    "session_entries",
    "tail_to_cut",
]

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
    """Whether the item is a bare ``function_call_output`` (``type``, ``call_id``, ``output``)."""
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
    if kind == "message" and isinstance(item.get("role"), str) and item["role"] in _ROLES:
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
    """A copy of the item a message keeps in its metadata, or None for a message not written so."""
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


# -- the session's items in order ---------------------------------------------------

_ORDER_KINDS = ["message-appended", "tool-output-added", "approval-responded"]


@dataclass(frozen=True)
class Entry:
    """One item of the session and where it lives in the current view."""

    item: Item
    message_index: int
    """Index, in the current messages, of the message holding the item (or its call)."""
    position: int
    """Log position of the event that added it (ordering key)."""


def session_entries(
    messages: list[dict[str, Any]],
    upto: int | None,
    read_history: Callable[[list[str]], Iterable[TimelineEntry]],
) -> list[Entry]:
    """The session's items in the order they were added (``upto``: the log version read).

    ``read_history(kinds)`` gives the chat's audit entries of those kinds; it
    is read only when an output item has to be placed by its log position.
    """
    held = [item_of(message) for message in messages]
    kept_outputs: dict[str, int] = {}  # call id -> last message holding an output item for it
    for index, item in enumerate(held):
        if item is not None and item.get("type") == "function_call_output":
            kept_outputs[str(item.get("call_id"))] = index
    found: list[tuple[int, Item, str | None]] = []  # message index, item, answered call
    for index, (message, item) in enumerate(zip(messages, held, strict=True)):
        if item is None:
            for converted in foreign_items(message):
                found.append((index, converted, None))
            continue
        found.append((index, item, None))
        output = output_item(message, item)
        if output is None:
            continue
        given, by_output = output
        # A result the session gave always stays; a denial's or an error's text stands
        # for the Runner's output only until the Runner's own output item follows.
        if by_output or kept_outputs.get(item["call_id"], -1) <= index:
            found.append((index, given, item["call_id"]))
    positions = None
    if any(c for _, _, c in found):
        positions = _positions(messages, upto, read_history(_ORDER_KINDS))
    entries: list[Entry] = []
    for index, item, call_id in found:
        position = 0
        if positions is not None:
            appended, outputs = positions
            position = appended[index]
            if call_id is not None:
                later = (p for p in outputs.get(call_id, []) if p > position)
                position = next(later, position)
        entries.append(Entry(item, index, position))
    entries.sort(key=lambda entry: entry.position)  # stable: view order among equals
    return entries


def _positions(
    messages: list[dict[str, Any]], upto: int | None, history: Iterable[TimelineEntry]
) -> tuple[list[int], dict[str, list[int]]]:
    """Log positions: each message's append (or its predecessor's), each call's answers.

    A call is answered by a tool output or a denial (an approval gives no output).
    """
    appended_at: dict[str, int] = {}
    outputs: dict[str, list[int]] = {}
    for entry in history:
        if upto is not None and entry.position > upto:
            break
        if entry.kind == "message-appended":
            appended_at[entry.details["messageId"]] = entry.position
        elif entry.kind == "tool-output-added" or entry.details.get("approved") is False:
            outputs.setdefault(entry.details["toolCallId"], []).append(entry.position)
    appended: list[int] = []
    for message in messages:
        appended.append(appended_at.get(message["id"], appended[-1] if appended else 0))
    return appended, outputs


def tail_to_cut(entries: list[Entry], start: int = -1) -> tuple[int, int]:
    """(first item to remove, first message to cut) so that removing ``entries[start:]`` is exact.

    Cutting a message removes it and every later message with all their
    items; the items removed that are not wanted gone are appended again.
    """
    cut_at = entries[start].message_index
    while True:
        first = next(i for i, entry in enumerate(entries) if entry.message_index >= cut_at)
        lowest = min(entry.message_index for entry in entries[first:])
        if lowest == cut_at:
            return first, cut_at
        cut_at = lowest
