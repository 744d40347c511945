"""The grouped audit timeline: each stream's run of chunk batches folded into one row, and its pages.

An auditor reads a conversation for its decisions (approvals, denials, tool
outputs) and its lifecycle (streams opened and closed, edits, redactions,
erasure). A streamed answer adds one ``chunks`` entry per batch the writer
flushed, often hundreds ("1 chunk: text …"), which would bury those. ``group``
is a pure fold over timeline entries, in log order: every entry but a chunk
batch stays a row of its own, and each run of consecutive batches of one
stream becomes one row with the counts, the first and last position and time,
a short summary (the text preview, the tool calls, any decision made on the
stream) and the stream's outcome. The row keeps its entries (``entries``): the
full detail is one step away, and ``history`` still lists every event.

The order stays the log's: the audit is evidence of what happened in which
order, and a position cursor pages it stably (``page``). Decisions lead by
being rows of their own among few rows, marked, and ``is_decision`` picks
them out for a list of their own.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final

from chatledger.domain._timeline_chunks import _SILENT, _fit
from chatledger.domain._timeline_text import SUMMARY_LIMIT, _clip, _id, _line
from chatledger.domain.timeline import KINDS, MARKS, TimelineEntry

__all__ = [
    "DECISION_KINDS",
    "LIFECYCLE_KINDS",
    "TimelinePage",
    "TimelineRow",
    "group",
    "is_decision",
    "one_per_event",
    "page",
]

DECISION_KINDS: Final = ("approval-responded", "tool-output-added")
"""Entries that record a decision: a person's (or a policy's) answer to an approval, a tool's result."""

LIFECYCLE_KINDS: Final = tuple(kind for kind in KINDS if kind not in (*DECISION_KINDS, "chunks"))
"""Every other kind but ``chunks``: the conversation's lifecycle (streams, edits, redactions, erasure)."""


@dataclass(frozen=True)
class TimelineRow:
    """One row of the grouped timeline: one event's entry, or one stream's run of chunk batches."""

    position: int
    """The (first) entry's position in the log."""
    last_position: int
    """The last entry's position (``position`` for a single event)."""
    time: datetime
    """When the (first) entry was recorded (UTC)."""
    last_time: datetime
    """When the last entry was recorded."""
    actor: str | None
    """Who caused it (for a run: its first batch's actor, the stream's)."""
    kind: str
    """The entry's kind; ``chunks`` for a run of batches."""
    summary: str
    """One line for people, at most ``SUMMARY_LIMIT`` characters."""
    details: dict[str, Any]
    """The entry's details; for a run: the stream, counts, outcome and decisions made on it."""
    marks: tuple[str, ...] = ()
    """The entry's marks; for a run every mark of its batches, in ``MARKS`` order."""
    entries: tuple[TimelineEntry, ...] = field(default=(), repr=False)
    """The entries the row stands for, in order (one, or the run's batches)."""

    @property
    def batches(self) -> int:
        """How many entries the row stands for."""
        return len(self.entries)

    def covers(self, position: int) -> bool:
        """Whether the event at ``position`` is one of this row's."""
        return self.position <= position <= self.last_position

    def to_json(self) -> dict[str, Any]:
        """The row as JSON: an entry's fields, plus ``lastPosition``, ``lastTime`` and ``batches``."""
        return {
            "position": self.position,
            "lastPosition": self.last_position,
            "time": self.time.isoformat(),
            "lastTime": self.last_time.isoformat(),
            "actor": self.actor,
            "kind": self.kind,
            "summary": self.summary,
            "details": self.details,
            "marks": list(self.marks),
            "batches": self.batches,
        }


@dataclass(frozen=True)
class TimelinePage:
    """Rows of the grouped timeline and where the next page starts."""

    rows: list[TimelineRow]
    next_after: int | None
    """Pass as ``after`` for the next page; None when this page is the last."""


