"""How AI SDK 6 folds the tool chunks: a call's input, approval and output onto its tool part.

The SDK's ``updateToolPart``/``updateDynamicToolPart`` write the current
step's part of a call, or append one; results and approvals find their call
in this step, this message, then earlier messages.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from chatledger.domain.errors import InvalidChunkError
from chatledger.domain.fold import StreamFold
from chatledger.domain.partial_json import MISSING as JSON_MISSING
from chatledger.domain.partial_json import parse_partial_json
from chatledger.domain.tool_parts import (
    MISSING,
    find_in_current_step,
    new_tool_part,
    static_tool_name,
    write_tool_part,
)

__all__ = [
    "tool_approval_request",
    "tool_input_available",
    "tool_input_delta",
    "tool_input_error",
    "tool_input_start",
    "tool_output",
    "tool_output_denied",
]

Chunk = Mapping[str, Any]


def _opt(chunk: Chunk, key: str) -> Any:
    return chunk.get(key, MISSING)


def _write(fold: StreamFold, tool_call_id: str, dynamic: bool, **write: Any) -> None:
    """The SDK's updateToolPart/updateDynamicToolPart: update in place or append."""
    index = find_in_current_step(fold.parts, tool_call_id, dynamic=dynamic)
    if index is not None:
        write_tool_part(fold.parts[index], dynamic=dynamic, **write)
    else:
        fold.parts.append(new_tool_part(tool_call_id, dynamic=dynamic, **write))


def tool_input_start(fold: StreamFold, chunk: Chunk) -> None:
    """A call starts streaming its input: ``input-streaming``."""
    entry: dict[str, Any] = {
        "text": "",
        "toolName": chunk["toolName"],
        "dynamic": bool(chunk.get("dynamic")),
    }
    for key in ("inputEncoding", "title", "toolMetadata"):
        if key in chunk:
            entry[key] = chunk[key]
    fold.partial_tool_calls[chunk["toolCallId"]] = entry
    _write(
        fold,
        chunk["toolCallId"],
        entry["dynamic"],
        state="input-streaming",
        tool_name=chunk["toolName"],
        input_encoding=_opt(chunk, "inputEncoding"),
        provider_executed=_opt(chunk, "providerExecuted"),
        title=_opt(chunk, "title"),
        tool_metadata=_opt(chunk, "toolMetadata"),
        provider_metadata=_opt(chunk, "providerMetadata"),
    )


def tool_input_delta(fold: StreamFold, chunk: Chunk) -> None:
    """More input text: the part's input is the partial JSON parsed so far."""
    entry = fold.partial_tool_calls.get(chunk["toolCallId"])
    if entry is None:
        raise InvalidChunkError(
            f"no tool call {chunk['toolCallId']!r} is streaming its input "
            "(send tool-input-start first)",
            chunk_type="tool-input-delta",
            tool_call_id=chunk["toolCallId"],
        )
    entry["text"] += chunk["inputTextDelta"]
    if entry.get("inputEncoding") == "text":
        partial: Any = entry["text"]
    else:
        partial = parse_partial_json(entry["text"], strict=fold.dialect.partial_json_strict)
        if partial is JSON_MISSING:
            partial = MISSING
    _write(
        fold,
        chunk["toolCallId"],
        entry["dynamic"],
        state="input-streaming",
        tool_name=entry["toolName"],
        input_encoding=entry.get("inputEncoding", MISSING),
        input=partial,
        raw_input=entry["text"],
        title=entry.get("title", MISSING),
        tool_metadata=entry.get("toolMetadata", MISSING),
    )


def tool_input_available(fold: StreamFold, chunk: Chunk) -> None:
    """The call's whole input: ``input-available``."""
    _write(
        fold,
        chunk["toolCallId"],
        bool(chunk.get("dynamic")),
        state="input-available",
        tool_name=chunk["toolName"],
        input=chunk["input"],
        provider_executed=_opt(chunk, "providerExecuted"),
        provider_metadata=_opt(chunk, "providerMetadata"),
        title=_opt(chunk, "title"),
        tool_metadata=_opt(chunk, "toolMetadata"),
    )


def tool_input_error(fold: StreamFold, chunk: Chunk) -> None:
    """A call whose input is invalid: its part ends ``output-error``."""
    index = find_in_current_step(fold.parts, chunk["toolCallId"], dynamic=None)
    # The existing part's kind wins; a new part follows the chunk's flag.
    existing = fold.parts[index] if index is not None else None
    dynamic = existing["type"] == "dynamic-tool" if existing else bool(chunk.get("dynamic"))
    # SDK quirk (b.4): a static part keeps the bad input in rawInput only.
    inputs = {"input": chunk["input"]} if dynamic else {"raw_input": chunk["input"]}
    _write(
        fold,
        chunk["toolCallId"],
        dynamic,
        state="output-error",
        tool_name=chunk["toolName"],
        error_text=chunk["errorText"],
        provider_executed=_opt(chunk, "providerExecuted"),
        provider_metadata=_opt(chunk, "providerMetadata"),
        tool_metadata=_opt(chunk, "toolMetadata"),
        **inputs,
    )


def tool_approval_request(fold: StreamFold, chunk: Chunk) -> None:
    """The call waits for a human's answer: ``approval-requested``."""
    part = fold.find_tool_invocation(chunk)
    part["state"] = "approval-requested"
    approval: dict[str, Any] = {"id": chunk["approvalId"]}
    if chunk.get("approvalDescriptor") is not None:
        approval["descriptor"] = chunk["approvalDescriptor"]
    if "inputSchemaInput" in chunk:
        approval["inputSchemaInput"] = chunk["inputSchemaInput"]
    if chunk.get("signature") is not None:
        approval["signature"] = chunk["signature"]
    part["approval"] = approval


def tool_output_denied(fold: StreamFold, chunk: Chunk) -> None:
    """The call was denied: ``output-denied``."""
    fold.find_tool_invocation(chunk)["state"] = "output-denied"


def tool_output(fold: StreamFold, chunk: Chunk) -> None:
    """The call's result or error (``tool-output-available``/``-error``), on its part wherever it is."""
    part = fold.find_tool_invocation(chunk)
    dynamic = part["type"] == "dynamic-tool"
    write: dict[str, Any] = {
        "tool_name": part["toolName"] if dynamic else static_tool_name(part),
        "input": part.get("input", MISSING),
        "provider_executed": _opt(chunk, "providerExecuted"),
        "provider_metadata": _opt(chunk, "providerMetadata"),
        "title": part.get("title", MISSING),
        "tool_metadata": chunk.get("toolMetadata", part.get("toolMetadata", MISSING)),
    }
    if chunk["type"] == "tool-output-available":
        write.update(
            state="output-available",
            output=chunk["output"],
            preliminary=_opt(chunk, "preliminary"),
        )
    else:
        write.update(state="output-error", error_text=chunk["errorText"])
        if not dynamic:
            write["raw_input"] = part.get("rawInput", MISSING)
    write_tool_part(part, dynamic=dynamic, **write)
