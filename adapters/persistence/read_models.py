"""The read models' tables on SQLite and PostgreSQL (``ReadModelView`` implementations).

They live next to the event log, in the same SQLite file or PostgreSQL
schema, and are created on first use:

- ``chatledger_conversations_v2``: one row per conversation (version, status);
- ``chatledger_messages_v2``: its messages, one row per message as JSON (not
  compressed: read on every turn start, inflating them tripled that read)
  with a digest of the JSON: a page rewrites only the messages whose digest
  changed (a turn writes its new messages, not the whole conversation again);
- ``chatledger_timeline_v2``: one row per event (the audit timeline): position,
  time (microseconds since 1970), actor and kind (its index in ``KINDS``) as
  columns to filter on, summary, details and marks packed in one compressed value;
- ``chatledger_pending_approvals`` and ``chatledger_pending_continuations``: the inbox;
- ``chatledger_conversation_list`` (and its search index): the list of
  conversations (see ``conversation_list``);
- the tracking table (``tracking`` on SQLite, ``chatledger_tracking`` on PostgreSQL).

``memory://`` stores keep their read models in an in-memory SQLite database.

The ``_v2`` names are the layout of these tables: a store whose read models
were laid out before (tables without the suffix) has them dropped when it is
opened, and projected again from the log (``drop_old_layout``).
"""

from __future__ import annotations

import json
import re
import sqlite3
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any
from uuid import UUID

import psycopg
from eventsourcing.persistence import (
    DataError,
    IntegrityError,
    InterfaceError,
    OperationalError,
    PersistenceError,
    Tracking,
)
from eventsourcing.postgres import PostgresDatastore, PostgresTrackingRecorder
from eventsourcing.sqlite import SQLiteDatastore, SQLiteTrackingRecorder
from psycopg import sql

from chatledger.adapters.persistence.conversation_list import (
    LIST_TABLE,
    OLD_SEARCH_LAYOUT,
    SEARCH_TABLE,
    PostgresListTables,
    SQLiteListTables,
)
from chatledger.adapters.persistence.keys import PLAIN, ColumnKey, check_store_key
from chatledger.adapters.persistence.packing import pack, pack_plain, unpack
from chatledger.domain.erasure import ERASED_KIND, ERASED_SUMMARY
from chatledger.domain.limits import check_name, check_position
from chatledger.domain.timeline import KINDS, TimelineEntry
from chatledger.projections.read_models import (
    ContinuationRequest,
    ConversationRow,
    ConversationView,
    HistoryQuery,
    Page,
    PendingApproval,
    QuarantinedEvent,
    ReadModelView,
    RowsAheadError,
    TrackingMovedError,
)

__all__ = ["PostgresReadModels", "SQLiteReadModels", "memory_read_models", "open_read_models"]

TABLES = {
    "conversations": "chatledger_conversations_v2",
    "messages": "chatledger_messages_v2",
    "timeline": "chatledger_timeline_v2",
    "approvals": "chatledger_pending_approvals",
    "continuations": "chatledger_pending_continuations",
    "list": LIST_TABLE,
}
OLD_LAYOUT = ("chatledger_conversations", "chatledger_timeline", "chatledger_conversation_list")
"""Read-model tables as laid out before ``_v2``: dropped on open, their rows projected again."""
SETTINGS = "chatledger_settings"
"""What the store records about itself (the key check value): kept by ``reset``."""
QUARANTINE = "chatledger_quarantine"
"""Events the projector could not apply (re-derived, so emptied by ``reset`` like the read models)."""

