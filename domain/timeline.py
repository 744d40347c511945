"""The audit timeline (SPEC §5 ``history``): one human-readable entry per conversation event.

``describe(event, before)`` is pure: it reads the event and the conversation
state just before the event is applied (for tool names, message roles, the
open stream) and never changes either.

Conventions:

- ``kind``: one stable kebab-case name per event class, listed in ``KINDS``.
- ``actor``: the event's own ``actor`` (every event records one: the person
  answering an approval, the stream's actor for streams and chunk batches, the
  worker for a claim), or None when it is empty.
- ``marks``: a few flags to filter and highlight on, from ``MARKS``: ``replay``
  and ``refused`` (a chunk batch holds replayed or refused chunks), ``denied``
  (an approval was denied), ``error`` (a tool error was added, or a stream
  ended ``errored``).
- ``summary``: one line of at most ``SUMMARY_LIMIT`` characters, long texts
  elided with "…"; control characters, lone surrogates and bidirectional
  overrides are replaced, so it prints safely.
- ``details``: the event's data as JSON (camelCase keys), plus what the state
  before it tells (tool names, the cut messages); for a chunk batch every chunk
  with its stream position, verdict, age and, when refused, the reason.
"""

from __future__ import annotations

import copy
import json
import math
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from chatledger.domain.conversation import ConversationState
from chatledger.domain.events import (
    ChunksReceived,
    ContinuationClaimed,
    ContinuationRequested,
    ConversationEvent,
    ConversationStarted,
    MessageAppended,
    MessagesCut,
    StreamClosed,
    StreamOpened,
    ToolApprovalResponded,
    ToolOutputAdded,
)
from chatledger.domain.tool_outputs import DEFAULT_DENIAL_TEXT
from chatledger.domain.tool_parts import is_tool_part, tool_name

__all__ = ["KINDS", "MARKS", "SUMMARY_LIMIT", "TimelineEntry", "describe"]

KINDS: Final = (
    "conversation-started",
    "message-appended",
    "stream-opened",
    "chunks",
    "stream-closed",
    "approval-responded",
    "tool-output-added",
    "continuation-requested",
    "continuation-claimed",
    "messages-cut",
)
"""Every timeline kind, one per event class, in the order of ``events.py``."""

MARKS: Final = ("replay", "refused", "denied", "error")
"""Every mark an entry may carry (see the module docstring)."""

SUMMARY_LIMIT: Final = 160
"""Longest summary, in characters."""

_Described = tuple[str, dict[str, Any], tuple[str, ...]]


@dataclass(frozen=True)
class TimelineEntry:
    """One event of a conversation, as the audit timeline shows it."""

    position: int
    """The event's position in the conversation's log (``originator_version``, from 1)."""
    time: datetime
    """When the event was recorded (UTC)."""
    actor: str | None
    """Who caused it (the event's ``actor``), or None when the event names nobody."""
    kind: str
    """What happened: one of ``KINDS``."""
    summary: str
    """One line for people, at most ``SUMMARY_LIMIT`` characters."""
    details: dict[str, Any]
    """The event's data needed to audit it, as JSON."""
    marks: tuple[str, ...] = ()
    """Flags from ``MARKS``: replay, refused, denied, error."""

    def to_json(self) -> dict[str, Any]:
        """The entry as a JSON object (time in ISO 8601), e.g. for a JSON Lines export."""
        return {
            "position": self.position,
            "time": self.time.isoformat(),
            "actor": self.actor,
            "kind": self.kind,
            "summary": self.summary,
            "details": self.details,
            "marks": list(self.marks),
        }


def describe(event: ConversationEvent, before: ConversationState) -> TimelineEntry:
    """The timeline entry of ``event``, given the conversation state just before it.

    Never raises for an event the log can hold: data that does not fit the
    state (an unknown tool call, an empty batch) is described as it is.
    """
    kind, describer = _describer_of(event)
    try:
        summary, details, marks = describer(event, before)
    except Exception as error:  # a last resort: the audit must list every event
        summary = f"{type(event).__name__} (no summary: {type(error).__name__})"
        details, marks = _raw_details(event), ()
    return TimelineEntry(
        position=event.originator_version,
        time=_utc(event.timestamp),
        actor=event.actor or None,
        kind=kind,
        summary=_line(summary),
        details=details,
        marks=marks,
    )


