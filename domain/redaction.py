"""Redaction: hiding one tool call's input or output, or parts of one message, from every view.

A ``Redacted`` event names its target (a tool call id, or a message id) and
the fields hidden. The log keeps the original events unchanged (their chain
still verifies); the fold keeps folding them unchanged too, so a redaction
changes no decision the store takes. What changes is what every *view* shows:
messages, converters, the timeline, followed chunks, the read models. They
all pass their data through ``Masks``, built from the conversation's
redactions (``ConversationState.redactions``), which puts ``REDACTED`` in
place of the hidden content.

Fields:

- a tool call: ``input`` (its input, raw input and input error, the
  ``tool-input-*`` chunks) and ``output`` (its output or error text, the
  ``tool-output-*`` chunks, ``ToolOutputAdded``); both by default;
- a message: the kinds of its parts (``text``, ``reasoning``, ``file``,
  ``source-url``, ``data-weather``, ...): every part of that kind, and the
  chunks that streamed them; every kind the message has by default. Its tool
  calls are redacted by their tool call id.

Pure: no I/O.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from chatledger.domain.errors import InvalidInputError, InvalidMessageError, UnknownToolCallError
from chatledger.domain.tool_parts import is_tool_part

if TYPE_CHECKING:
    from chatledger.domain.conversation import ConversationState
    from chatledger.domain.events import ConversationEvent

__all__ = [
    "REDACTED",
    "TOOL_FIELDS",
    "Masks",
    "RedactionDecision",
    "batch_message_id",
    "decide_redaction",
    "mask_events",
    "message_fields",
]

REDACTED: Final = "[redacted]"
"""What every view shows in place of redacted content."""
TOOL_FIELDS: Final = ("input", "output")
"""The fields of a tool call that can be redacted."""

_REDACTED_URL: Final = "data:text/plain,%5Bredacted%5D"
"""A redacted file's URL: a valid data URL whose content reads ``[redacted]``."""
_NOT_CONTENT: Final = frozenset({"step-start"})
"""Part kinds that hold nothing to hide."""
_CHUNK_KINDS: Final = {
    "text-start": "text",
    "text-delta": "text",
    "text-end": "text",
    "reasoning-start": "reasoning",
    "reasoning-delta": "reasoning",
    "reasoning-end": "reasoning",
}
"""Chunk type -> the part kind it streams, where they differ (the others stream their own kind)."""


class RedactionDecision(NamedTuple):
    """What a ``Redacted`` event records: the target and the fields it hides."""

    tool_call_id: str | None
    message_id: str | None
    fields: list[str]


def message_fields(message: Mapping[str, Any]) -> list[str]:
    """The part kinds of a message that can be redacted (its tool calls are redacted by id)."""
    kinds = []
    for part in message.get("parts") or []:
        kind = part.get("type") if isinstance(part, dict) else None
        if isinstance(kind, str) and kind not in _NOT_CONTENT and not is_tool_part(part):
            kinds.append(kind)
    return list(dict.fromkeys(kinds))


def decide_redaction(
    state: ConversationState,
    *,
    tool_call_id: str | None,
    message_id: str | None,
    fields: Sequence[str] | None,
) -> RedactionDecision | None:
    """Check a redaction against the conversation; None when it is all redacted already.

    Raises ``InvalidInputError`` (neither or both targets, unknown fields: the
    message lists the valid ones), ``UnknownToolCallError`` or
    ``InvalidMessageError`` (a target the conversation does not hold).
    """
    if (tool_call_id is None) == (message_id is None):
        raise InvalidInputError(
            "name exactly one thing to redact: a tool call id (its input and output) or a "
            "message id (its parts)"
        )
    if fields is not None and (
        not isinstance(fields, list | tuple)
        or not fields
        or not all(isinstance(field, str) for field in fields)
    ):
        raise InvalidInputError(
            "fields must be a non-empty list of field names (leave it out to redact every field)"
        )
    if tool_call_id is not None:
        if state.tool_part(tool_call_id) is None:
            raise UnknownToolCallError(
                f"no tool call with id {tool_call_id!r} in this conversation's messages "
                "(redaction names a call of the current messages)",
                tool_call_id=tool_call_id,
            )
        wanted = _checked(fields, list(TOOL_FIELDS), f"tool call {tool_call_id!r}")
        done = Masks(state.redactions).tools.get(tool_call_id, set())
    else:
        assert message_id is not None
        message = _message(state, message_id)
        if message is None:
            raise InvalidMessageError(
                "no message with this id in the conversation (redaction names a message of "
                "the current messages, or a queued steering message)",
                message_id=message_id,
            )
        valid = message_fields(message)
        if not valid:
            raise InvalidInputError(
                f"message {message_id!r} has no content parts to redact; redact its tool "
                "calls by their tool call id"
            )
        wanted = _checked(fields, valid, f"message {message_id!r}")
        done = Masks(state.redactions).messages.get(message_id, set())
    if set(wanted) <= done:
        return None
    return RedactionDecision(tool_call_id, message_id, wanted)