_DDL = [
    "CREATE TABLE IF NOT EXISTS {conversations} ("
    " conversation_id TEXT PRIMARY KEY, tenant TEXT NOT NULL, chat_id TEXT NOT NULL,"
    " version INTEGER NOT NULL, status TEXT NOT NULL, updated_at TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS {messages} ("
    " conversation_id TEXT NOT NULL, position INTEGER NOT NULL, digest BIGINT NOT NULL,"
    " message {blob} NOT NULL, PRIMARY KEY (conversation_id, position))",
    "CREATE TABLE IF NOT EXISTS {timeline} ("
    " conversation_id {uuid} NOT NULL, position INTEGER NOT NULL, recorded_at BIGINT NOT NULL,"
    " actor TEXT, kind SMALLINT NOT NULL, body {blob} NOT NULL,"
    " PRIMARY KEY (conversation_id, position)){without_rowid}",
    "CREATE TABLE IF NOT EXISTS {approvals} ("
    " conversation_id TEXT NOT NULL, tool_call_id TEXT NOT NULL, tenant TEXT NOT NULL,"
    " chat_id TEXT NOT NULL, message_id TEXT NOT NULL, tool_name TEXT NOT NULL,"
    " input TEXT NOT NULL, approval_id TEXT NOT NULL, requested_at TEXT NOT NULL,"
    " PRIMARY KEY (conversation_id, tool_call_id))",
    "CREATE INDEX IF NOT EXISTS {approvals_by_tenant} ON {approvals} (tenant, requested_at)",
    "CREATE TABLE IF NOT EXISTS {continuations} ("
    " conversation_id TEXT PRIMARY KEY, tenant TEXT NOT NULL, chat_id TEXT NOT NULL,"
    " request_id TEXT NOT NULL, message_id TEXT NOT NULL, cause TEXT NOT NULL,"
    " requested_at TEXT NOT NULL, claimed_by TEXT, lease_until TEXT)",
    "CREATE INDEX IF NOT EXISTS {continuations_by_tenant}"
    " ON {continuations} (tenant, requested_at)",
    "CREATE TABLE IF NOT EXISTS {quarantine} ("
    " notification_id BIGINT PRIMARY KEY, conversation_id TEXT NOT NULL,"
    " originator_version INTEGER NOT NULL, topic TEXT NOT NULL, error TEXT NOT NULL,"
    " quarantined_at TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS {settings} (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
]