def group(
    entries: Iterable[TimelineEntry], closes: Iterable[TimelineEntry] = ()
) -> list[TimelineRow]:
    """The grouped rows of ``entries`` (in log order), one per event but one per run of chunk batches.

    A run is the consecutive ``chunks`` entries of one stream; any other entry
    (a renewal, an approval) ends it. Its outcome is that of the stream's
    ``stream-closed`` entry among ``entries`` or ``closes`` (None when in neither:
    the stream is open, or its close was left out).
    """
    listed = list(entries)
    outcomes = {
        entry.details.get("streamId"): entry.details.get("outcome")
        for entry in [*closes, *listed]
        if entry.kind == "stream-closed"
    }
    rows: list[TimelineRow] = []
    run: list[TimelineEntry] = []
    for entry in listed:
        if run and (entry.kind != "chunks" or _stream(entry) != _stream(run[0])):
            rows.append(_run_row(run, outcomes.get(_stream(run[0]))))
            run = []
        if entry.kind == "chunks":
            run.append(entry)
        else:
            rows.append(_event_row(entry))
    if run:
        rows.append(_run_row(run, outcomes.get(_stream(run[0]))))
    return rows


def one_per_event(entries: Iterable[TimelineEntry]) -> list[TimelineRow]:
    """Each entry as a row of its own (a chunk batch too): the timeline as ``history`` lists it."""
    return [_event_row(entry) for entry in entries]


def page(rows: Sequence[TimelineRow], limit: int | None) -> TimelinePage:
    """The first ``limit`` rows (all when None) and the cursor after them, if more follow."""
    if limit is None or len(rows) <= limit:
        return TimelinePage(list(rows), None)
    shown = list(rows[:limit])
    return TimelinePage(shown, shown[-1].last_position if shown else None)


def is_decision(row: TimelineRow) -> bool:
    """Whether the row records a decision: an approval answered, a tool output, or one decided on a stream."""
    return row.kind in DECISION_KINDS or bool(row.details.get("approvalDecisions"))


# -- one row ----------------------------------------------------------------------------


def _stream(entry: TimelineEntry) -> Any:
    return entry.details.get("streamId")


def _event_row(entry: TimelineEntry) -> TimelineRow:
    return TimelineRow(
        position=entry.position,
        last_position=entry.position,
        time=entry.time,
        last_time=entry.time,
        actor=entry.actor,
        kind=entry.kind,
        summary=entry.summary,
        details=entry.details,
        marks=entry.marks,
        entries=(entry,),
    )


def _run_row(run: list[TimelineEntry], outcome: Any) -> TimelineRow:
    first, last = run[0], run[-1]
    chunks = sum(_int(entry.details.get("count")) for entry in run)
    details: dict[str, Any] = {
        "streamId": _stream(first),
        "messageId": next(
            (e.details["messageId"] for e in run if e.details.get("messageId")), None
        ),
        "batches": len(run),
        "chunks": chunks,
        "replays": sum(_int(entry.details.get("replays")) for entry in run),
        "refused": sum(_int(entry.details.get("refused")) for entry in run),
        "chunkTypes": _chunk_types(run),
        "outcome": outcome,
    }
    decisions = [d for entry in run for d in entry.details.get("approvalDecisions") or ()]
    if decisions:
        details["approvalDecisions"] = decisions
    marks = {mark for entry in run for mark in entry.marks}
    return TimelineRow(
        position=first.position,
        last_position=last.position,
        time=first.time,
        last_time=last.time,
        actor=first.actor,
        kind="chunks",
        summary=_run_summary(run, chunks, outcome),
        details=details,
        marks=tuple(mark for mark in MARKS if mark in marks),
        entries=tuple(run),
    )


def _int(value: Any) -> int:
    return value if isinstance(value, int) else 0


