"""The fold of one stream's chunks into its assistant UIMessage (the AI SDK's ``processUIMessageStream``).

Messages and parts are plain JSON dicts, so that the result is JSON-equal to
what the real SDK builds. The fold's own state (open text and reasoning parts,
partial tool calls) refers to parts by index, so it can be snapshotted.
Replays (docs/behaviour.md §3.2) are decided one level up, in ``conversation.py``; this
module refuses what the SDK fails on, plus a ``start`` that would wipe content.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from chatledger.domain._fold_v7 import V7_HANDLERS
from chatledger.domain.errors import InvalidChunkError, UnknownToolCallChunkError
from chatledger.domain.metadata import MetadataMergeError, merge_metadata
from chatledger.domain.partial_json import MISSING as JSON_MISSING
from chatledger.domain.partial_json import parse_partial_json
from chatledger.domain.tool_parts import (
    MISSING,
    current_step_start,
    find_in_current_step,
    is_tool_part,
    new_tool_part,
    static_tool_name,
    write_tool_part,
)

__all__ = ["StreamFold", "fold_stream"]

ToolResolver = Callable[[str], dict[str, Any] | None]


def _opt(chunk: Mapping[str, Any], key: str) -> Any:
    return chunk.get(key, MISSING)


class StreamFold:
    """Folds the chunks of one stream into ``message`` (mutated in place)."""

    def __init__(
        self,
        message: dict[str, Any],
        *,
        continuation: bool = False,
        resolve_tool_part: ToolResolver | None = None,
        ai_sdk: int = 6,
    ) -> None:
        self.message = message
        self.continuation = continuation
        self.ai_sdk = ai_sdk
        """The AI SDK major whose fold this is (6 or 7)."""
        self._handlers = _HANDLERS_V7 if ai_sdk == 7 else _HANDLERS
        self.retracted: list[dict[str, Any]] = []
        """The parts the last ``reset-step`` retracted (v7)."""
        self.resolve_tool_part = resolve_tool_part
        self.active_text: dict[str, int] = {}
        self.active_reasoning: dict[str, int] = {}
        self.partial_tool_calls: dict[str, dict[str, Any]] = {}
        self.finish_reason: str | None = None
        if continuation:
            self._seed_partial_tool_calls()

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
        resolve_tool_part: ToolResolver | None = None,
        ai_sdk: int = 6,
    ) -> StreamFold:
        """Rebuild a fold from ``state()`` and its message."""
        fold = cls(message, resolve_tool_part=resolve_tool_part, ai_sdk=ai_sdk)
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

    def _text_start(self, chunk: Mapping[str, Any]) -> None:
        self._open(chunk, {"type": "text", "text": ""}, self.active_text)

    def _reasoning_start(self, chunk: Mapping[str, Any]) -> None:
        self._open(
            chunk, {"type": "reasoning", "id": chunk["id"], "text": ""}, self.active_reasoning
        )

    def _open(self, chunk: Mapping[str, Any], part: dict[str, Any], active: dict[str, int]) -> None:
        if "providerMetadata" in chunk:
            part["providerMetadata"] = chunk["providerMetadata"]
        part["state"] = "streaming"
        active[chunk["id"]] = len(self.parts)
        self.parts.append(part)

    def _text_delta(self, chunk: Mapping[str, Any]) -> None:
        part = self._active_part(chunk, self.active_text, "text")
        part["text"] += chunk["delta"]
        if "providerMetadata" in chunk:
            part["providerMetadata"] = chunk["providerMetadata"]

    def _reasoning_delta(self, chunk: Mapping[str, Any]) -> None:
        part = self._active_part(chunk, self.active_reasoning, "reasoning")
        part["text"] += chunk["delta"]
        if "providerMetadata" in chunk:
            part["providerMetadata"] = chunk["providerMetadata"]

    def _text_end(self, chunk: Mapping[str, Any]) -> None:
        self._close(chunk, self.active_text, "text")

    def _reasoning_end(self, chunk: Mapping[str, Any]) -> None:
        self._close(chunk, self.active_reasoning, "reasoning")

    def _close(self, chunk: Mapping[str, Any], active: dict[str, int], what: str) -> None:
        part = self._active_part(chunk, active, what)
        part["state"] = "done"
        if "providerMetadata" in chunk:
            part["providerMetadata"] = chunk["providerMetadata"]
        del active[chunk["id"]]

    def _active_part(
        self, chunk: Mapping[str, Any], active: dict[str, int], what: str
    ) -> dict[str, Any]:
        index = active.get(chunk["id"])
        if index is None:
            raise InvalidChunkError(
                f"no open {what} part with id {chunk['id']!r} "
                f"(send {what}-start first; finish-step closes open parts)",
                chunk_type=chunk["type"],
            )
        return self.parts[index]

    def _file(self, chunk: Mapping[str, Any]) -> None:
        part = {"type": "file", "mediaType": chunk["mediaType"], "url": chunk["url"]}
        if "providerMetadata" in chunk:
            part["providerMetadata"] = chunk["providerMetadata"]
        self.parts.append(part)

    def _source(self, chunk: Mapping[str, Any]) -> None:
        keys = _SOURCE_KEYS[chunk["type"]]
        self.parts.append({"type": chunk["type"], **{k: chunk[k] for k in keys if k in chunk}})

    def _start_step(self, chunk: Mapping[str, Any]) -> None:
        self.parts.append({"type": "step-start"})

    def _finish_step(self, chunk: Mapping[str, Any]) -> None:
        self.active_text = {}
        self.active_reasoning = {}

    def _start(self, chunk: Mapping[str, Any]) -> None:
        new_id = chunk.get("messageId")
        if new_id is not None and new_id != self.message["id"] and not self.continuation:
            if self.parts or self.message.get("metadata") is not None:
                raise InvalidChunkError(
                    f"start names message {new_id!r} but this stream already wrote "
                    f"content into message {self.message['id']!r}",
                    chunk_type="start",
                )
            self.message["id"] = new_id
        self._merge_metadata(chunk)

    def _finish(self, chunk: Mapping[str, Any]) -> None:
        if chunk.get("finishReason") is not None:
            self.finish_reason = chunk["finishReason"]
        self._merge_metadata(chunk)

    def _message_metadata(self, chunk: Mapping[str, Any]) -> None:
        self._merge_metadata(chunk)

    def _merge_metadata(self, chunk: Mapping[str, Any]) -> None:
        update = chunk.get("messageMetadata")
        if update is None:
            return
        try:
            self.message["metadata"] = merge_metadata(self.message.get("metadata"), update)
        except MetadataMergeError as error:
            raise InvalidChunkError(str(error), chunk_type=chunk["type"]) from None

    def _no_change(self, chunk: Mapping[str, Any]) -> None:
        """``error`` and ``abort`` are recorded but leave the message as it is."""

    def _data(self, chunk: Mapping[str, Any]) -> None:
        if chunk.get("transient"):
            return
        if chunk.get("id") is not None:
            for part in self.parts:
                if part["type"] == chunk["type"] and part.get("id") == chunk["id"]:
                    part["data"] = chunk["data"]
                    return
        self.parts.append(dict(chunk))

    # -- tool chunks ------------------------------------------------------

    def _write(
        self, tool_call_id: str, dynamic: bool, existing: dict[str, Any] | None, **write: Any
    ) -> None:
        """The SDK's updateToolPart/updateDynamicToolPart: update in place or append."""
        if existing is None:
            index = find_in_current_step(self.parts, tool_call_id, dynamic=dynamic)
            existing = self.parts[index] if index is not None else None
        if existing is not None:
            write_tool_part(existing, dynamic=dynamic, **write)
        else:
            self.parts.append(new_tool_part(tool_call_id, dynamic=dynamic, **write))

    def _tool_input_start(self, chunk: Mapping[str, Any]) -> None:
        entry: dict[str, Any] = {
            "text": "",
            "toolName": chunk["toolName"],
            "dynamic": bool(chunk.get("dynamic")),
        }
        for key in ("inputEncoding", "title", "toolMetadata"):
            if key in chunk:
                entry[key] = chunk[key]
        self.partial_tool_calls[chunk["toolCallId"]] = entry
        self._write(
            chunk["toolCallId"],
            entry["dynamic"],
            None,
            state="input-streaming",
            tool_name=chunk["toolName"],
            input_encoding=_opt(chunk, "inputEncoding"),
            provider_executed=_opt(chunk, "providerExecuted"),
            title=_opt(chunk, "title"),
            tool_metadata=_opt(chunk, "toolMetadata"),
            provider_metadata=_opt(chunk, "providerMetadata"),
        )

    def _tool_input_delta(self, chunk: Mapping[str, Any]) -> None:
        entry = self.partial_tool_calls.get(chunk["toolCallId"])
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
            partial = parse_partial_json(entry["text"], self.ai_sdk)
            if partial is JSON_MISSING:
                partial = MISSING
        self._write(
            chunk["toolCallId"],
            entry["dynamic"],
            None,
            state="input-streaming",
            tool_name=entry["toolName"],
            input_encoding=entry.get("inputEncoding", MISSING),
            input=partial,
            raw_input=entry["text"],
            title=entry.get("title", MISSING),
            tool_metadata=entry.get("toolMetadata", MISSING),
        )

    def _tool_input_available(self, chunk: Mapping[str, Any]) -> None:
        self._write(
            chunk["toolCallId"],
            bool(chunk.get("dynamic")),
            None,
            state="input-available",
            tool_name=chunk["toolName"],
            input=chunk["input"],
            provider_executed=_opt(chunk, "providerExecuted"),
            provider_metadata=_opt(chunk, "providerMetadata"),
            title=_opt(chunk, "title"),
            tool_metadata=_opt(chunk, "toolMetadata"),
        )

    def _tool_input_error(self, chunk: Mapping[str, Any]) -> None:
        index = find_in_current_step(self.parts, chunk["toolCallId"], dynamic=None)
        # The existing part's kind wins; a new part follows the chunk's flag.
        existing = self.parts[index] if index is not None else None
        dynamic = existing["type"] == "dynamic-tool" if existing else bool(chunk.get("dynamic"))
        # SDK quirk (b.4): a static part keeps the bad input in rawInput only.
        inputs = {"input": chunk["input"]} if dynamic else {"raw_input": chunk["input"]}
        self._write(
            chunk["toolCallId"],
            dynamic,
            None,
            state="output-error",
            tool_name=chunk["toolName"],
            error_text=chunk["errorText"],
            provider_executed=_opt(chunk, "providerExecuted"),
            provider_metadata=_opt(chunk, "providerMetadata"),
            tool_metadata=_opt(chunk, "toolMetadata"),
            **inputs,
        )

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

    def _tool_approval_request(self, chunk: Mapping[str, Any]) -> None:
        part = self.find_tool_invocation(chunk)
        part["state"] = "approval-requested"
        approval: dict[str, Any] = {"id": chunk["approvalId"]}
        if chunk.get("approvalDescriptor") is not None:
            approval["descriptor"] = chunk["approvalDescriptor"]
        if "inputSchemaInput" in chunk:
            approval["inputSchemaInput"] = chunk["inputSchemaInput"]
        if chunk.get("signature") is not None:
            approval["signature"] = chunk["signature"]
        part["approval"] = approval

    def _tool_output_denied(self, chunk: Mapping[str, Any]) -> None:
        self.find_tool_invocation(chunk)["state"] = "output-denied"

    def _tool_output(self, chunk: Mapping[str, Any]) -> None:
        part = self.find_tool_invocation(chunk)
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