_UPSERT_CONVERSATION = (
    "INSERT INTO {conversations} VALUES (?, ?, ?, ?, ?, ?)"
    " ON CONFLICT (conversation_id) DO UPDATE SET version = excluded.version,"
    " status = excluded.status, updated_at = excluded.updated_at"
)
_SELECT_DIGESTS = "SELECT position, digest FROM {messages} WHERE conversation_id = ?"
_UPSERT_MESSAGE = (
    "INSERT INTO {messages} VALUES (?, ?, ?, ?) ON CONFLICT (conversation_id, position)"
    " DO UPDATE SET digest = excluded.digest, message = excluded.message"
)
_TRIM_MESSAGES = "DELETE FROM {messages} WHERE conversation_id = ? AND position >= ?"
_INSERT_ENTRY = "INSERT INTO {timeline} VALUES (?, ?, ?, ?, ?, ?)"
_OVERWRITE_ENTRY = (
    _INSERT_ENTRY + " ON CONFLICT (conversation_id, position) DO UPDATE SET"
    " recorded_at = excluded.recorded_at, actor = excluded.actor, kind = excluded.kind,"
    " body = excluded.body"
)
_INSERT_QUARANTINE = (
    "INSERT INTO {quarantine} VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (notification_id) DO NOTHING"
)
_INSERT_SETTING = "INSERT INTO {settings} VALUES (?, ?) ON CONFLICT (name) DO NOTHING"
_SELECT_SETTING = "SELECT value FROM {settings} WHERE name = ?"
_SELECT_QUARANTINE = (
    "SELECT notification_id, conversation_id, originator_version, topic, error, quarantined_at"
    " FROM {quarantine} ORDER BY notification_id"
)
_PURGE = (
    "DELETE FROM {conversations} WHERE conversation_id = ?",
    "DELETE FROM {messages} WHERE conversation_id = ?",
    "DELETE FROM {approvals} WHERE conversation_id = ?",
    "DELETE FROM {continuations} WHERE conversation_id = ?",
    "DELETE FROM {quarantine} WHERE conversation_id = ?",
)
_ERASE_TIMELINE = "UPDATE {timeline} SET body = ? WHERE conversation_id = ? AND kind <> ?"
_DELETE_APPROVALS = "DELETE FROM {approvals} WHERE conversation_id = ?"
_INSERT_APPROVAL = "INSERT INTO {approvals} VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
_DELETE_CONTINUATION = "DELETE FROM {continuations} WHERE conversation_id = ?"
_INSERT_CONTINUATION = "INSERT INTO {continuations} VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
_INSERT_TRACKING = (
    "INSERT INTO {tracking} VALUES (?, ?) ON CONFLICT (application_name) DO NOTHING"
    " RETURNING notification_id"
)
_ADVANCE_TRACKING = (
    "UPDATE {tracking} SET notification_id = ? WHERE application_name = ? AND notification_id = ?"
    " RETURNING notification_id"
)
_DELETE_TRACKING = "DELETE FROM {tracking} WHERE application_name = ?"
_SELECT_CONVERSATION = (  # one statement: one snapshot of the row and its messages
    "SELECT c.version, c.status, m.message FROM {conversations} c"
    " LEFT JOIN {messages} m ON m.conversation_id = c.conversation_id"
    " WHERE c.conversation_id = ? ORDER BY m.position"
)
_SELECT_APPROVALS = (
    "SELECT tenant, chat_id, message_id, tool_call_id, tool_name, input, approval_id,"
    " requested_at FROM {approvals} WHERE tenant = ? ORDER BY requested_at, conversation_id"
)
_SELECT_CONTINUATIONS = (
    "SELECT tenant, chat_id, request_id, message_id, cause, requested_at, claimed_by,"
    " lease_until FROM {continuations} WHERE tenant = ? ORDER BY requested_at, conversation_id"
)


def _json(value: Any) -> str:
    # ASCII-escaped: lone surrogates (which the log can hold) survive as \\udXXX escapes.
    return json.dumps(value, separators=(",", ":"))


_UNSAFE_TEXT = re.compile("[\x00\ud800-\udfff]")


def _text(value: str) -> str:
    """Display text (a summary, an error) safe for every SQL text column: NUL and lone surrogates escaped."""
    if _UNSAFE_TEXT.search(value) is None:
        return value
    return _UNSAFE_TEXT.sub(lambda found: f"\\u{ord(found.group()):04x}", value)


def _time(moment: datetime) -> str:
    """A fixed-width ISO time, so that text order is time order."""
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%f+00:00")


def _parse_time(text: str | None) -> datetime | None:
    return datetime.fromisoformat(text) if text else None


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_KIND_NUMBERS = {kind: number for number, kind in enumerate(KINDS)}
"""A timeline kind as stored: its index in ``KINDS`` (new kinds are only ever appended)."""


def _micros(moment: datetime) -> int:
    """A time as stored in the timeline: microseconds since 1970 (UTC), exactly."""
    return (moment - _EPOCH) // timedelta(microseconds=1)


def _from_micros(micros: int) -> datetime:
    return _EPOCH + timedelta(microseconds=micros)


def _entry_body(summary: str, details: Any, marks: list[str]) -> str:
    """A timeline entry's text as one JSON array: [summary, details] and the marks when there are any."""
    return _json([summary, details, marks] if marks else [summary, details])


