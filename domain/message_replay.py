"""The chunks that rebuild a stored assistant message from nothing (AI SDK 7 ``resumeStreamIsReplay``).

An AI SDK 7 client resuming an answer (``DefaultChatTransport`` by default,
``WebSocketChatTransport`` always) expects a *complete replay*: at the first
``start`` of the resumed stream it empties the message and rebuilds it from
the chunks alone. A continuation's stream holds only what it adds to a
message earlier streams (and answers given between them) built, so a resume
of it is preceded by ``replay_chunks(message)``: the message as it stood when
the continuation opened, as chunks (``start`` naming it, then its parts).

The chunks are derived part by part, then checked: folded with the v7 fold
they must give exactly ``message``. Anything they cannot express (a text part
whose deltas a later chunk would still extend, a part kind the encoder does
not know) makes the result None, and the caller falls back to replaying only
the stream. Pure: no I/O.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from chatledger.domain.errors import ChatLedgerError
from chatledger.domain.tool_parts import is_tool_part
from chatledger.domain.whole_stream import fold_stream

__all__ = ["replay_chunks"]

Chunk = dict[str, Any]

_SIMPLE = {
    "file": ("mediaType", "url", "providerMetadata"),
    "reasoning-file": ("mediaType", "url", "providerMetadata"),
    "source-url": ("sourceId", "url", "title", "providerMetadata"),
    "source-document": ("sourceId", "mediaType", "title", "filename", "providerMetadata"),
    "custom": ("kind", "providerMetadata"),
    "steering-message": ("id", "parts"),
}
"""Parts that are one chunk of the same type with the same fields."""


def replay_chunks(message: Mapping[str, Any]) -> list[Chunk] | None:
    """Chunks that the AI SDK 7 fold turns into exactly ``message`` (an assistant UIMessage), or None."""
    start: Chunk = {"type": "start", "messageId": message["id"]}
    if message.get("metadata") is not None:
        start["messageMetadata"] = copy.deepcopy(message["metadata"])
    chunks = [start]
    for index, part in enumerate(message.get("parts", [])):
        encoded = _part(part, index)
        if encoded is None:
            return None
        chunks += encoded
    try:
        folded = fold_stream(copy.deepcopy(chunks), ai_sdk=7)
    except ChatLedgerError:
        return None
    return chunks if folded == dict(message) else None


def _part(part: Mapping[str, Any], index: int) -> list[Chunk] | None:
    kind = part.get("type")
    if not isinstance(kind, str):
        return None
    if kind == "step-start":
        return [{"type": "start-step"}]
    if kind in ("text", "reasoning"):
        return _streamed(part, kind, f"replay-{index}")
    if kind in _SIMPLE:
        return [{"type": kind, **_fields(part, _SIMPLE[kind])}]
    if kind.startswith("data-"):
        return [copy.deepcopy(dict(part))]
    if is_tool_part(dict(part)):
        return _tool(part)
    return None


def _streamed(part: Mapping[str, Any], kind: str, fallback_id: str) -> list[Chunk]:
    """A text or reasoning part: its start, its whole text as one delta, and its end when done."""
    part_id = part.get("id", fallback_id) if kind == "reasoning" else fallback_id
    begin: Chunk = {"type": f"{kind}-start", "id": part_id}
    if "providerMetadata" in part:
        begin["providerMetadata"] = copy.deepcopy(part["providerMetadata"])
    chunks = [begin]
    if part.get("text"):
        chunks.append({"type": f"{kind}-delta", "id": part_id, "delta": part["text"]})
    if part.get("state") == "done":
        end: Chunk = {"type": f"{kind}-end", "id": part_id}
        if "citations" in part:
            end["citations"] = copy.deepcopy(part["citations"])
        chunks.append(end)
    return chunks


def _tool(part: Mapping[str, Any]) -> list[Chunk] | None:
    """A tool call in any state: its input, then its approval and its result as stored."""
    call = part.get("toolCallId")
    dynamic = part["type"] == "dynamic-tool"
    name = part.get("toolName") if dynamic else part["type"].removeprefix("tool-")
    if not isinstance(call, str) or not isinstance(name, str):
        return None
    state = part.get("state")
    head: Chunk = {"toolCallId": call, "toolName": name, **({"dynamic": True} if dynamic else {})}
    for key in ("providerExecuted", "title", "toolMetadata"):
        if key in part:
            head[key] = copy.deepcopy(part[key])
    if "callProviderMetadata" in part:
        head["providerMetadata"] = copy.deepcopy(part["callProviderMetadata"])
    if state == "input-streaming":
        chunks: list[Chunk] = [{"type": "tool-input-start", **head}]
        if "inputEncoding" in part:
            chunks[0]["inputEncoding"] = part["inputEncoding"]
        if "rawInput" in part:
            chunks.append(
                {"type": "tool-input-delta", "toolCallId": call, "inputTextDelta": part["rawInput"]}
            )
        return chunks
    if state == "output-error" and "approval" not in part and "rawInput" in part:
        return None  # an input error as v6 stored it: not a v7 fold's result
    chunks = [{"type": "tool-input-available", **head, "input": copy.deepcopy(part.get("input"))}]
    chunks += _approval(part, call)
    if state == "output-denied":
        chunks.append({"type": "tool-output-denied", "toolCallId": call})
    elif state in ("output-available", "output-error"):
        result: Chunk = {"type": f"tool-{state}", "toolCallId": call}
        if state == "output-available":
            result["output"] = copy.deepcopy(part.get("output"))
            if "preliminary" in part:
                result["preliminary"] = part["preliminary"]
        else:
            result["errorText"] = part.get("errorText", "")
        if "resultProviderMetadata" in part:
            result["providerMetadata"] = copy.deepcopy(part["resultProviderMetadata"])
        if "providerExecuted" in part:
            result["providerExecuted"] = part["providerExecuted"]
        chunks.append(result)
    elif state not in ("input-available", "approval-requested", "approval-responded"):
        return None
    return chunks


def _approval(part: Mapping[str, Any], call: str) -> list[Chunk]:
    """The approval request, and its answer, a tool part holds (none: nothing)."""
    approval = part.get("approval")
    if not isinstance(approval, dict) or not isinstance(approval.get("id"), str):
        return []
    request: Chunk = {
        "type": "tool-approval-request",
        "toolCallId": call,
        "approvalId": approval["id"],
    }
    for key, field in (
        ("descriptor", "approvalDescriptor"),
        ("inputSchemaInput", "inputSchemaInput"),
        ("signature", "signature"),
        ("requestReason", "reason"),
        ("isAutomatic", "isAutomatic"),
    ):
        if key in approval:
            request[field] = copy.deepcopy(approval[key])
    chunks = [request]
    if "approved" in approval:
        answer: Chunk = {
            "type": "tool-approval-response",
            "approvalId": approval["id"],
            "approved": approval["approved"],
        }
        if approval.get("reason") is not None:
            answer["reason"] = approval["reason"]
        chunks.append(answer)
    return chunks


def _fields(part: Mapping[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    return {key: copy.deepcopy(part[key]) for key in keys if key in part}