_SOURCE_KEYS = {
    "source-url": ("sourceId", "url", "title", "providerMetadata"),
    "source-document": ("sourceId", "mediaType", "title", "filename", "providerMetadata"),
}

_HANDLERS: dict[str, Callable[[StreamFold, Mapping[str, Any]], None]] = {
    "text-start": StreamFold._text_start,
    "text-delta": StreamFold._text_delta,
    "text-end": StreamFold._text_end,
    "reasoning-start": StreamFold._reasoning_start,
    "reasoning-delta": StreamFold._reasoning_delta,
    "reasoning-end": StreamFold._reasoning_end,
    "file": StreamFold._file,
    "source-url": StreamFold._source,
    "source-document": StreamFold._source,
    "start-step": StreamFold._start_step,
    "finish-step": StreamFold._finish_step,
    "start": StreamFold._start,
    "finish": StreamFold._finish,
    "message-metadata": StreamFold._message_metadata,
    "error": StreamFold._no_change,
    "abort": StreamFold._no_change,
    "tool-input-start": StreamFold._tool_input_start,
    "tool-input-delta": StreamFold._tool_input_delta,
    "tool-input-available": StreamFold._tool_input_available,
    "tool-input-error": StreamFold._tool_input_error,
    "tool-approval-request": StreamFold._tool_approval_request,
    "tool-output-denied": StreamFold._tool_output_denied,
    "tool-output-available": StreamFold._tool_output,
    "tool-output-error": StreamFold._tool_output,
}


_HANDLERS_V7 = {**_HANDLERS, **V7_HANDLERS}


def fold_stream(
    chunks: Iterable[Mapping[str, Any]], message: dict[str, Any] | None = None, *, ai_sdk: int = 6
) -> dict[str, Any]:
    """Fold a whole stream like ``readUIMessageStream(message?)`` and return the final message.

    A given assistant ``message`` is continued (a copy; the argument is not
    changed); any other starting message only lends its id, as in the SDK.
    Replays change nothing (docs/behaviour.md §3.2). Raises InvalidChunkError, naming the
    chunk's position, at the first chunk that is refused (docs/behaviour.md §3.4).
    ``ai_sdk`` picks the AI SDK major whose chunks and fold apply (6 or 7).
    """
    from chatledger.domain.conversation import fold_into_conversation

    if message is not None and message.get("role") == "assistant":
        folded = fold_into_conversation([message], chunks, continuation=True, ai_sdk=ai_sdk)
    else:
        start_id = message["id"] if message is not None else ""
        folded = fold_into_conversation([], chunks, message_id=start_id, ai_sdk=ai_sdk)
    result: dict[str, Any] = folded[-1]
    return result