class _SQLReadModels(ReadModelView):
    """The SQL shared by both databases; subclasses give the cursor and the statement dialect.

    With a store key, ``key`` seals every column that holds content or names
    (the tenant is kept as a keyed hash, so the inbox can still look it up).
    """

    key: ColumnKey = PLAIN

    if TYPE_CHECKING:  # given by the list tables mixed in before this class

        def _write_summaries(self, c: Any, summaries: Any) -> None: ...

        def _scrub_search(self, c: Any) -> None: ...

    def _statement(self, template: str) -> Any:
        raise NotImplementedError

    @contextmanager
    def _transaction(self, *, commit: bool) -> Iterator[Any]:
        """A transaction whose driver errors are ``eventsourcing``'s, on both databases."""
        try:
            with self.datastore.transaction(commit=commit) as cursor:  # type: ignore[attr-defined]
                yield cursor
        except (psycopg.OperationalError, psycopg.InterfaceError) as error:
            raise OperationalError(error) from error
        except psycopg.IntegrityError as error:
            raise IntegrityError(error) from error
        except psycopg.DataError as error:
            raise DataError(error) from error
        except psycopg.Error as error:
            raise PersistenceError(error) from error
        except sqlite3.InterfaceError as error:
            raise InterfaceError(error) from error

    def apply_page(
        self, page: Page, tracking: Tracking, *, after: int, overwrite: bool = False
    ) -> None:
        """Write the page and move the tracking record from ``after`` to its last event, in one transaction.

        Timeline rows already there mean the rows are ahead of the tracking
        position: RowsAheadError, unless ``overwrite`` says to replace them.
        """
        seal = self.key
        with self._transaction(commit=True) as c:
            self._advance_tracking(c, tracking, after)
            if page.conversations:
                c.executemany(
                    self._statement(_UPSERT_CONVERSATION),
                    [
                        (
                            str(row.conversation_id),
                            seal.tag(row.tenant),
                            seal.seal(row.chat_id),
                            row.version,
                            row.status,
                            _time(row.updated_at),
                        )
                        for row in page.conversations.values()
                    ],
                )
                self._write_messages(c, page.conversations.values(), rewrite=overwrite)
            entries = self._entry_rows(page.timeline)
            if entries:
                statement = self._statement(_OVERWRITE_ENTRY if overwrite else _INSERT_ENTRY)
                try:
                    c.executemany(statement, entries)
                except (sqlite3.IntegrityError, psycopg.IntegrityError, IntegrityError) as error:
                    raise RowsAheadError(
                        f"timeline rows after position {after} are already there: {error}"
                    ) from None
            retimed = self._entry_rows(page.retimed)
            if retimed:
                c.executemany(self._statement(_OVERWRITE_ENTRY), retimed)
            self._replace_inbox(c, page)
            self._write_summaries(c, page.summaries)
            if retimed:
                self._scrub_search(c)
            for key in page.erased:
                self.purge(c, key)

    def _write_messages(self, c: Any, rows: Iterable[ConversationRow], *, rewrite: bool) -> None:
        """Write the messages whose digest differs from the stored one, drop those past the end."""
        seal = self.key
        changed, trimmed = [], []
        for row in rows:
            key = str(row.conversation_id)
            c.execute(self._statement(_SELECT_DIGESTS), (key,))
            stored = {found["position"]: found["digest"] for found in c.fetchall()}
            for position, message in enumerate(row.messages):
                text = _json(message)
                digest = seal.digest(text)
                if rewrite or stored.get(position) != digest:
                    changed.append((key, position, digest, pack_plain(seal, text)))
            if len(stored) > len(row.messages):
                trimmed.append((key, len(row.messages)))
        if changed:
            c.executemany(self._statement(_UPSERT_MESSAGE), changed)
        if trimmed:
            c.executemany(self._statement(_TRIM_MESSAGES), trimmed)

    def purge(self, c: Any, conversation_id: UUID) -> None:
        """In transaction ``c``: delete the conversation's rows; its timeline keeps kinds, actors, times."""
        key = str(conversation_id)
        for statement in self.LIST_PURGE:  # type: ignore[attr-defined]
            c.execute(self._statement(statement), (key,))
        for statement in _PURGE:
            c.execute(self._statement(statement), (key,))
        erased = pack(self.key, _entry_body(ERASED_SUMMARY, {"erased": True}, []))
        c.execute(self._statement(_ERASE_TIMELINE), (erased, key, _KIND_NUMBERS[ERASED_KIND]))

    def _entry_rows(self, timelines: dict[UUID, list[TimelineEntry]]) -> list[tuple[Any, ...]]:
        """Timeline rows as stored (content sealed with the store key, if any)."""
        seal = self.key
        return [
            (
                str(key),
                entry.position,
                _micros(entry.time),
                seal.seal(entry.actor),
                _KIND_NUMBERS[entry.kind],
                pack(seal, _entry_body(_text(entry.summary), entry.details, list(entry.marks))),
            )
            for key, timeline in timelines.items()
            for entry in timeline
        ]

    def _replace_inbox(self, c: Any, page: Page) -> None:
        seal = self.key
        keys = [(str(key),) for key in page.approvals]
        if keys:
            c.executemany(self._statement(_DELETE_APPROVALS), keys)
        approvals = [
            (
                str(key),
                seal.seal(row.tool_call_id),
                seal.tag(row.tenant),
                seal.seal(row.chat_id),
                seal.seal(row.message_id),
                seal.seal(row.tool_name),
                seal.seal(_json(row.input)),
                seal.seal(row.approval_id),
                _time(row.requested_at),
            )
            for key, rows in page.approvals.items()
            for row in rows
        ]
        if approvals:
            c.executemany(self._statement(_INSERT_APPROVAL), approvals)
        keys = [(str(key),) for key in page.continuations]
        if keys:
            c.executemany(self._statement(_DELETE_CONTINUATION), keys)
        continuations = [
            (
                str(key),
                seal.tag(row.tenant),
                seal.seal(row.chat_id),
                seal.seal(row.request_id),
                seal.seal(row.message_id),
                seal.seal(row.cause),
                _time(row.requested_at),
                seal.seal(row.claimed_by),
                _time(row.lease_until) if row.lease_until else None,
            )
            for key, row in page.continuations.items()
            if row is not None
        ]
        if continuations:
            c.executemany(self._statement(_INSERT_CONTINUATION), continuations)

    def quarantine(self, event: QuarantinedEvent, tracking: Tracking, *, after: int) -> None:
        """Record ``event`` as quarantined and move the tracking position past it, in one transaction."""
        with self._transaction(commit=True) as c:
            self._advance_tracking(c, tracking, after)
            c.execute(
                self._statement(_INSERT_QUARANTINE),
                (
                    event.notification_id,
                    str(event.conversation_id),
                    event.version,
                    _text(event.topic),
                    self.key.seal(_text(event.error)),
                    _time(event.quarantined_at),
                ),
            )

    def quarantined(self) -> list[QuarantinedEvent]:
        """The events quarantined since the last rebuild, oldest first."""
        with self._transaction(commit=False) as c:
            c.execute(self._statement(_SELECT_QUARANTINE))
            rows = c.fetchall()
        return [
            QuarantinedEvent(
                row["notification_id"],
                UUID(row["conversation_id"]),
                row["originator_version"],
                row["topic"],
                self.key.unseal(row["error"]) or "",
                datetime.fromisoformat(row["quarantined_at"]),
            )
            for row in rows
        ]

    def conversation(self, conversation_id: UUID) -> ConversationView | None:
        """The conversation's row, or None if it was never projected."""
        with self._transaction(commit=False) as c:
            c.execute(self._statement(_SELECT_CONVERSATION), (str(conversation_id),))
            rows = c.fetchall()
        if not rows:
            return None
        key = self.key
        if key.enabled:
            messages = [unpack(key, row["message"]) for row in rows if row["message"] is not None]
        else:  # stored as they are (the raw tag, then UTF-8): no call per message
            messages = [
                bytes(row["message"][1:]).decode("utf-8", "surrogatepass")
                if row["message"][:1] == b"\x00"
                else unpack(key, row["message"])
                for row in rows
                if row["message"] is not None
            ]
        first = rows[0]
        return ConversationView(first["version"], f"[{','.join(messages)}]", first["status"])

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
            params.extend(_KIND_NUMBERS.get(kind, -1) for kind in kinds)
        sealed = self.key.enabled  # sealed actors cannot be compared in SQL: filtered here
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
        with self._transaction(commit=False) as c:
            c.execute(self._statement(statement), params)
            rows = c.fetchall()
        key = self.key
        entries = []
        for row in rows:
            summary, details, *marks = json.loads(unpack(key, row["body"]))
            entries.append(
                TimelineEntry(
                    position=row["position"],
                    time=_from_micros(row["recorded_at"]),
                    actor=key.unseal(row["actor"]),
                    kind=KINDS[row["kind"]],
                    summary=summary,
                    details=details,
                    marks=tuple(marks[0]) if marks else (),
                )
            )
        if sealed and query.actor is not None:
            entries = [entry for entry in entries if entry.actor == query.actor][: query.limit]
        return entries

    def pending_approvals(self, tenant: str) -> list[PendingApproval]:
        """The tenant's tool calls awaiting approval, oldest first."""
        check_name("tenant", tenant)
        with self._transaction(commit=False) as c:
            c.execute(self._statement(_SELECT_APPROVALS), (self.key.tag(tenant),))
            rows = c.fetchall()
        unseal = self.key.unseal
        return [
            PendingApproval(
                tenant,
                unseal(row["chat_id"]) or "",
                unseal(row["message_id"]) or "",
                unseal(row["tool_call_id"]) or "",
                unseal(row["tool_name"]) or "",
                json.loads(unseal(row["input"]) or "null"),
                unseal(row["approval_id"]) or "",
                datetime.fromisoformat(row["requested_at"]),
            )
            for row in rows
        ]

    def pending_continuations(self, tenant: str) -> list[ContinuationRequest]:
        """The tenant's pending continuation requests, oldest first."""
        check_name("tenant", tenant)
        with self._transaction(commit=False) as c:
            c.execute(self._statement(_SELECT_CONTINUATIONS), (self.key.tag(tenant),))
            rows = c.fetchall()
        unseal = self.key.unseal
        return [
            ContinuationRequest(
                tenant,
                unseal(row["chat_id"]) or "",
                unseal(row["request_id"]) or "",
                unseal(row["message_id"]) or "",
                unseal(row["cause"]) or "",
                datetime.fromisoformat(row["requested_at"]),
                unseal(row["claimed_by"]),
                _parse_time(row["lease_until"]),
            )
            for row in rows
        ]

    def reset(self, application_name: str) -> None:
        """Empty every read model and forget the tracking position, in one transaction."""
        with self._transaction(commit=True) as c:
            self._reset(c, application_name)

    def _reset(self, c: Any, application_name: str) -> None:
        for name in TABLES:
            c.execute(self._statement(f"DELETE FROM {{{name}}}"))
        c.execute(self._statement("DELETE FROM {quarantine}"))
        for statement in self.SEARCH_RESET:  # type: ignore[attr-defined]
            c.execute(self._statement(statement))
        c.execute(self._statement(_DELETE_TRACKING), (application_name,))

    def setting(self, name: str, default: str) -> str:
        """The store's setting ``name``; ``default`` is recorded first if there is none (first writer wins)."""
        with self._transaction(commit=True) as c:
            c.execute(self._statement(_INSERT_SETTING), (name, default))
            c.execute(self._statement(_SELECT_SETTING), (name,))
            value: str = c.fetchone()["value"]
        return value

    def stored_setting(self, name: str) -> str | None:
        """The store's setting ``name``, or None."""
        with self._transaction(commit=False) as c:
            c.execute(self._statement(_SELECT_SETTING), (name,))
            row = c.fetchone()
        return None if row is None else str(row["value"])

    def _advance_tracking(self, c: Any, tracking: Tracking, after: int) -> None:
        """Compare-and-set the tracking record: ``after`` -> ``tracking.notification_id``.

        Stricter than ``eventsourcing``'s guarded upsert (which only checks that
        the position grows): a projector whose cached state predates a rebuild
        or another projector's page cannot write over their work.
        """
        if after == 0:
            c.execute(
                self._statement(_INSERT_TRACKING),
                (tracking.application_name, tracking.notification_id),
            )
            if c.fetchone() is None:
                raise TrackingMovedError("another projector applied the first events meanwhile")
            return
        c.execute(
            self._statement(_ADVANCE_TRACKING),
            (tracking.notification_id, tracking.application_name, after),
        )
        if c.fetchone() is None:
            raise TrackingMovedError(
                f"read models moved past position {after} meanwhile (another projector or a rebuild)"
            )

    def drop_old_layout(self, application_name: str) -> bool:
        """Drop the read-model tables an older version laid out; whether there were any.

        Their rows are derived from the log: in the same transaction the read
        models are emptied and the tracking position forgotten, so that the
        next catch-up projects them again, in this layout (no reader sees the
        new tables empty while the position says they are current).
        """
        with self._transaction(commit=True) as c:
            old = self._old_tables(c)
            for name in old:
                c.execute(self._drop_table(name))
            if old:
                self._reset(c, application_name)
        return bool(old)

    def _old_tables(self, c: Any) -> list[str]:
        raise NotImplementedError

    def _drop_table(self, name: str) -> Any:
        raise NotImplementedError

    def list_missing(self) -> bool:
        """Whether conversations were projected before the conversation list existed (it then needs a rebuild)."""
        with self._transaction(commit=False) as c:
            c.execute(
                self._statement(
                    "SELECT 1 AS found FROM {conversations}"
                    " WHERE NOT EXISTS (SELECT 1 FROM {list}) LIMIT 1"
                )
            )
            return c.fetchone() is not None

    def counts(self) -> dict[str, int]:
        """Rows per read model."""
        found = {}
        with self._transaction(commit=False) as c:
            for name in TABLES:
                c.execute(self._statement(f"SELECT COUNT(*) AS n FROM {{{name}}}"))
                found[name] = c.fetchone()["n"]
        return found