# -- one describer per event class ------------------------------------------------


def _started(event: ConversationStarted, before: ConversationState) -> _Described:
    summary = f"conversation {_id(event.chat_id)} started in tenant {_id(event.tenant)}"
    if isinstance(event.metadata, dict) and event.metadata:
        summary += f" (metadata: {', '.join(_id(key) for key in event.metadata)})"
    details = {"tenant": event.tenant, "chatId": event.chat_id, "metadata": event.metadata}
    return summary, details, ()


def _message(event: MessageAppended, before: ConversationState) -> _Described:
    message = event.message
    role, message_id = message.get("role"), message.get("id")
    parts = message.get("parts")
    content = _parts_digest(parts if isinstance(parts, list) else [])
    summary = f"{_id(role)} message {_id(message_id)}: {content or '(no parts)'}"
    details = {"messageId": message_id, "role": role, "message": message}
    return summary, details, ()


def _opened(event: StreamOpened, before: ConversationState) -> _Described:
    stream, message = _id(event.stream_id), _id(event.message_id)
    if event.continuation:
        summary = f"stream {stream} opened continuing message {message}"
        usual = "continuation"
    else:
        summary = f"stream {stream} opened for a new assistant message {message}"
        usual = "submit-message"
    notes = [] if event.trigger == usual else [_id(event.trigger)]
    if event.request_id is not None:
        notes.append(f"continuation request {_id(event.request_id)}")
    if notes:
        summary += f" ({', '.join(notes)})"
    details = {
        "streamId": event.stream_id,
        "messageId": event.message_id,
        "continuation": event.continuation,
        "trigger": event.trigger,
        "requestId": event.request_id,
    }
    return summary, details, ()


def _closed(event: StreamClosed, before: ConversationState) -> _Described:
    summary = f"stream {_id(event.stream_id)} closed: {_id(event.outcome)}"
    if event.reason:
        summary += f" ({event.reason})"
    stream = before.stream if _stream_matches(before, event.stream_id) else None
    details = {
        "streamId": event.stream_id,
        "outcome": event.outcome,
        "reason": event.reason,
        "messageId": _stream_message_id(before) if stream else None,
        "chunkCount": stream.next_seq if stream else None,
    }
    return summary, details, ("error",) if event.outcome == "errored" else ()


def _approval(event: ToolApprovalResponded, before: ConversationState) -> _Described:
    part, where = _tool(before, event.tool_call_id)
    verb = "approved" if event.approved else "denied"
    summary = f"{_who(event)} {verb} {_call(part, event.tool_call_id)}"
    if event.reason:
        summary += f": {event.reason}"
    details = {
        "toolCallId": event.tool_call_id,
        "approvalId": event.approval_id,
        "approved": event.approved,
        "reason": event.reason,
        "autoContinue": event.auto_continue,
        "toolName": _name(part),
        "messageId": where,
        "input": copy.deepcopy(part.get("input")) if part else None,
    }
    return summary, details, () if event.approved else ("denied",)


def _output(event: ToolOutputAdded, before: ConversationState) -> _Described:
    part, where = _tool(before, event.tool_call_id)
    call = _call(part, event.tool_call_id)
    if event.state == "output-error":
        text = event.error_text
        shown = text if text is not None else f"{DEFAULT_DENIAL_TEXT} (default text)"
        summary = f"{_who(event)} added error for {call}: {shown}"
    else:
        summary = f"{_who(event)} added output for {call}: {_preview(event.output, 60)}"
    details = {
        "toolCallId": event.tool_call_id,
        "state": event.state,
        "output": event.output,
        "errorText": event.error_text,
        "autoContinue": event.auto_continue,
        "toolName": _name(part),
        "messageId": where,
    }
    return summary, details, ("error",) if event.state == "output-error" else ()


