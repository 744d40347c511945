"""The audit timeline (docs/behaviour.md §5 ``history``): one human-readable entry per conversation event.

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
  (an approval was denied, by a person or on the stream), ``error`` (a tool
  error was added, or a stream ended ``errored``), ``retracted`` (an AI SDK 7
  ``reset-step`` took chunks back from the view: they stay in the log, and the
  batch's details list their positions), ``redacted`` (a later ``Redacted``
  event hides content of this event: the entry shows ``[redacted]``).
- ``summary``: one line of at most ``SUMMARY_LIMIT`` characters, long texts
  elided with "…"; control characters, lone surrogates and bidirectional
  overrides are replaced, so it prints safely.
- ``details``: the event's data as JSON (camelCase keys), plus what the state
  before it tells (tool names, the cut messages); for a chunk batch every chunk
  with its stream position, verdict, age and, when refused, the reason.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, Final

from chatledger.domain._timeline_describers import describer_of, raw_details
from chatledger.domain._timeline_text import SUMMARY_LIMIT, _line
from chatledger.domain.conversation import ConversationState
from chatledger.domain.events import ConversationEvent
from chatledger.domain.redaction import Masks, batch_message_id

__all__ = ["KINDS", "MARKS", "SUMMARY_LIMIT", "TimelineEntry", "compact", "describe"]

KINDS: Final = (
    "conversation-started",
    "message-appended",
    "stream-opened",
    "chunks",
    "stream-renewed",
    "stream-closed",
    "approval-responded",
    "tool-output-added",
    "continuation-requested",
    "continuation-claimed",
    "messages-cut",
    "title-set",
    "metadata-set",
    "steering-queued",
    "redacted",
    "owner-set",
    "continuation-retired",
    "conversation-erased",
    "branch-switched",
    "conversation-forked",
    "fork-made",
)
"""Every timeline kind, one per event class, in the order of ``events.py`` (then ``owner_events.py``,
``erasure.py`` and ``branch_events.py``)."""

MARKS: Final = ("replay", "refused", "denied", "error", "retracted", "redacted")
"""Every mark an entry may carry (see the module docstring)."""

# ``SUMMARY_LIMIT`` (the longest summary, in characters) lives with the text helpers.


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
    """Flags from ``MARKS``: replay, refused, denied, error, retracted, redacted."""

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


def describe(
    event: ConversationEvent, before: ConversationState, masks: Masks | None = None
) -> TimelineEntry:
    """The timeline entry of ``event``, given the conversation state just before it.

    Never raises for an event the log can hold: data that does not fit the
    state (an unknown tool call, an empty batch) is described as it is.
    ``masks`` (the conversation's redactions, ``chatledger.domain.redaction``)
    hide redacted content from the entry; by default those ``before`` holds.
    """
    if masks is None and before.redactions:
        masks = Masks(before.redactions)
    hidden = False
    if masks:
        shown = masks.event(event, batch_message_id(event, before), set())
        event, hidden = shown, shown is not event
        before = masks.state(before)
    kind, describer = describer_of(event)
    try:
        summary, details, marks = describer(event, before)
    except Exception as error:  # a last resort: the audit must list every event
        summary = f"{type(event).__name__} (no summary: {type(error).__name__})"
        details, marks = raw_details(event), ()
    if hidden:
        marks = (*marks, "redacted")
    return TimelineEntry(
        position=event.originator_version,
        time=_utc(event.timestamp),
        actor=event.actor or None,
        kind=kind,
        summary=_line(summary),
        details=details,
        marks=marks,
    )


def compact(entry: TimelineEntry) -> TimelineEntry:
    """The entry as the read model keeps it: a chunk batch lists only its replayed and refused chunks.

    The applied chunks stay in the log (the event at ``position``); the
    compact details count them by type (``chunkTypes``) and say
    ``"compact": true``. ``describe`` gives the full details again.
    """
    rows = entry.details.get("chunks")
    if entry.kind != "chunks" or not isinstance(rows, list):
        return entry
    types: dict[str, int] = {}
    for row in rows:
        chunk = row.get("chunk") if isinstance(row, dict) else None
        kind = str(chunk.get("type")) if isinstance(chunk, dict) else "?"
        types[kind] = types.get(kind, 0) + 1
    kept = [row for row in rows if isinstance(row, dict) and row.get("verdict") != "applied"]
    details = {**entry.details, "chunks": kept, "chunkTypes": types, "compact": True}
    return replace(entry, details=details)


def _utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