class SQLiteReadModels(SQLiteListTables, _SQLReadModels, SQLiteTrackingRecorder):
    """The read models in the store's SQLite database."""

    def construct_create_table_statements(self) -> list[str]:
        """eventsourcing's tracking table, then the read models' tables."""
        statements = super().construct_create_table_statements()
        names = {**TABLES, "quarantine": QUARANTINE, "settings": SETTINGS}
        names["approvals_by_tenant"] = "chatledger_pending_approvals_by_tenant"
        names["continuations_by_tenant"] = "chatledger_pending_continuations_by_tenant"
        names["search"] = SEARCH_TABLE
        types = {"blob": "BLOB", "uuid": "TEXT", "without_rowid": " WITHOUT ROWID"}
        ddl = [*_DDL, *self.LIST_DDL]
        return [*statements, *(statement.format(**names, **types) for statement in ddl)]

    def _old_tables(self, c: Any) -> list[str]:
        old = [*OLD_LAYOUT, *OLD_SEARCH_LAYOUT]
        c.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'"
            f" AND name IN ({', '.join('?' for _ in old)})",
            old,
        )
        return [row[0] for row in c.fetchall()]

    def _drop_table(self, name: str) -> str:
        return f'DROP TABLE IF EXISTS "{name}"'

    def _statement(self, template: str) -> str:
        return template.format(
            **TABLES,
            search=SEARCH_TABLE,
            quarantine=QUARANTINE,
            settings=SETTINGS,
            tracking="tracking",
        )