def _requested(event: ContinuationRequested, before: ConversationState) -> _Described:
    summary = (
        f"continuation {_id(event.request_id)} requested for message "
        f"{_id(event.message_id)}: {event.cause}"
    )
    details = {"requestId": event.request_id, "messageId": event.message_id, "cause": event.cause}
    return summary, details, ()


def _claimed(event: ContinuationClaimed, before: ConversationState) -> _Described:
    lease = event.lease_seconds
    summary = (
        f"{_id(event.worker)} claimed continuation {_id(event.request_id)} (lease {lease:g} s)"
    )
    try:
        until: str | None = (event.timestamp + timedelta(seconds=lease)).isoformat()
    except (OverflowError, ValueError):  # an absurd lease is recorded as given
        until = None
    details = {
        "requestId": event.request_id,
        "worker": event.worker,
        "leaseSeconds": lease if math.isfinite(lease) else str(lease),
        "leaseUntil": until,
    }
    return summary, details, ()


def _cut(event: MessagesCut, before: ConversationState) -> _Described:
    messages = before.messages
    index = next((i for i, m in enumerate(messages) if m.get("id") == event.from_message_id), None)
    cut = messages[index : index + max(event.count, 0)] if index is not None else []
    noun = "message" if event.count == 1 else "messages"
    summary = f"{_TRIGGER_LABELS.get(event.trigger, _id(event.trigger))}: cut {event.count} {noun}"
    if index is None:
        summary += f" from {_id(event.from_message_id)}"
    else:
        kept = f"after {_id(messages[index - 1].get('id'))}" if index else "from the start"
        summary += f" {kept} ({_listed([m.get('id') for m in cut])})"
    if event.reason:
        summary += f": {event.reason}"
    details = {
        "fromMessageId": event.from_message_id,
        "count": event.count,
        "trigger": event.trigger,
        "reason": event.reason,
        "cutMessages": copy.deepcopy(cut),
    }
    return summary, details, ()


_TRIGGER_LABELS: Final = {"regenerate-message": "regenerate", "edit": "edit"}


# -- chunk batches ----------------------------------------------------------------


def _chunks(event: ChunksReceived, before: ConversationState) -> _Described:
    verdicts = _verdicts(event)
    rows: list[dict[str, Any]] = []
    applied: list[Any] = []
    for index, chunk in enumerate(event.chunks):
        verdict, reason = verdicts.get(index, ("applied", None))
        age = event.ages_ms[index] if index < len(event.ages_ms) else None
        row = {"position": event.first_seq + index, "verdict": verdict, "ageMs": age}
        if verdict == "refused":
            row["reason"] = reason
        row["chunk"] = chunk
        rows.append(row)
        if verdict == "applied":
            applied.append(chunk)
    replays = [row for row in rows if row["verdict"] == "replay"]
    refused = [row for row in rows if row["verdict"] == "refused"]
    digest = _chunk_digest(applied, before, event.stream_id)
    summary = _batch_summary(len(rows), digest, replays, refused)
    matches = _stream_matches(before, event.stream_id)
    details = {
        "streamId": event.stream_id,
        "messageId": _stream_message_id(before) if matches else None,
        "firstSeq": event.first_seq,
        "count": len(rows),
        "replays": len(replays),
        "refused": len(refused),
        "chunks": rows,
    }
    marks = (("replay",) if replays else ()) + (("refused",) if refused else ())
    return summary, details, marks


def _verdicts(event: ChunksReceived) -> dict[int, tuple[str, str | None]]:
    """Batch index -> (verdict, refusal reason) of each chunk that was not applied."""
    found: dict[int, tuple[str, str | None]] = {index: ("replay", None) for index in event.replays}
    for index, reason in event.refusals:  # refused wins, as in ChunksReceived.verdicts()
        found[index] = ("refused", reason)
    return found


