"""The timeline read model: one row per event, the audit trail ``history()`` reads.

``chatledger_timeline_v2`` keeps position, time (microseconds since 1970),
actor and kind (its index in ``KINDS``) as columns to filter on, and the
summary, details and marks packed in one compressed value (sealed with a
store key, like the actor).
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any
from uuid import UUID

import psycopg
from eventsourcing.persistence import IntegrityError

from chatledger.adapters.persistence.keys import ColumnKey
from chatledger.adapters.persistence.packing import pack, unpack
from chatledger.adapters.persistence.read_models.attached import ReadModelBlobs
from chatledger.adapters.persistence.read_models.columns import (
    KIND_NUMBERS,
    from_micros,
    json_text,
    micros,
    readable,
    safe_text,
)
from chatledger.adapters.persistence.read_models.dialect import Dialect
from chatledger.domain.erasure import ERASED_KIND, ERASED_SUMMARY
from chatledger.domain.limits import check_name, check_position
from chatledger.domain.timeline import KINDS, TimelineEntry
from chatledger.projections.read_models import HistoryQuery, RowsAheadError

__all__ = ["TimelineTable"]

_INSERT_ENTRY = "INSERT INTO {timeline} VALUES (?, ?, ?, ?, ?, ?)"
_OVERWRITE_ENTRY = (
    _INSERT_ENTRY + " ON CONFLICT (conversation_id, position) DO UPDATE SET"
    " recorded_at = excluded.recorded_at, actor = excluded.actor, kind = excluded.kind,"
    " body = excluded.body"
)
_ERASE = "UPDATE {timeline} SET body = ? WHERE conversation_id = ? AND kind <> ?"

Timelines = dict[UUID, list[TimelineEntry]]


def _entry_body(summary: str, details: Any, marks: list[str]) -> str:
    """A timeline entry's text as one JSON array: [summary, details] and the marks when there are any."""
    return json_text([summary, details, marks] if marks else [summary, details])