class PostgresReadModels(PostgresListTables, _SQLReadModels, PostgresTrackingRecorder):
    """The read models in the store's PostgreSQL schema."""

    def __init__(self, datastore: PostgresDatastore, **kwargs: Any) -> None:
        super().__init__(datastore, tracking_table_name="chatledger_tracking", **kwargs)
        schema = datastore.schema
        self._names: dict[str, sql.Composable] = {
            name: sql.Identifier(schema, table) for name, table in TABLES.items()
        }
        self._names["tracking"] = sql.Identifier(schema, self.tracking_table_name)
        self._names["quarantine"] = sql.Identifier(schema, QUARANTINE)
        self._names["settings"] = sql.Identifier(schema, SETTINGS)
        indexes = {
            "approvals_by_tenant": sql.Identifier("chatledger_pending_approvals_by_tenant"),
            "continuations_by_tenant": sql.Identifier("chatledger_pending_continuations_by_tenant"),
            "list_by_tenant": sql.Identifier(f"{LIST_TABLE}_by_tenant"),
            "list_search": sql.Identifier(f"{LIST_TABLE}_search"),
        }
        tables = {name: self._names[name] for name in (*TABLES, "quarantine", "settings")}
        types = {"blob": sql.SQL("BYTEA"), "uuid": sql.SQL("UUID"), "without_rowid": sql.SQL("")}
        self.sql_create_statements.extend(
            sql.SQL(statement).format(**tables, **indexes, **types)
            for statement in [*_DDL, *self.LIST_DDL]
        )
        self._cache: dict[str, sql.Composed] = {}

    def _old_tables(self, c: Any) -> list[str]:
        c.execute(
            "SELECT table_name FROM information_schema.tables"
            " WHERE table_schema = %s AND table_name = ANY(%s)",
            (self.datastore.schema, list(OLD_LAYOUT)),
        )
        return [row["table_name"] for row in c.fetchall()]

    def _drop_table(self, name: str) -> sql.Composed:
        return sql.SQL("DROP TABLE IF EXISTS {}").format(
            sql.Identifier(self.datastore.schema, name)
        )

    def _statement(self, template: str) -> sql.Composed:
        statement = self._cache.get(template)
        if statement is None:
            statement = sql.SQL(template.replace("?", "%s")).format(**self._names)
            self._cache[template] = statement
        return statement