def _batch_summary(
    count: int,
    digest: list[tuple[int, str]],
    replays: list[dict[str, Any]],
    refused: list[dict[str, Any]],
) -> str:
    head = f"{count} chunk" if count == 1 else f"{count} chunks"
    tails = []
    if replays:
        noun = "replay" if len(replays) == 1 else "replays"
        calls = list(dict.fromkeys(_chunk_field(row, "toolCallId") for row in replays))
        named = f" ({_listed(calls, 2)})" if None not in calls else ""
        tails.append(f"{len(replays)} {noun} ignored{named}")
    if refused:
        first = _clip(_refusal(refused[0]), 60)
        more = f"; +{len(refused) - 1} more" if len(refused) > 1 else ""
        tails.append(f"{len(refused)} refused ({first}{more})")
    tail = "".join(f"; {text}" for text in tails)
    body = _fit(digest, SUMMARY_LIMIT - len(head) - len(tail) - 2)
    return f"{head}: {body}{tail}" if body else f"{head}{tail}"


def _fit(items: list[tuple[int, str]], budget: int) -> str:
    """The items that fit in ``budget`` characters, most important (lowest rank) first, in order.

    Items left out are shown as "…"; a first item too long on its own is clipped.
    """
    if not items:
        return ""
    chosen: set[int] = set()
    used = 0
    for index in sorted(range(len(items)), key=lambda i: items[i][0]):
        cost = len(items[index][1]) + (2 if chosen else 0)
        if used + cost <= budget - (3 if len(chosen) + 1 < len(items) else 0):
            chosen.add(index)
            used += cost
    if not chosen:
        return _clip(items[0][1], budget)
    shown = [text for index, (_, text) in enumerate(items) if index in chosen]
    return ", ".join(shown + (["…"] if len(chosen) < len(items) else []))


def _chunk_field(row: dict[str, Any], key: str) -> Any:
    chunk = row["chunk"]
    return chunk.get(key) if isinstance(chunk, dict) else None


def _refusal(row: dict[str, Any]) -> str:
    reason = str(row.get("reason") or "no reason given")
    kind = _chunk_field(row, "type")
    return f"{kind}: {reason}" if isinstance(kind, str) else reason


class _Digest:
    """What a run of applied chunks did, item by item in order of first appearance."""

    def __init__(self, before: ConversationState, message_id: Any) -> None:
        self.before = before
        self.message_id = message_id
        """The message the stream writes, when a ``start`` may still rename it (else None)."""
        self.silent: dict[str, None] = {}
        """Kinds of the chunks not worth a mention (listed when nothing else happened)."""
        self.texts: dict[str, list[str]] = {}
        """``text``/``reasoning`` -> the deltas."""
        self.calls: dict[str, list[str]] = {}
        """toolCallId -> milestones."""
        self.names: dict[str, str] = {}
        """toolCallId -> tool name, from the batch's own chunks."""
        self.others: dict[str, int] = {}
        """label -> how many."""
        self.order: list[tuple[str, str]] = []

    def add(self, chunk: Any) -> None:
        kind = chunk.get("type") if isinstance(chunk, dict) else None
        if not isinstance(kind, str):
            return
        if kind == "start" and self._renames(chunk.get("messageId")):
            self._other(f"start of message {_id(chunk['messageId'])}")
        elif kind in _SILENT:
            self.silent[_id(kind)] = None
        elif kind in ("text-delta", "reasoning-delta"):
            self._text(kind.split("-")[0], chunk.get("delta"))
        elif kind in _MILESTONES and isinstance(chunk.get("toolCallId"), str):
            self._milestone(chunk, kind)
        else:
            self._other(_label(chunk, kind))

    def _renames(self, message_id: Any) -> bool:
        """Whether a ``start`` names another message (the fold then renames the new message)."""
        if self.message_id is None or not isinstance(message_id, str):
            return False
        renamed = bool(message_id != self.message_id)
        self.message_id = message_id
        return renamed

    def _text(self, key: str, delta: Any) -> None:
        if key not in self.texts:
            self.texts[key] = []
            self.order.append(("text", key))
        self.texts[key].append(delta if isinstance(delta, str) else "")

    def _milestone(self, chunk: dict[str, Any], kind: str) -> None:
        call: str = chunk["toolCallId"]
        if isinstance(chunk.get("toolName"), str):
            self.names.setdefault(call, chunk["toolName"])
        milestone = _MILESTONES[kind]
        if kind == "tool-output-available" and chunk.get("preliminary") is True:
            milestone = "preliminary output"
        if call not in self.calls:
            self.calls[call] = []
            self.order.append(("call", call))
        if milestone not in self.calls[call][-1:]:
            self.calls[call].append(milestone)

    def _other(self, label: str) -> None:
        if label not in self.others:
            self.others[label] = 0
            self.order.append(("other", label))
        self.others[label] += 1

    def items(self) -> list[tuple[int, str]]:
        """(rank, text) of each item: tool calls first, then errors, texts, the rest."""
        if not self.order:
            return [(3, ", ".join(self.silent))] if self.silent else []
        return [(self._rank(what, key), self._render(what, key)) for what, key in self.order]

    @staticmethod
    def _rank(what: str, key: str) -> int:
        if what == "call":
            return 0
        return 1 if key.startswith("error") else 2 if what == "text" else 3

    def _render(self, what: str, key: str) -> str:
        if what == "text":
            return f"{key} {_quote(''.join(self.texts[key]), 30)}"
        if what == "call":
            steps = self.calls[key]
            if len(steps) > 1:
                steps = [step for step in steps if step != "input streaming"]
            part, _ = _tool(self.before, key)
            name = self.names.get(key) or _name(part)
            return f"tool call {_named_call(name, key)} {' → '.join(steps)}"
        count = self.others[key]
        return key if count == 1 else f"{key} x{count}"