def _checked(fields: Sequence[str] | None, valid: list[str], what: str) -> list[str]:
    if fields is None:
        return valid
    unknown = [f for f in fields if f not in valid]
    if unknown:
        raise InvalidInputError(
            f"unknown field(s) {', '.join(map(repr, unknown))} for {what}; its fields are "
            f"{', '.join(valid)}"
        )
    return list(dict.fromkeys(fields))


def _message(state: ConversationState, message_id: str) -> dict[str, Any] | None:
    kept = list(state.branches.stored.values()) if state.branches is not None else []
    for message in [*state.messages, *state.steering, *kept]:  # off the active path too
        if message.get("id") == message_id:
            return message
    return None


class Masks:
    """The redactions of one conversation, applied to whatever a view shows.

    Every method returns its input itself when nothing of it is redacted, and
    a changed copy otherwise: the input is never changed.
    """

    def __init__(self, redactions: Iterable[Mapping[str, Any]] = ()) -> None:
        self.tools: dict[str, set[str]] = {}
        """toolCallId -> redacted fields."""
        self.messages: dict[str, set[str]] = {}
        """message id -> redacted part kinds."""
        for redaction in redactions:
            call, message = redaction.get("toolCallId"), redaction.get("messageId")
            target = self.tools.setdefault(call, set()) if call is not None else None
            if message is not None:
                target = self.messages.setdefault(message, set())
            if target is not None:
                target.update(redaction.get("fields") or ())

    def __bool__(self) -> bool:
        return bool(self.tools or self.messages)

    # -- messages -----------------------------------------------------------------

    def message_list(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The messages as views show them."""
        if not self:
            return messages
        return [self.message(message) for message in messages]

    def message(self, message: dict[str, Any]) -> dict[str, Any]:
        """One UIMessage as views show it."""
        parts = message.get("parts")
        if not self or not isinstance(parts, list):
            return message
        kinds = self.messages.get(message.get("id"), set())  # type: ignore[arg-type]
        shown = [self.part(part, kinds) for part in parts]
        if all(a is b for a, b in zip(shown, parts, strict=True)):
            return message
        return {**message, "parts": shown}

    def part(self, part: Any, kinds: set[str] = frozenset()) -> Any:  # type: ignore[assignment]
        """One message part as views show it (``kinds``: the part kinds redacted in its message)."""
        if not isinstance(part, dict):
            return part
        if is_tool_part(part):
            fields = self.tools.get(part.get("toolCallId"), set())  # type: ignore[arg-type]
            return _tool_part(part, fields) if fields else part
        if part.get("type") in kinds:
            return _content_part(part)
        return part

    def state(self, state: ConversationState) -> ConversationState:
        """A shallow copy of ``state`` whose messages (and steering queue) are as views show them."""
        if not self:
            return state
        return dataclasses.replace(
            state,
            messages=self.message_list(state.messages),
            steering=self.message_list(state.steering),
        )

    # -- chunks and events ----------------------------------------------------------

    def chunk(self, chunk: Any, message_id: str | None, seen: set[Any]) -> Any:
        """One stream chunk of message ``message_id`` as views show it.

        ``seen`` remembers the streamed parts already marked ``[redacted]`` (pass
        the same set for every chunk of a stream): their later deltas are empty,
        so a client replaying the chunks sees ``[redacted]`` once per part.
        """
        if not self or not isinstance(chunk, dict):
            return chunk
        kind = chunk.get("type")
        call = chunk.get("toolCallId")
        if isinstance(call, str) and call in self.tools:
            return _tool_chunk(chunk, self.tools[call], seen)
        kinds = self.messages.get(message_id) if message_id is not None else None
        if not kinds or not isinstance(kind, str):
            return chunk
        part_kind = _CHUNK_KINDS.get(kind, kind)
        if part_kind not in kinds or kind in ("start", "finish", "start-step", "finish-step"):
            return chunk
        if kind.endswith("-delta"):
            first = (part_kind, chunk.get("id")) not in seen
            seen.add((part_kind, chunk.get("id")))
            return _without_metadata({**chunk, "delta": REDACTED if first else ""})
        if kind.endswith(("-start", "-end")):
            return _without_metadata(chunk)
        return _content_part(chunk)

    def event(self, event: ConversationEvent, message_id: str | None, seen: set[Any]) -> Any:
        """One event as views show it (``message_id``: the message its chunks stream into)."""
        from chatledger.domain.events import (
            ChunksReceived,
            MessageAppended,
            SteeringQueued,
            ToolOutputAdded,
        )

        if not self:
            return event
        if isinstance(event, (MessageAppended, SteeringQueued)):
            shown = self.message(event.message)
            return event if shown is event.message else event.model_copy(update={"message": shown})
        if isinstance(event, ChunksReceived):
            chunks = [self.chunk(chunk, message_id, seen) for chunk in event.chunks]
            if all(a is b for a, b in zip(chunks, event.chunks, strict=True)):
                return event
            return event.model_copy(update={"chunks": chunks})
        if isinstance(event, ToolOutputAdded) and "output" in self.tools.get(
            event.tool_call_id, set()
        ):
            update = {
                "output": None if event.output is None else REDACTED,
                "error_text": None if event.error_text is None else REDACTED,
            }
            return event.model_copy(update=update)
        return event


def batch_message_id(event: Any, before: ConversationState) -> str | None:
    """The message a chunk batch streams into: the one its ``start`` names, else the open stream's."""
    for chunk in getattr(event, "chunks", ()):
        if isinstance(chunk, dict) and chunk.get("type") == "start":
            named = chunk.get("messageId")
            if isinstance(named, str):
                return named
    stream = before.stream
    if stream is None or stream.message_index >= len(before.messages):
        return None
    found = before.messages[stream.message_index].get("id")
    return found if isinstance(found, str) else None


def mask_events(events: Iterable[ConversationEvent], masks: Masks) -> Iterator[Any]:
    """A conversation's events from its first, as views show them (for replays of the whole log)."""
    from chatledger.domain.events import ChunksReceived, StreamOpened

    message_id: str | None = None
    seen: set[Any] = set()
    for event in events:
        if not masks:
            yield event
            continue
        if isinstance(event, StreamOpened):
            message_id, seen = event.message_id, set()
        elif isinstance(event, ChunksReceived):
            for chunk in event.chunks:
                if isinstance(chunk, dict) and chunk.get("type") == "start":
                    named = chunk.get("messageId")
                    message_id = named if isinstance(named, str) else message_id
        yield masks.event(event, message_id, seen)


# -- how a redacted thing looks ---------------------------------------------------------


def _tool_part(part: dict[str, Any], fields: set[str]) -> dict[str, Any]:
    shown = dict(part)
    if "input" in fields:
        for key in ("input", "rawInput"):
            if key in shown:
                shown[key] = REDACTED
        if "rawInput" in part and "errorText" in shown:
            shown["errorText"] = REDACTED  # the error of an invalid input quotes it
    if "output" in fields:
        for key in ("output", "errorText"):
            if shown.get(key) is not None:
                shown[key] = REDACTED
    return shown


def _tool_chunk(chunk: dict[str, Any], fields: set[str], seen: set[Any]) -> dict[str, Any]:
    kind = chunk.get("type")
    if "input" in fields:
        if kind == "tool-input-delta":
            first = ("input", chunk["toolCallId"]) not in seen
            seen.add(("input", chunk["toolCallId"]))
            return {**chunk, "inputTextDelta": f'"{REDACTED}"' if first else ""}
        if kind in ("tool-input-available", "tool-input-error"):
            shown = {**chunk, "input": REDACTED}
            if "errorText" in chunk:
                shown["errorText"] = REDACTED
            return shown
    if "output" in fields:
        if kind == "tool-output-available":
            return {**chunk, "output": REDACTED}
        if kind == "tool-output-error":
            return {**chunk, "errorText": REDACTED}
    return chunk


def _content_part(part: dict[str, Any]) -> dict[str, Any]:
    """A content part (or the chunk that carried it whole) with its content replaced."""
    kind = part.get("type")
    shown = _without_metadata(part)
    if kind in ("text", "reasoning"):
        shown["text"] = REDACTED
    elif kind in ("file", "reasoning-file"):
        shown.pop("filename", None)
        shown.update(mediaType="text/plain", url=_REDACTED_URL)
    elif kind == "steering-message":
        shown["parts"] = [{"type": "text", "text": REDACTED}]
    else:  # sources, data parts, custom parts and kinds added later: every field but the names
        for key in list(shown):
            if key not in ("type", "id", "sourceId", "state", "kind", "transient"):
                shown[key] = REDACTED
    return shown


def _without_metadata(part: dict[str, Any]) -> dict[str, Any]:
    """A copy without provider metadata (it may hold the content, e.g. a reasoning signature)."""
    return {k: v for k, v in part.items() if k != "providerMetadata"}