def open_read_models(log: Any, backend: str, *, create: bool = True) -> ReadModelView:
    """The read models next to ``log`` (a ``ConversationLog``), tables created if ``create``.

    The store's key is checked against the check value recorded when the
    store was created (CipherKeyError) before anything else is read or written.
    """
    view: _SQLReadModels
    if backend == "sqlite":
        view = SQLiteReadModels(log.recorder.datastore)
    elif backend == "postgres":
        view = PostgresReadModels(log.recorder.datastore)
    else:
        view = memory_read_models()
    if backend != "memory" and create:
        view.create_table()
    key = log.cipher_key
    older = check_store_key(view, key, log)
    view.key = ColumnKey(key)
    if backend != "memory" and create:
        view.drop_old_layout(log.name)  # laid out by an older version: projected again
    if older and key:  # read models of an encrypted store from before they were sealed
        view.reset(log.name)  # re-derived, sealed, by the next catch-up
    if view.list_missing():
        # Read models from before the conversation list: project everything again.
        view.reset(log.name)
    return view


class MemoryReadModels(SQLiteReadModels):
    """Read models of a ``memory://`` store: an in-memory SQLite database of their own."""

    def close(self) -> None:
        """Close the in-memory database (nobody else uses it)."""
        self.datastore.close()


def memory_read_models() -> MemoryReadModels:
    """Read models for a ``memory://`` store: an in-memory SQLite database of their own."""
    name = f"file:chatledger-read-models-{uuid.uuid4().hex}?mode=memory&cache=shared"
    view = MemoryReadModels(SQLiteDatastore(name))
    view.create_table()
    return view
