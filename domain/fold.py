"""The fold of one stream's chunks into its assistant UIMessage (the AI SDK's ``processUIMessageStream``).

Messages and parts are plain JSON dicts, so that the result is JSON-equal to
what the real SDK builds. The fold's own state (open text and reasoning parts,
partial tool calls) refers to parts by index, so it can be snapshotted.
``StreamFold`` is the machine; what each chunk type does is its dialect's
handler table (``chatledger.domain.dialects``). Replays (docs/behaviour.md §3.2)
are decided one level up, in ``conversation.py``; the handlers refuse what
the SDK fails on, plus a ``start`` that would wipe content.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from chatledger.domain.errors import InvalidChunkError, UnknownToolCallChunkError
from chatledger.domain.tool_parts import (
    current_step_start,
    find_in_current_step,
    is_tool_part,
    static_tool_name,
)

__all__ = ["FoldHandler", "FoldRules", "StreamFold", "ToolResolver"]

ToolResolver = Callable[[str], dict[str, Any] | None]
"""toolCallId -> the part of an earlier message with that call (or None)."""


class FoldRules(Protocol):
    """What the fold takes from an AI SDK dialect (``chatledger.domain.dialects.Dialect`` is one)."""

    @property
    def major(self) -> int:
        """The AI SDK major."""

    @property
    def fold_handlers(self) -> Mapping[str, FoldHandler]:
        """Chunk type -> what folding it does (``data-*`` types apart)."""

    @property
    def partial_json_strict(self) -> bool:
        """Whether partial tool input is repaired by AI SDK 7's stricter ``fixJson``."""


class StreamFold:
    """Folds the chunks of one stream into ``message`` (mutated in place), as ``dialect`` does."""

    def __init__(
        self,
        message: dict[str, Any],
        *,
        dialect: FoldRules,
        continuation: bool = False,
        resolve_tool_part: ToolResolver | None = None,
    ) -> None:
        self.message = message
        self.dialect = dialect
        """The AI SDK dialect whose fold this is."""
        self._handlers = dialect.fold_handlers
        self.continuation = continuation
        self.retracted: list[dict[str, Any]] = []
        """The parts the last ``reset-step`` retracted (v7)."""
        self.resolve_tool_part = resolve_tool_part
        self.active_text: dict[str, int] = {}
        """id -> index of each open text part."""
        self.active_reasoning: dict[str, int] = {}
        """id -> index of each open reasoning part."""
        self.partial_tool_calls: dict[str, dict[str, Any]] = {}
        """toolCallId -> the input text streamed so far, and what the call's part needs."""
        self.finish_reason: str | None = None
        if continuation:
            self._seed_partial_tool_calls()

    @property
    def ai_sdk(self) -> int:
        """The AI SDK major whose fold this is."""
        return self.dialect.major

    # -- snapshot support -------------------------------------------------

    def state(self) -> dict[str, Any]:
        """The fold's own state as JSON (the message itself is stored elsewhere)."""
        return {
            "continuation": self.continuation,
            "activeText": self.active_text,
            "activeReasoning": self.active_reasoning,
            "partialToolCalls": self.partial_tool_calls,
            "finishReason": self.finish_reason,
        }

    @classmethod
    def restore(
        cls,
        message: dict[str, Any],
        state: Mapping[str, Any],
        *,
        dialect: FoldRules,
        resolve_tool_part: ToolResolver | None = None,
    ) -> StreamFold:
        """Rebuild a fold from ``state()`` and its message."""
        fold = cls(message, dialect=dialect, resolve_tool_part=resolve_tool_part)
        fold.continuation = bool(state["continuation"])
        fold.active_text = dict(state["activeText"])
        fold.active_reasoning = dict(state["activeReasoning"])
        fold.partial_tool_calls = copy.deepcopy(dict(state["partialToolCalls"]))
        fold.finish_reason = state["finishReason"]
        return fold

    def _seed_partial_tool_calls(self) -> None:
        """A continued message can go on streaming input into its last step's parts."""
        parts = self.message["parts"]
        for part in parts[current_step_start(parts) :]:
            if not is_tool_part(part) or part.get("state") != "input-streaming":
                continue
            dynamic = part["type"] == "dynamic-tool"
            entry: dict[str, Any] = {
                "text": part.get("rawInput", ""),
                "toolName": part["toolName"] if dynamic else static_tool_name(part),
                "dynamic": dynamic,
            }
            for key in ("inputEncoding", "title", "toolMetadata"):
                if key in part:
                    entry[key] = part[key]
            self.partial_tool_calls[part["toolCallId"]] = entry

    # -- the fold ---------------------------------------------------------

    def apply(self, chunk: Mapping[str, Any]) -> None:
        """Fold one schema-valid chunk; raise InvalidChunkError when it cannot apply."""
        kind: str = chunk["type"]
        handler = self._handlers.get(kind)
        if handler is not None:
            handler(self, chunk)
        elif kind.startswith("data-"):
            self._data(chunk)
        else:
            raise InvalidChunkError(f"unknown chunk type {kind!r}", chunk_type=kind)

    @property
    def parts(self) -> list[dict[str, Any]]:
        """The parts of the message being written."""
        parts: list[dict[str, Any]] = self.message["parts"]
        return parts

    def _data(self, chunk: Mapping[str, Any]) -> None:
        if chunk.get("transient"):
            return
        if chunk.get("id") is not None:
            for part in self.parts:
                if part["type"] == chunk["type"] and part.get("id") == chunk["id"]:
                    part["data"] = chunk["data"]
                    return
        self.parts.append(dict(chunk))

    def find_tool_invocation(self, chunk: Mapping[str, Any]) -> dict[str, Any]:
        """The part a result/approval chunk is for: this step, this message, then earlier messages."""
        tool_call_id = chunk["toolCallId"]
        index = find_in_current_step(self.parts, tool_call_id, dynamic=None)
        if index is not None:
            return self.parts[index]
        part: dict[str, Any]
        for part in reversed(self.parts):
            if part.get("toolCallId") == tool_call_id and is_tool_part(part):
                return part
        earlier: dict[str, Any] | None = (
            self.resolve_tool_part(tool_call_id) if self.resolve_tool_part else None
        )
        if earlier is not None:
            return earlier
        raise UnknownToolCallChunkError(chunk_type=chunk["type"], tool_call_id=tool_call_id)


FoldHandler = Callable[[StreamFold, Mapping[str, Any]], None]
"""What folding one chunk type does to a fold (an entry of a dialect's handler table)."""
