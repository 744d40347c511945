"""Size limits on what the store accepts (SPEC §3.4: oversized inputs are refused)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from chatledger.domain.errors import (
    InvalidChunkError,
    InvalidMessageError,
    InvalidToolOutputError,
    OversizedInputError,
)

__all__ = ["Limits", "NotStorableError", "json_size"]

_DELTA_KEYS = {"text-delta": "delta", "reasoning-delta": "delta", "tool-input-delta": "inputTextDelta"}


class NotStorableError(ValueError):
    """The value cannot be stored as UTF-8 JSON (a lone UTF-16 surrogate, NaN, a non-JSON type)."""


def json_size(value: Any) -> int:
    """Bytes of ``value`` as compact UTF-8 JSON; NotStorableError if it has no such form."""
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        return len(text.encode())
    except UnicodeEncodeError:
        raise NotStorableError("a string holds a lone UTF-16 surrogate, which UTF-8 cannot store") from None
    except (TypeError, ValueError) as error:
        raise NotStorableError(f"not a JSON value ({error})") from None


@dataclass(frozen=True)
class Limits:
    """Largest chunk, message and tool output accepted, in bytes of JSON."""

    max_chunk_bytes: int = 1_000_000
    max_message_bytes: int = 4_000_000
    max_tool_output_bytes: int = 1_000_000

    def check_chunk(self, chunk: Any) -> None:
        """Refuse a chunk (or the tool output it carries) that is over its limit."""
        if not isinstance(chunk, Mapping):
            return  # the schema check refuses it with a better reason
        kind = chunk.get("type")
        delta_key = _DELTA_KEYS.get(kind) if isinstance(kind, str) else None
        if delta_key is not None and len(chunk) == 3:
            # Hot path: a plain ASCII delta chunk of sane size is storable and small.
            delta, key = chunk.get(delta_key), chunk.get("id", chunk.get("toolCallId"))
            if (
                isinstance(delta, str)
                and isinstance(key, str)
                and delta.isascii()
                and key.isascii()
                and len(delta) + len(key) + 256 < self.max_chunk_bytes
            ):
                return
        kind_name = kind if isinstance(kind, str) else None
        try:
            size = json_size(chunk)
        except NotStorableError as error:
            raise InvalidChunkError(str(error), chunk_type=kind_name) from None
        if size > self.max_chunk_bytes:
            raise OversizedInputError("chunk", size, self.max_chunk_bytes, chunk_type=kind_name)
        if kind == "tool-output-available":
            self.check_tool_output(chunk.get("output"), tool_call_id=chunk.get("toolCallId"), chunk_type=kind_name)

    def check_tool_output(
        self, output: Any, *, tool_call_id: str | None = None, chunk_type: str | None = None
    ) -> None:
        """Refuse a tool output over its limit."""
        try:
            size = json_size(output)
        except NotStorableError as error:
            raise InvalidToolOutputError(tool_call_id or "", str(error)) from None
        if size > self.max_tool_output_bytes:
            raise OversizedInputError(
                "tool output", size, self.max_tool_output_bytes, chunk_type=chunk_type, tool_call_id=tool_call_id
            )

    def check_message(self, message: Mapping[str, Any]) -> None:
        """Refuse a whole message that is over the limit or cannot be stored."""
        try:
            size = json_size(message)
        except NotStorableError as error:
            raise InvalidMessageError(str(error), message_id=_message_id(message)) from None
        if size > self.max_message_bytes:
            raise OversizedInputError("message", size, self.max_message_bytes)

    def keepable(self, chunk: Any) -> Any:
        """What of a refused input can be kept in the log: itself, or a short stand-in."""
        try:
            size = json_size(chunk)
        except NotStorableError:
            return {"unserialisable": ascii(chunk)[:200]}
        if size > self.max_chunk_bytes:
            kind = chunk.get("type") if isinstance(chunk, Mapping) else None
            return {"omitted": True, "type": kind, "bytes": size}
        return chunk


def _message_id(message: Mapping[str, Any]) -> str | None:
    message_id = message.get("id")
    return message_id if isinstance(message_id, str) else None
