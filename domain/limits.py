"""What the store can accept: sizes, nesting, and values that have a UTF-8 JSON form (SPEC §3.4)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from chatledger.domain.errors import (
    InvalidChunkError,
    InvalidInputError,
    InvalidMessageError,
    InvalidToolOutputError,
    OversizedInputError,
)

__all__ = ["Limits", "NotStorableError", "chunk_cost", "delta_text", "json_size"]

_PART_ALLOWANCE = 16
_DELTA_KEYS = {
    "text-delta": "delta",
    "reasoning-delta": "delta",
    "tool-input-delta": "inputTextDelta",
}


class NotStorableError(ValueError):
    """The value has no UTF-8 JSON form (lone surrogate, NaN, non-JSON type, too deep)."""


def json_size(value: Any, *, max_depth: int = 100) -> int:
    """Bytes of ``value`` as compact UTF-8 JSON; NotStorableError if it has no such form."""
    if not _shallow_enough(value, max_depth):
        raise NotStorableError(f"nested more than {max_depth} levels deep")
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        return len(text.encode())
    except UnicodeEncodeError:
        raise NotStorableError(
            "a string holds a lone UTF-16 surrogate, which UTF-8 cannot store"
        ) from None
    except (TypeError, ValueError, RecursionError) as error:
        raise NotStorableError(f"not a JSON value ({_describe(error)})") from None


def _shallow_enough(value: Any, max_depth: int) -> bool:
    """Whether containers nest at most ``max_depth`` deep (iterative: deep input cannot crash it)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        if depth >= max_depth:
            return False
        stack.extend(
            (child, depth + 1) for child in children if isinstance(child, (dict, list, tuple))
        )
    return True


def delta_text(chunk: Mapping[str, Any]) -> str | None:
    """The text a delta chunk adds, or None for other chunks."""
    kind = chunk.get("type")
    key = _DELTA_KEYS.get(kind) if isinstance(kind, str) else None
    value = chunk.get(key) if key else None
    return value if isinstance(value, str) else None


def chunk_cost(chunk: Mapping[str, Any]) -> int:
    """What a chunk adds to its message's size, as counted against ``max_message_bytes``.

    A delta adds its text's length; any other chunk counts as its JSON size
    plus a small allowance for the keys the part it makes may add. Live
    writes and replays count the same way, so they agree on the total.
    """
    text = delta_text(chunk)
    return len(text) if text is not None else json_size(chunk) + _PART_ALLOWANCE


@dataclass(frozen=True)
class Limits:
    """Largest chunk, message and tool output accepted (bytes of JSON), and deepest nesting."""

    max_chunk_bytes: int = 1_000_000
    max_message_bytes: int = 4_000_000
    """Applies to whole messages and to what a stream writes into its message."""
    max_tool_output_bytes: int = 1_000_000
    max_depth: int = 100
    """Deepest nesting of objects and arrays (the JSON encoder refuses much deeper input)."""

    def chunk_cost(self, chunk: Any) -> int:
        """Check a chunk is storable and within limits; return its ``chunk_cost``."""
        if type(chunk) is not dict and not isinstance(chunk, Mapping):
            return 0  # the schema check refuses it with a better reason
        kind = chunk.get("type")
        if len(chunk) == 3 and (kind == "text-delta" or kind == "reasoning-delta"):
            # Hot path (most chunks): a plain ASCII delta of sane size is storable and small.
            delta, key = chunk.get("delta"), chunk.get("id")
            if (
                type(delta) is str
                and type(key) is str
                and delta.isascii()
                and key.isascii()
                and len(delta) + len(key) + 256 < self.max_chunk_bytes
            ):
                return len(delta)
        kind_name = kind if isinstance(kind, str) else None
        try:
            size = json_size(chunk, max_depth=self.max_depth)
        except NotStorableError as error:
            raise InvalidChunkError(str(error), chunk_type=kind_name) from None
        if size > self.max_chunk_bytes:
            raise OversizedInputError("chunk", size, self.max_chunk_bytes, chunk_type=kind_name)
        if kind == "tool-output-available":
            self.check_tool_output(
                chunk.get("output"), tool_call_id=chunk.get("toolCallId"), chunk_type=kind_name
            )
        text = delta_text(chunk)
        return len(text) if text is not None else size + _PART_ALLOWANCE

    def check_tool_output(
        self, output: Any, *, tool_call_id: str | None = None, chunk_type: str | None = None
    ) -> None:
        """Refuse a tool output over its limit or without a JSON form."""
        try:
            size = json_size(output, max_depth=self.max_depth)
        except NotStorableError as error:
            raise InvalidToolOutputError(tool_call_id or "", str(error)) from None
        if size > self.max_tool_output_bytes:
            raise OversizedInputError(
                "tool output",
                size,
                self.max_tool_output_bytes,
                chunk_type=chunk_type,
                tool_call_id=tool_call_id,
            )

    def message_size(self, message: Any) -> int:
        """Check a whole message is storable and within the limit; return its size."""
        message_id = message.get("id") if isinstance(message, Mapping) else None
        try:
            size = json_size(message, max_depth=self.max_depth)
        except NotStorableError as error:
            raise InvalidMessageError(str(error), message_id=_printable(message_id)) from None
        if size > self.max_message_bytes:
            raise OversizedInputError("message", size, self.max_message_bytes)
        return size

    def check_value(self, what: str, value: Any) -> None:
        """Refuse an id or metadata that cannot be stored."""
        try:
            json_size(value, max_depth=self.max_depth)
        except NotStorableError as error:
            raise InvalidInputError(f"{what} refused: {error}") from None

    def keepable(self, chunk: Any) -> Any:
        """What of a refused input can be kept in the log: itself, or a short stand-in."""
        try:
            size = json_size(chunk, max_depth=self.max_depth)
        except NotStorableError as error:
            return {"unserialisable": str(error), "pythonType": type(chunk).__name__}
        if size > self.max_chunk_bytes:
            kind = chunk.get("type") if isinstance(chunk, Mapping) else None
            return {"omitted": True, "type": _printable(kind), "bytes": size}
        return chunk


def _printable(value: Any) -> str | None:
    """A str that is safe to store and print, or None."""
    if not isinstance(value, str):
        return None
    return value.encode("utf-8", "backslashreplace").decode("utf-8")[:200]


def _describe(error: BaseException) -> str:
    return "too deeply nested" if isinstance(error, RecursionError) else str(error)[:200]
