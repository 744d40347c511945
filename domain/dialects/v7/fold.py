"""How AI SDK 7 folds the chunks it adds or changes (``processUIMessageStream`` of ``ai@7``).

The v7 dialect overlays AI SDK 6's handler table with these; everything not
here folds as in v6.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Final

from chatledger.domain.dialects.v6 import fold as v6
from chatledger.domain.dialects.v6 import fold_tools as v6_tools
from chatledger.domain.errors import InvalidChunkError
from chatledger.domain.fold import FoldHandler, StreamFold
from chatledger.domain.tool_parts import current_step_start, part_for_approval

__all__ = ["HANDLERS"]


def _text_end(fold: StreamFold, chunk: Mapping[str, Any]) -> None:
    index = fold.active_text.get(chunk["id"])
    v6.text_end(fold, chunk)
    if index is not None and chunk.get("citations") is not None:
        fold.parts[index]["citations"] = chunk["citations"]


def _custom(fold: StreamFold, chunk: Mapping[str, Any]) -> None:
    part: dict[str, Any] = {"type": "custom", "kind": chunk["kind"]}
    if chunk.get("providerMetadata") is not None:
        part["providerMetadata"] = chunk["providerMetadata"]
    fold.parts.append(part)


def _reasoning_file(fold: StreamFold, chunk: Mapping[str, Any]) -> None:
    part = {"type": "reasoning-file", "mediaType": chunk["mediaType"], "url": chunk["url"]}
    if chunk.get("providerMetadata") is not None:
        part["providerMetadata"] = chunk["providerMetadata"]
    fold.parts.append(part)


def _steering_message(fold: StreamFold, chunk: Mapping[str, Any]) -> None:
    fold.parts.append({"type": "steering-message", "id": chunk["id"], "parts": chunk["parts"]})


def _finish_step(fold: StreamFold, chunk: Mapping[str, Any]) -> None:
    """v7 keeps open text and reasoning parts open across ``finish-step``."""


def _reset_step(fold: StreamFold, chunk: Mapping[str, Any]) -> None:
    """Retract the current step's parts (a retried step); the ``step-start`` part stays."""
    fold.active_text = {}
    fold.active_reasoning = {}
    fold.partial_tool_calls = {}
    parts = fold.parts
    first = current_step_start(parts)
    fold.retracted = parts[first:]
    del parts[first:]


def _tool_approval_request(fold: StreamFold, chunk: Mapping[str, Any]) -> None:
    v6_tools.tool_approval_request(fold, chunk)
    approval = fold.find_tool_invocation(chunk)["approval"]
    if chunk.get("reason") is not None:
        approval["requestReason"] = chunk["reason"]
    if chunk.get("isAutomatic") is True:
        approval["isAutomatic"] = True


def _tool_approval_response(fold: StreamFold, chunk: Mapping[str, Any]) -> None:
    part = part_for_approval(fold.parts, chunk["approvalId"])
    if part is None:
        raise InvalidChunkError(
            f"no tool call in this message has approval {chunk['approvalId']!r} "
            "(send its tool-approval-request first)",
            chunk_type="tool-approval-response",
        )
    part["state"] = "approval-responded"
    approval = {**part["approval"], "id": chunk["approvalId"], "approved": chunk["approved"]}
    if chunk.get("reason") is not None:
        approval["reason"] = chunk["reason"]
    part["approval"] = approval
    if chunk.get("providerExecuted") is not None:
        part["providerExecuted"] = chunk["providerExecuted"]
    if chunk.get("providerMetadata") is not None:
        part["callProviderMetadata"] = chunk["providerMetadata"]


def _tool_input_error(fold: StreamFold, chunk: Mapping[str, Any]) -> None:
    """v7 keeps the invalid input of a static call in ``input`` (v6: in ``rawInput``)."""
    v6_tools.tool_input_error(fold, chunk)
    part = fold.find_tool_invocation(chunk)
    if part["type"] != "dynamic-tool":
        part.pop("rawInput", None)
        part["input"] = chunk["input"]


HANDLERS: Final[Mapping[str, FoldHandler]] = MappingProxyType(
    {
        **v6.HANDLERS,
        "text-end": _text_end,
        "custom": _custom,
        "reasoning-file": _reasoning_file,
        "steering-message": _steering_message,
        "finish-step": _finish_step,
        "reset-step": _reset_step,
        "tool-approval-request": _tool_approval_request,
        "tool-approval-response": _tool_approval_response,
        "tool-input-error": _tool_input_error,
    }
)
"""Chunk type -> its handler, for every fixed chunk type of AI SDK 7 (v6's, overlaid)."""
