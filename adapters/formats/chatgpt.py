"""A ChatGPT data export (``conversations.json``): one conversation of it, in and out.

The export is a JSON array of conversations. The fields read, per conversation:
``title``, ``create_time``, ``current_node`` (the leaf of the branch the
user last saw) and ``mapping`` (node id → ``{"id", "parent", "children",
"message"}``); per message: ``id``, ``author.role`` (``user``,
``assistant``, ``system``, ``tool``), ``author.name`` (the tool's name),
``recipient`` (``all``, or the tool an assistant message calls),
``create_time``, ``metadata.model_slug``,
``metadata.is_visually_hidden_from_conversation`` and ``content``:
``content_type`` with ``parts`` (``text``, ``multimodal_text``: strings, and
asset pointers for images and files), ``text`` (``code``,
``execution_output``), ``thoughts`` (``thoughts[].summary`` / ``content``)
or ``user_profile`` / ``user_instructions`` (``user_editable_context``, the
user's custom instructions: a ``system`` message).

- **import** follows the active branch from the root to ``current_node``
  (branches left by edits and regenerations are counted in the report).
  Each message with content becomes a UIMessage with its id: text parts →
  ``text``, thoughts → ``reasoning``, an assistant message to a tool
  (``recipient`` ≠ ``all``) → a ``dynamic-tool`` call (``input``: its text,
  as JSON when it is JSON, else ``{"text": ...}``), a ``tool`` message → that
  call's result; creation time and model go to ``metadata.chatgpt``. Image
  and file pointers (the export holds no bytes), ``reasoning_recap`` notes
  and content types not listed above are named in the report.
- **export** writes one conversation whose ``mapping`` is a single branch:
  text, reasoning (``thoughts``), tool calls and results as above; what has
  no place (files, data parts, approvals, calls still waiting) is named.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from chatledger.adapters.formats.carry import is_tool, note_losses, tool_state_loss
from chatledger.adapters.formats.format import (
    Exported,
    Format,
    History,
    Imported,
    Json,
    Step,
    ToolOutput,
)
from chatledger.adapters.formats.losses import LossReport
from chatledger.domain.errors import InvalidInputError

__all__ = ["CHATGPT", "pick_conversation", "read_conversation", "write_conversation"]

NAME = "chatgpt"
_ROLES = {"user": "user", "assistant": "assistant", "system": "system"}


class _Shape(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)


class _Author(_Shape):
    role: str
    name: str | None = None


class _Content(_Shape):
    content_type: str
    parts: list[str | dict[str, Any]] | None = None
    text: str | None = None
    thoughts: list[dict[str, Any]] | None = None
    user_profile: str | None = None
    user_instructions: str | None = None


class _Message(_Shape):
    id: str
    author: _Author
    content: _Content
    recipient: str | None = None
    create_time: float | int | None = None
    metadata: dict[str, Any] | None = None


class _Node(_Shape):
    message: _Message | None = None
    parent: str | None = None


class _Conversation(_Shape):
    """The fields read (others are allowed and ignored): checked before anything is read."""

    mapping: dict[str, _Node]
    current_node: str
    title: str | None = None


def pick_conversation(value: Any, which: str | None) -> Json:
    """One conversation of an export: by id or title, or the only one (InvalidInputError otherwise)."""
    if isinstance(value, dict):
        return dict(value)
    if not isinstance(value, list) or not all(isinstance(c, dict) for c in value):
        raise InvalidInputError("conversations.json must be a JSON array of conversations")
    if which is None:
        if len(value) == 1:
            return dict(value[0])
        raise InvalidInputError(
            f"the export holds {len(value)} conversations: name one with --conversation ID "
            "(its id or title)"
        )
    for conversation in value:
        if which in (
            conversation.get("id"),
            conversation.get("conversation_id"),
            conversation.get("title"),
        ):
            return dict(conversation)
    raise InvalidInputError(f"no conversation with id or title {which!r} in the export")


def read_conversation(value: Any) -> Imported:
    """One conversation (or an export holding exactly one) as messages and tool results."""
    conversation = pick_conversation(value, None)
    try:
        _Conversation.model_validate(conversation)
    except ValidationError as error:
        raise InvalidInputError(f"not a ChatGPT conversation: {error}"[:2000]) from None
    mapping = conversation["mapping"]
    if conversation["current_node"] not in mapping:
        raise InvalidInputError(
            "a ChatGPT conversation needs a 'mapping' holding its 'current_node'"
        )
    path = _active_path(mapping, conversation["current_node"])
    report = LossReport(NAME, "import")
    off_path = sum(1 for node in mapping.values() if node.get("message")) - len(path)
    if off_path > 0:
        report.add("branches", f"{off_path} message(s) on branches other than the active one")
    steps: list[Step] = []
    open_calls: dict[str, str] = {}  # tool name -> call id awaiting its result
    for message in path:
        steps += _steps(message, open_calls, report)
    report.messages = sum(isinstance(step, dict) for step in steps)
    title = conversation.get("title") if isinstance(conversation.get("title"), str) else None
    return Imported(steps, report, title=title)


def _active_path(mapping: dict[str, Any], leaf: str) -> list[Json]:
    path: list[Json] = []
    seen: set[str] = set()
    node_id: Any = leaf
    while node_id is not None:
        if node_id in seen or node_id not in mapping:
            raise InvalidInputError(f"the mapping's parent chain breaks at node {node_id!r}")
        seen.add(node_id)
        node = mapping[node_id]
        if isinstance(node.get("message"), dict):
            path.append(node["message"])
        node_id = node.get("parent")
    path.reverse()
    return path


def _steps(message: Json, open_calls: dict[str, str], report: LossReport) -> list[Step]:
    author = message.get("author") or {}
    role = author.get("role")
    message_id = str(message.get("id") or uuid.uuid4())
    content = message.get("content") or {}
    kind = content.get("content_type")
    if role == "tool":
        name = str(author.get("name") or "tool")
        call_id = open_calls.pop(name, None)
        if call_id is not None:
            return [ToolOutput(call_id, _text_of(content, report, message_id))]
        role = "assistant"
    parts = _parts(content, report, message_id)
    if kind == "user_editable_context":  # the user's custom instructions
        role = "system"
    recipient = message.get("recipient")
    if role == "assistant" and recipient not in (None, "all") and parts:
        text = "\n".join(p["text"] for p in parts if p["type"] == "text")
        open_calls[str(recipient)] = message_id
        parts = [{"type": "dynamic-tool", "toolName": str(recipient), "toolCallId": message_id,
                  "state": "input-available", "input": _input(text)}]  # fmt: skip
    if not parts or role not in _ROLES:
        if role not in _ROLES and kind is not None:
            report.add(f"{role} message", "no such role in chatledger", message_id)
        return []
    out: Json = {"id": message_id, "role": _ROLES[str(role)], "parts": parts}
    meta = {k: v for k, v in (("createTime", message.get("create_time")),
            ("model", (message.get("metadata") or {}).get("model_slug"))) if v is not None}  # fmt: skip
    if meta:
        out["metadata"] = {"chatgpt": meta}
    return [out]


def _parts(content: Json, report: LossReport, message_id: str) -> list[Json]:
    kind = content.get("content_type")
    if kind in ("text", "multimodal_text"):
        parts: list[Json] = []
        for index, piece in enumerate(content.get("parts") or []):
            if isinstance(piece, str):
                if piece:
                    parts.append({"type": "text", "text": piece})
            else:
                what = piece.get("content_type", "part") if isinstance(piece, dict) else "part"
                report.add(str(what), "the export holds a pointer, not the file", message_id, index)
        return parts
    if kind in ("code", "execution_output"):
        return [{"type": "text", "text": str(content.get("text", ""))}]
    if kind == "thoughts":
        return [
            {"type": "reasoning", "text": "\n\n".join(str(t[k]) for k in ("summary", "content") if t.get(k))}
            for t in content.get("thoughts") or [] if isinstance(t, dict)
        ]  # fmt: skip
    if kind == "user_editable_context":
        texts = [content.get(k) for k in ("user_profile", "user_instructions")]
        return [{"type": "text", "text": t} for t in texts if isinstance(t, str) and t]
    if kind is not None:
        report.add(
            str(kind), "chatledger has no such content (a ChatGPT UI note or tool view)", message_id
        )
    return []


def _text_of(content: Json, report: LossReport, message_id: str) -> str:
    return "\n".join(p["text"] for p in _parts(content, report, message_id) if p["type"] == "text")


def _input(text: str) -> Any:
    try:
        value = json.loads(text)
    except ValueError:
        return {"text": text}
    return value if isinstance(value, dict) else {"text": text}


# -- export ---------------------------------------------------------------------------------


def write_conversation(messages: list[Json], _major: int, _history: History) -> Exported:
    """The conversation as a one-conversation ``conversations.json`` (an array)."""
    report = LossReport(NAME, "export", len(messages))
    note_losses(report, messages, _why, keeps={"chatgpt"})
    now = time.time()
    root = "client-created-root"
    mapping: dict[str, Json] = {root: {"id": root, "message": None, "parent": None, "children": []}}
    parent = root
    used = {root}
    for message in messages:
        for node in _nodes(message, now, used):
            mapping[parent]["children"].append(node["id"])
            mapping[node["id"]] = {
                "id": node["id"],
                "message": node,
                "parent": parent,
                "children": [],
            }
            parent = node["id"]
    conversation_id = str(uuid.uuid4())
    value = [{"title": "", "create_time": now, "update_time": now, "mapping": mapping,
              "current_node": parent, "id": conversation_id, "conversation_id": conversation_id}]  # fmt: skip
    return Exported(value, report)


def _nodes(message: Json, now: float, used: set[str]) -> list[Json]:
    """The message's nodes: a run of text parts is one node, of reasoning parts one; each call one."""
    meta = (message.get("metadata") or {}).get("chatgpt") or {}
    when, role = meta.get("createTime"), message["role"]
    nodes: list[Json] = []
    run: tuple[str, list[str]] | None = None  # ("text" | "reasoning", texts)

    def node(preferred: str | None, who: str, content: Json, **fields: Any) -> None:
        node_id = preferred if preferred and preferred not in used else str(uuid.uuid4())
        used.add(node_id)
        nodes.append(_node(node_id, who, when, content, **fields))

    def flush() -> None:
        nonlocal run
        if run is not None:
            kind, texts = run
            content = _text(texts) if kind == "text" else {
                "content_type": "thoughts",
                "thoughts": [{"summary": "", "content": text} for text in texts],
            }  # fmt: skip
            node(message["id"], role, content)
            run = None

    for part in message["parts"]:
        kind = part.get("type")
        if kind == "text" or (kind == "reasoning" and role == "assistant"):
            if run is None or run[0] != kind:
                flush()
                run = (str(kind), [])
            run[1].append(part["text"])
        elif is_tool(part) and role == "assistant":
            flush()
            name = part.get("toolName") or str(kind).removeprefix("tool-")
            node(
                part.get("toolCallId"), role, _text([json.dumps(part.get("input"))]), recipient=name
            )
            if part.get("state") in ("output-available", "output-error", "output-denied"):
                result = (
                    part.get("output")
                    if part["state"] == "output-available"
                    else part.get("errorText")
                )
                text = result if isinstance(result, str) else json.dumps(result)
                node(None, "tool", _text([text or ""]), name=name)
    flush()
    if meta.get("model"):
        for made in nodes:
            made["metadata"]["model_slug"] = meta["model"]
    return nodes


def _input_text(value: Any) -> str:
    """A call's input as the message text: the text itself for ``{"text": ...}`` (as read), else JSON."""
    if isinstance(value, dict) and set(value) == {"text"} and isinstance(value["text"], str):
        return value["text"]
    return json.dumps(value)


def _text(texts: list[str]) -> Json:
    return {"content_type": "text", "parts": list(texts)}


def _node(node_id: str, role: str, when: Any, content: Json, *, recipient: str = "all",
          name: str | None = None) -> Json:  # fmt: skip
    return {
        "id": node_id,
        "author": {"role": role, "name": name, "metadata": {}},
        "create_time": when,
        "content": content,
        "status": "finished_successfully",
        "recipient": recipient,
        "metadata": {},
    }


def _why(part: Json, role: str) -> str | None:
    kind = str(part.get("type"))
    if kind in ("text", "step-start") or (kind == "reasoning" and role == "assistant"):
        return None
    if is_tool(part) and role == "assistant":
        return tool_state_loss(part)
    return f"a ChatGPT export has no place for a {kind} part in a {role} message"


CHATGPT = Format(
    NAME, "a ChatGPT data export (conversations.json)", read_conversation, write_conversation
)