def _chunk_types(run: list[TimelineEntry]) -> dict[str, int]:
    """Chunks by type across the run: the compact entries' counts, or the full entries' chunks."""
    found: dict[str, int] = {}
    for entry in run:
        counted = entry.details.get("chunkTypes")
        if not isinstance(counted, dict):
            rows = entry.details.get("chunks")
            counted = {}
            for row in rows if isinstance(rows, list) else ():
                chunk = row.get("chunk") if isinstance(row, dict) else None
                kind = str(chunk.get("type")) if isinstance(chunk, dict) else "?"
                counted[kind] = counted.get(kind, 0) + 1
        for kind, count in counted.items():
            found[kind] = found.get(kind, 0) + _int(count)
    return found


# -- the run's summary ------------------------------------------------------------------

_HEAD: Final = re.compile(r"^\d+ chunks?(?:: )?")
_TEXT: Final = re.compile(r'^(text|reasoning) "(.*)"$')
_CALL: Final = re.compile(r"^(tool call (?:`.*` \(.*?\)|\S+)) (.+)$")
_QUIET: Final = frozenset(_SILENT)


def _run_summary(run: list[TimelineEntry], chunks: int, outcome: Any) -> str:
    """``N chunks in M batches: tool call …, text "…"; closed: finished`` from the batches' summaries."""
    head = f"{chunks} chunk{'' if chunks == 1 else 's'}"
    if len(run) > 1:
        head += f" in {len(run)} batches"
    tail = f"; closed: {_id(outcome)}" if outcome is not None else ""
    body = _fit(_items(entry.summary for entry in run), SUMMARY_LIMIT - len(head) - len(tail) - 2)
    return _line(f"{head}: {body}{tail}" if body else f"{head}{tail}")


def _items(summaries: Iterable[str]) -> list[tuple[int, str]]:
    """(rank, text) of the run's items in order: a call's milestones and consecutive texts joined.

    Ranked as a batch's items: tool calls first, then errors and decisions, texts, the rest; the
    steps' bare chunk kinds are left out when anything else happened.
    """
    items = _Items()
    for summary in summaries:
        body = _HEAD.sub("", summary, count=1)
        for item in _split(body):
            items.add(item)
    found = items.ranked()
    busy = [item for item in found if item[1] not in _QUIET]
    return busy or found


def _split(body: str) -> list[str]:
    """A batch's items: one text, or its comma-separated items (a quoted text stays whole)."""
    if _TEXT.match(body):
        return [body]
    items: list[str] = []
    for piece in body.split(", "):
        if items and items[-1].count('"') % 2 == 1:  # a comma inside a quoted text
            items[-1] += ", " + piece
        else:
            items.append(piece)
    return items


class _Items:
    """The run's items, in order of first appearance."""

    def __init__(self) -> None:
        self.order: list[str] = []
        self.texts: dict[str, list[str]] = {}
        self.calls: dict[str, list[str]] = {}
        self.last_text: str | None = None

    def add(self, item: str) -> None:
        text, call = _TEXT.match(item), _CALL.match(item)
        if text:
            key = f"{text[1]}#{len(self.order)}" if self.last_text is None else self.last_text
            if key not in self.texts:
                self.texts[key] = []
                self.order.append(key)
            self.texts[key].append(text[2].removesuffix("…"))
            self.last_text = key
            return
        self.last_text = None
        if call:
            steps = self.calls.setdefault(call[1], [])
            if not steps:
                self.order.append(call[1])
            steps += [s for s in call[2].split(" → ") if s not in steps[-1:]]
        elif item and item not in self.order:
            self.order.append(item)

    def ranked(self) -> list[tuple[int, str]]:
        return [(self._rank(key), self._render(key)) for key in self.order]

    def _rank(self, key: str) -> int:
        if key in self.calls:
            return 0
        if key in self.texts:
            return 2
        return 1 if key.startswith(("error", "approval")) else 3

    def _render(self, key: str) -> str:
        if key in self.texts:
            kind = key.split("#")[0]
            return f'{kind} "{_clip(" ".join(self.texts[key]), 40)}"'
        if key in self.calls:
            steps = self.calls[key]
            if len(steps) > 1:
                steps = [step for step in steps if step != "input streaming"]
            return f"{key} {' → '.join(steps)}"
        return key
