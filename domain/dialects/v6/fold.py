"""How AI SDK 6 folds each chunk type (``processUIMessageStream`` of ``ai@6``): the handler table.

Each handler changes a ``StreamFold`` for one chunk; the tool chunks' are in
``fold_tools``. Later majors overlay this table with the handlers they add or
change.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Final

from chatledger.domain.dialects.v6.fold_tools import (
    tool_approval_request,
    tool_input_available,
    tool_input_delta,
    tool_input_error,
    tool_input_start,
    tool_output,
    tool_output_denied,
)
from chatledger.domain.errors import InvalidChunkError
from chatledger.domain.fold import FoldHandler, StreamFold
from chatledger.domain.metadata import MetadataMergeError, merge_metadata

__all__ = ["HANDLERS", "text_end"]

Chunk = Mapping[str, Any]

# -- text, reasoning, files, sources ----------------------------------------------------


def _text_start(fold: StreamFold, chunk: Chunk) -> None:
    _open(fold, chunk, {"type": "text", "text": ""}, fold.active_text)


def _reasoning_start(fold: StreamFold, chunk: Chunk) -> None:
    _open(fold, chunk, {"type": "reasoning", "id": chunk["id"], "text": ""}, fold.active_reasoning)


def _open(fold: StreamFold, chunk: Chunk, part: dict[str, Any], active: dict[str, int]) -> None:
    if "providerMetadata" in chunk:
        part["providerMetadata"] = chunk["providerMetadata"]
    part["state"] = "streaming"
    active[chunk["id"]] = len(fold.parts)
    fold.parts.append(part)


def _text_delta(fold: StreamFold, chunk: Chunk) -> None:
    _delta(_active_part(fold, chunk, fold.active_text, "text"), chunk)


def _reasoning_delta(fold: StreamFold, chunk: Chunk) -> None:
    _delta(_active_part(fold, chunk, fold.active_reasoning, "reasoning"), chunk)


def _delta(part: dict[str, Any], chunk: Chunk) -> None:
    part["text"] += chunk["delta"]
    if "providerMetadata" in chunk:
        part["providerMetadata"] = chunk["providerMetadata"]


def text_end(fold: StreamFold, chunk: Chunk) -> None:
    """Close an open text part."""
    _close(fold, chunk, fold.active_text, "text")


def _reasoning_end(fold: StreamFold, chunk: Chunk) -> None:
    _close(fold, chunk, fold.active_reasoning, "reasoning")


def _close(fold: StreamFold, chunk: Chunk, active: dict[str, int], what: str) -> None:
    part = _active_part(fold, chunk, active, what)
    part["state"] = "done"
    if "providerMetadata" in chunk:
        part["providerMetadata"] = chunk["providerMetadata"]
    del active[chunk["id"]]


def _active_part(
    fold: StreamFold, chunk: Chunk, active: dict[str, int], what: str
) -> dict[str, Any]:
    index = active.get(chunk["id"])
    if index is None:
        raise InvalidChunkError(
            f"no open {what} part with id {chunk['id']!r} "
            f"(send {what}-start first; finish-step closes open parts)",
            chunk_type=chunk["type"],
        )
    return fold.parts[index]


def _file(fold: StreamFold, chunk: Chunk) -> None:
    part = {"type": "file", "mediaType": chunk["mediaType"], "url": chunk["url"]}
    if "providerMetadata" in chunk:
        part["providerMetadata"] = chunk["providerMetadata"]
    fold.parts.append(part)


_SOURCE_KEYS: Final = {
    "source-url": ("sourceId", "url", "title", "providerMetadata"),
    "source-document": ("sourceId", "mediaType", "title", "filename", "providerMetadata"),
}


def _source(fold: StreamFold, chunk: Chunk) -> None:
    keys = _SOURCE_KEYS[chunk["type"]]
    fold.parts.append({"type": chunk["type"], **{k: chunk[k] for k in keys if k in chunk}})


# -- steps, start, finish, metadata -----------------------------------------------------


def _start_step(fold: StreamFold, chunk: Chunk) -> None:
    fold.parts.append({"type": "step-start"})


def _finish_step(fold: StreamFold, chunk: Chunk) -> None:
    fold.active_text = {}
    fold.active_reasoning = {}


def _start(fold: StreamFold, chunk: Chunk) -> None:
    new_id = chunk.get("messageId")
    message = fold.message
    if new_id is not None and new_id != message["id"] and not fold.continuation:
        if fold.parts or message.get("metadata") is not None:
            raise InvalidChunkError(
                f"start names message {new_id!r} but this stream already wrote "
                f"content into message {message['id']!r}",
                chunk_type="start",
            )
        message["id"] = new_id
    _merge_metadata(fold, chunk)


def _finish(fold: StreamFold, chunk: Chunk) -> None:
    if chunk.get("finishReason") is not None:
        fold.finish_reason = chunk["finishReason"]
    _merge_metadata(fold, chunk)


def _merge_metadata(fold: StreamFold, chunk: Chunk) -> None:
    update = chunk.get("messageMetadata")
    if update is None:
        return
    try:
        fold.message["metadata"] = merge_metadata(fold.message.get("metadata"), update)
    except MetadataMergeError as error:
        raise InvalidChunkError(str(error), chunk_type=chunk["type"]) from None


def _no_change(fold: StreamFold, chunk: Chunk) -> None:
    """``error`` and ``abort`` are recorded but leave the message as it is."""


HANDLERS: Final[Mapping[str, FoldHandler]] = MappingProxyType(
    {
        "text-start": _text_start,
        "text-delta": _text_delta,
        "text-end": text_end,
        "reasoning-start": _reasoning_start,
        "reasoning-delta": _reasoning_delta,
        "reasoning-end": _reasoning_end,
        "file": _file,
        "source-url": _source,
        "source-document": _source,
        "start-step": _start_step,
        "finish-step": _finish_step,
        "start": _start,
        "finish": _finish,
        "message-metadata": _merge_metadata,
        "error": _no_change,
        "abort": _no_change,
        "tool-input-start": tool_input_start,
        "tool-input-delta": tool_input_delta,
        "tool-input-available": tool_input_available,
        "tool-input-error": tool_input_error,
        "tool-approval-request": tool_approval_request,
        "tool-output-denied": tool_output_denied,
        "tool-output-available": tool_output,
        "tool-output-error": tool_output,
    }
)
"""Chunk type -> its handler, for every fixed chunk type of AI SDK 6."""