class TimelineTable:
    """The audit timeline's rows: written once per event, rewritten when a redaction hides content."""

    DDL = (
        "CREATE TABLE IF NOT EXISTS {timeline} ("
        " conversation_id {uuid} NOT NULL, position INTEGER NOT NULL, recorded_at BIGINT NOT NULL,"
        " actor TEXT, kind SMALLINT NOT NULL, body {blob} NOT NULL,"
        " PRIMARY KEY (conversation_id, position)){without_rowid}",
    )

    def __init__(self, dialect: Dialect, key: ColumnKey) -> None:
        self._dialect = dialect
        self._key = key
        self.attached = ReadModelBlobs()
        """Attachments kept as references to their blobs (set by ``ReadModels.attach_blobs``)."""

    def write(self, c: Any, timelines: Timelines, *, after: int, overwrite: bool) -> None:
        """In transaction ``c``: add the entries; RowsAheadError if some are there (unless ``overwrite``)."""
        entries = self._rows(c, timelines)
        if not entries:
            return
        statement = self._dialect.statement(_OVERWRITE_ENTRY if overwrite else _INSERT_ENTRY)
        try:
            c.executemany(statement, entries)
        except (sqlite3.IntegrityError, psycopg.IntegrityError, IntegrityError) as error:
            raise RowsAheadError(
                f"timeline rows after position {after} are already there: {error}"
            ) from None

    def rewrite(self, c: Any, timelines: Timelines) -> bool:
        """In transaction ``c``: write entries recorded before again; whether there were any."""
        entries = self._rows(c, timelines)
        if entries:
            c.executemany(self._dialect.statement(_OVERWRITE_ENTRY), entries)
        return bool(entries)

    def erase(self, c: Any, key: str) -> None:
        """In transaction ``c``: hide every entry's text of an erased conversation (kinds, actors, times stay)."""
        erased = pack(self._key, _entry_body(ERASED_SUMMARY, {"erased": True}, []))
        c.execute(self._dialect.statement(_ERASE), (erased, key, KIND_NUMBERS[ERASED_KIND]))

    def conversations_of(self, actor: str) -> set[str]:
        """The conversations with an entry by ``actor`` (sealed actors are compared once unsealed)."""
        with self._dialect.transaction(commit=False) as c:
            if not self._key.enabled:
                c.execute(
                    self._dialect.statement(
                        "SELECT DISTINCT conversation_id FROM {timeline} WHERE actor = ?"
                    ),
                    (actor,),
                )
                return {str(row["conversation_id"]) for row in c.fetchall()}
            c.execute(self._dialect.statement("SELECT conversation_id, actor FROM {timeline}"))
            rows = c.fetchall()
        return {str(r["conversation_id"]) for r in rows if self._key.unseal(r["actor"]) == actor}

    def rename_actor(self, c: Any, key: str, actor: str, name: str) -> None:
        """In transaction ``c``: the conversation's entries by ``actor`` name ``name`` instead."""
        c.execute(
            self._dialect.statement(
                "SELECT position, actor FROM {timeline} WHERE conversation_id = ?"
            ),
            (key,),
        )
        mine = [row["position"] for row in c.fetchall() if self._key.unseal(row["actor"]) == actor]
        update = "UPDATE {timeline} SET actor = ? WHERE conversation_id = ? AND position = ?"
        for position in mine:
            c.execute(self._dialect.statement(update), (self._key.seal(name), key, position))

    def _rows(self, c: Any, timelines: Timelines) -> list[tuple[Any, ...]]:
        """Timeline rows as stored (content sealed with the store key, if any; attachments referenced)."""
        seal = self._key
        return [
            (
                str(key),
                entry.position,
                micros(entry.time),
                seal.seal(entry.actor),
                KIND_NUMBERS[entry.kind],
                pack(seal, self._body(c, str(key), entry)),
            )
            for key, timeline in timelines.items()
            for entry in timeline
        ]

    def _body(self, c: Any, key: str, entry: TimelineEntry) -> str:
        """The entry's text, its attachments referenced (``attached``)."""
        summary, marks = safe_text(entry.summary), list(entry.marks)
        body = _entry_body(summary, entry.details, marks)
        if isinstance(entry.details, dict):
            details = self.attached.lift(c, key, entry.details, body)
            if details is not entry.details:
                body = _entry_body(summary, details, marks)
        return body

    def history(self, conversation_id: UUID, query: HistoryQuery) -> list[TimelineEntry]:
        """Timeline entries of one conversation, in order."""
        check_position("after", query.after)
        check_position("limit", query.limit, optional=True)
        if query.actor is not None:
            check_name("actor", query.actor)
        where = ["conversation_id = ?", "position > ?"]
        params: list[Any] = [str(conversation_id), query.after]
        if query.kinds is not None:
            kinds = list(query.kinds)
            for kind in kinds:
                check_name("kind", kind)
            if not kinds:
                return []
            where.append(f"kind IN ({', '.join('?' for _ in kinds)})")
            params.extend(KIND_NUMBERS.get(kind, -1) for kind in kinds)
        sealed = self._key.enabled  # sealed actors cannot be compared in SQL: filtered here
        if query.actor is not None and not sealed:
            where.append("actor = ?")
            params.append(query.actor)
        statement = (
            "SELECT position, recorded_at, actor, kind, body FROM {timeline}"
            f" WHERE {' AND '.join(where)} ORDER BY position"
        )
        if query.limit is not None and not (sealed and query.actor is not None):
            statement += " LIMIT ?"
            params.append(query.limit)
        with self._dialect.transaction(commit=False) as c:
            c.execute(self._dialect.statement(statement), params)
            rows = c.fetchall()
        entries = [self._entry(row, conversation_id) for row in rows]
        if sealed and query.actor is not None:
            entries = [entry for entry in entries if entry.actor == query.actor][: query.limit]
        return entries

    def _entry(self, row: Any, conversation_id: UUID) -> TimelineEntry:
        return readable("audit timeline", lambda: self._decoded(row, conversation_id))

    def _decoded(self, row: Any, conversation_id: UUID) -> TimelineEntry:
        summary, details, *marks = json.loads(unpack(self._key, row["body"]))
        return TimelineEntry(
            position=row["position"],
            time=from_micros(row["recorded_at"]),
            actor=self._key.unseal(row["actor"]),
            kind=KINDS[row["kind"]],
            summary=summary,
            details=self.attached.restore(conversation_id, details),
            marks=tuple(marks[0]) if marks else (),
        )