def _chunk_digest(
    applied: list[Any], before: ConversationState, stream_id: str
) -> list[tuple[int, str]]:
    stream = before.stream if _stream_matches(before, stream_id) else None
    renamable = stream is not None and not stream.continuation
    digest = _Digest(before, _stream_message_id(before) if renamable else None)
    for chunk in applied:
        digest.add(chunk)
    return digest.items()


_SILENT: Final = frozenset(
    {
        "start",
        "text-start",
        "text-end",
        "reasoning-start",
        "reasoning-end",
        "start-step",
        "finish-step",
    }
)
_MILESTONES: Final = {
    "tool-input-start": "input streaming",
    "tool-input-delta": "input streaming",
    "tool-input-available": "input ready",
    "tool-input-error": "input error",
    "tool-approval-request": "approval requested",
    "tool-output-available": "output",
    "tool-output-error": "output error",
    "tool-output-denied": "denied",
}


def _label(chunk: dict[str, Any], kind: str) -> str:
    """A short label for a chunk that is neither text nor a tool call's."""
    if kind == "finish" and isinstance(chunk.get("finishReason"), str):
        return f"finish ({_id(chunk['finishReason'])})"
    if kind == "error":
        return f"error {_quote(str(chunk.get('errorText', '')), 40)}"
    if kind in ("source-url", "source-document"):
        return "source"
    if kind == "message-metadata":
        return "metadata"
    return _id(kind)


# -- message parts ----------------------------------------------------------------


def _parts_digest(parts: list[Any]) -> str:
    """``"text…", file x2, tool call `x` (id) state`` for a whole message's parts."""
    texts = [p["text"] for p in parts if _is_part(p, "text") and isinstance(p.get("text"), str)]
    items = [_quote(" ".join(texts), 60)] if texts else []
    others: dict[str, int] = {}
    for part in parts:
        if not isinstance(part, dict) or part.get("type") in ("text", "step-start"):
            continue
        if is_tool_part(part):
            call = part.get("toolCallId")
            items.append(f"tool call {_call(part, call)} {_id(part.get('state'))}")
        else:
            label = _id(part.get("type"))
            others[label] = others.get(label, 0) + 1
    items += [label if n == 1 else f"{label} x{n}" for label, n in others.items()]
    return ", ".join(items)


def _is_part(part: Any, kind: str) -> bool:
    return isinstance(part, dict) and part.get("type") == kind


# -- state look-ups ---------------------------------------------------------------


