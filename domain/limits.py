"""Size limits on what the store accepts (SPEC §3.4: oversized inputs are refused)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from chatledger.domain.errors import InvalidToolOutputError, OversizedInputError

__all__ = ["Limits", "json_size"]

_DELTA_KEYS = {"text-delta": "delta", "reasoning-delta": "delta", "tool-input-delta": "inputTextDelta"}


def json_size(value: Any) -> int:
    """Bytes of ``value`` as compact UTF-8 JSON."""
    return len(json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode())


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
        if delta_key is not None and len(chunk) <= 4:
            delta = chunk.get(delta_key)
            # Hot path: a small delta chunk cannot be over any sane limit.
            if isinstance(delta, str) and len(delta) * 4 + 256 < self.max_chunk_bytes:
                return
        try:
            size = json_size(chunk)
        except (TypeError, ValueError):
            return  # not JSON: the schema check refuses it
        kind_name = kind if isinstance(kind, str) else None
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
        except (TypeError, ValueError):
            raise InvalidToolOutputError(tool_call_id or "", "the output is not a JSON value") from None
        if size > self.max_tool_output_bytes:
            raise OversizedInputError(
                "tool output", size, self.max_tool_output_bytes, chunk_type=chunk_type, tool_call_id=tool_call_id
            )

    def check_message(self, message: Mapping[str, Any]) -> None:
        """Refuse a whole message that is over the limit."""
        size = json_size(message)
        if size > self.max_message_bytes:
            raise OversizedInputError("message", size, self.max_message_bytes)

    def keepable(self, chunk: Any) -> Any:
        """What of a refused input can be kept in the log: itself, or a short stand-in."""
        try:
            size = json_size(chunk)
        except (TypeError, ValueError):
            return {"unserialisable": repr(chunk)[:200]}
        if size > self.max_chunk_bytes:
            kind = chunk.get("type") if isinstance(chunk, Mapping) else None
            return {"omitted": True, "type": kind, "bytes": size}
        return chunk