def _tool(state: ConversationState, call_id: Any) -> tuple[dict[str, Any] | None, str | None]:
    """The tool part with this id in ``state`` and its message's id, or (None, None)."""
    if not isinstance(call_id, str):
        return None, None
    try:
        where = state.tool_index.get(call_id)  # the state's own index (built once, kept up to date)
        if where is None:
            return None, None
        message = state.messages[where[0]]
        part: dict[str, Any] = message["parts"][where[1]]
    except (LookupError, TypeError, AttributeError):  # a state that does not fit the event
        return None, None
    return part, message.get("id")


def _name(part: dict[str, Any] | None) -> str | None:
    try:
        return tool_name(part) if part is not None else None
    except (KeyError, ValueError):
        return None


def _stream_matches(state: ConversationState, stream_id: str) -> bool:
    return state.stream is not None and state.stream.stream_id == stream_id


def _stream_message_id(state: ConversationState) -> Any:
    assert state.stream is not None
    index = state.stream.message_index
    return state.messages[index].get("id") if 0 <= index < len(state.messages) else None


# -- text -------------------------------------------------------------------------


def _call(part: dict[str, Any] | None, call_id: Any) -> str:
    return _named_call(_name(part), call_id)


def _named_call(name: str | None, call_id: Any) -> str:
    """```name` (call_id)``, or ``call_id`` alone when the tool is unknown."""
    return f"`{_id(name)}` ({_id(call_id)})" if name is not None else _id(call_id)


def _who(event: ConversationEvent) -> str:
    return _id(event.actor) if event.actor else "someone"


def _id(value: Any) -> str:
    return _clip(value if isinstance(value, str) else str(value), 40)


def _quote(text: str, limit: int) -> str:
    return f'"{_clip(" ".join(text.split()), limit)}"'


def _listed(ids: list[Any], most: int = 3) -> str:
    shown = ", ".join(_id(value) for value in ids[:most])
    return shown + (", …" if len(ids) > most else "")


def _preview(value: Any, limit: int) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return _clip(text, limit)


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[: max(limit - 1, 0)] + "…"


def _line(text: str) -> str:
    """``text`` on one line of at most ``SUMMARY_LIMIT`` characters, safe to print and export.

    Whitespace runs become one space; control characters and bidirectional
    overrides become U+FFFD, lone surrogates "?".
    """
    text = " ".join(text.split())
    if not text.isprintable():
        text = "".join(_UNSAFE.get(c, c) if unicodedata.category(c) != "Cc" else "�" for c in text)
        text = text.encode("utf-8", "replace").decode("utf-8")  # lone surrogates -> "?"
    return _clip(text, SUMMARY_LIMIT)


_UNSAFE: Final = {c: "�" for c in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"}
"""Bidirectional overrides, which could make a summary read differently than it is."""


# -- dispatch ---------------------------------------------------------------------


def _utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _raw_details(event: ConversationEvent) -> dict[str, Any]:
    base = {"originator_id", "originator_version", "timestamp", "actor"}
    try:
        return event.model_dump(mode="json", exclude=base)
    except Exception:
        return {}


def _fallback(event: Any, before: ConversationState) -> _Described:
    return f"{type(event).__name__} event", _raw_details(event), ()


_Describer = Callable[[Any, ConversationState], _Described]
_DESCRIBERS: Final[tuple[tuple[type[ConversationEvent], str, _Describer], ...]] = (
    (ConversationStarted, "conversation-started", _started),
    (MessageAppended, "message-appended", _message),
    (StreamOpened, "stream-opened", _opened),
    (ChunksReceived, "chunks", _chunks),
    (StreamClosed, "stream-closed", _closed),
    (ToolApprovalResponded, "approval-responded", _approval),
    (ToolOutputAdded, "tool-output-added", _output),
    (ContinuationRequested, "continuation-requested", _requested),
    (ContinuationClaimed, "continuation-claimed", _claimed),
    (MessagesCut, "messages-cut", _cut),
)


def _describer_of(event: ConversationEvent) -> tuple[str, _Describer]:
    """The kind and describer of ``event``; an event class added later gets a generic entry."""
    for cls, kind, describer in _DESCRIBERS:
        if isinstance(event, cls):
            return kind, describer
    name = type(event).__name__
    kebab = "".join(f"-{c.lower()}" if c.isupper() else c for c in name).lstrip("-")
    return kebab, _fallback
