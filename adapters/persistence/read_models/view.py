"""The read models of one database as one ``ReadModelView``: its tables composed, one tracking position.

Each table object holds its own statements (``conversations``, ``timeline``,
``inbox``, ``conversation_list``, ``bookkeeping``) and writes them through the
database's ``Dialect``. ``ReadModels`` puts a page into all of them, and
moves the tracking position, in one transaction.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any
from uuid import UUID

from eventsourcing.persistence import Tracking

from chatledger.adapters.persistence.keys import ColumnKey
from chatledger.adapters.persistence.read_models.attached import ReadModelBlobs
from chatledger.adapters.persistence.read_models.bookkeeping import (
    QuarantineTable,
    SettingsTable,
    TrackingRecorders,
    TrackingTable,
)
from chatledger.adapters.persistence.read_models.conversation_list import (
    ConversationListTable,
    SearchIndex,
)
from chatledger.adapters.persistence.read_models.conversations import ConversationTables
from chatledger.adapters.persistence.read_models.dialect import TABLES, Dialect
from chatledger.adapters.persistence.read_models.inbox import InboxTables
from chatledger.adapters.persistence.read_models.timeline import TimelineTable
from chatledger.adapters.persistence.store_key import StoreKey
from chatledger.domain.timeline import TimelineEntry
from chatledger.projections.listing import ConversationList, ListQuery
from chatledger.projections.read_models import (
    ContinuationRequest,
    ConversationView,
    HistoryQuery,
    Page,
    PendingApproval,
    QuarantinedEvent,
    ReadModelView,
)

__all__ = ["ReadModels"]


class ReadModels(ReadModelView):
    """The read models' tables in one database, written through its dialect.

    With a store key, every column that holds content or names is sealed
    (the tenant is kept as a keyed hash, so the inbox can still look it up).
    """

    def __init__(
        self,
        dialect: Dialect,
        tracking: TrackingRecorders,
        index: SearchIndex,
        key: StoreKey | None = None,
    ) -> None:
        self.dialect = dialect
        """How statements are written for this database, and its transactions."""
        sealed = ColumnKey(key)
        self._tracking = TrackingTable(dialect, tracking)
        self._conversations = ConversationTables(dialect, sealed)
        self._timeline = TimelineTable(dialect, sealed)
        self._inbox = InboxTables(dialect, sealed)
        self._list = ConversationListTable(dialect, sealed, index)
        self._quarantine = QuarantineTable(dialect, sealed)
        self._settings = SettingsTable(dialect)
        self._log_named = False

    def attach_blobs(self, blobs: Any, policy: Any) -> None:
        """Keep attachments in the messages and timeline as references to ``blobs`` (the log's)."""
        self._conversations.attached = self._timeline.attached = ReadModelBlobs(blobs, policy)

    # -- tables and tracking ------------------------------------------------------------

    def create_table(self) -> None:
        """Create ``eventsourcing``'s tracking table, then the read models' tables."""
        self._tracking.recorder.create_table()
        self.dialect.create(
            [
                *ConversationTables.DDL,
                *TimelineTable.DDL,
                *InboxTables.DDL,
                *QuarantineTable.DDL,
                *SettingsTable.DDL,
                *self._list.index.LIST_DDL,
            ]
        )

    def insert_tracking(self, tracking: Tracking) -> None:
        """Record a tracking position (``eventsourcing``'s guarded upsert)."""
        self._tracking.recorder.insert_tracking(tracking)

    def max_tracking_id(self, application_name: str) -> int | None:
        """The application's tracking position, or None."""
        return self._tracking.recorder.max_tracking_id(application_name)

    def has_tracking_id(self, application_name: str, notification_id: int | None) -> bool:
        """Whether the position is at ``notification_id`` or past it (None: always)."""
        return self._tracking.recorder.has_tracking_id(application_name, notification_id)

    # -- writing ----------------------------------------------------------------------

    def apply_page(
        self, page: Page, tracking: Tracking, *, after: int, overwrite: bool = False
    ) -> None:
        """Write the page and move the tracking record from ``after`` to its last event, in one transaction.

        Timeline rows already there mean the rows are ahead of the tracking
        position: RowsAheadError, unless ``overwrite`` says to replace them.
        """
        with self.dialect.transaction(commit=True) as c:
            self._tracking.advance(c, tracking, after)
            self._conversations.write(c, page.conversations.values(), rewrite=overwrite)
            self._timeline.write(c, page.timeline, after=after, overwrite=overwrite)
            retimed = self._timeline.rewrite(c, page.retimed)
            self._inbox.replace(c, page)
            self._list.write(c, page.summaries)
            if retimed:
                self._list.scrub(c)
            for key in page.erased:
                self.purge(c, key)

    def purge(self, c: Any, conversation_id: UUID) -> None:
        """In transaction ``c``: delete the conversation's rows; its timeline keeps kinds, actors, times."""
        key = str(conversation_id)
        self._list.purge(c, key)
        self._conversations.purge(c, key)
        self._inbox.purge(c, key)
        self._quarantine.purge(c, key)
        self._timeline.erase(c, key)

    def rename_actor(self, c: Any, conversation_id: UUID, actor: str, name: str) -> None:
        """In transaction ``c``: the conversation's timeline names ``name`` where it named ``actor``."""
        self._timeline.rename_actor(c, str(conversation_id), actor, name)

    def conversations_of(self, actor: str) -> set[UUID]:
        """The conversations whose timeline has an entry by ``actor`` (erased ones too)."""
        return {UUID(key) for key in self._timeline.conversations_of(actor)}

    def quarantine(self, event: QuarantinedEvent, tracking: Tracking, *, after: int) -> None:
        """Record ``event`` as quarantined and move the tracking position past it, in one transaction."""
        with self.dialect.transaction(commit=True) as c:
            self._tracking.advance(c, tracking, after)
            self._quarantine.record(c, event)

    def reset(self, application_name: str) -> None:
        """Empty every read model and forget the tracking position, in one transaction."""
        with self.dialect.transaction(commit=True) as c:
            self._reset(c, application_name)

    def _reset(self, c: Any, application_name: str) -> None:
        self.dialect.run(c, _deletes(TABLES))
        self.dialect.run(c, (*QuarantineTable.RESET, *self._list.index.RESET))
        self._tracking.forget(c, application_name)

    def drop_old_layout(self, application_name: str) -> bool:
        """Drop the read-model tables an older version laid out; whether there were any.

        Their rows are derived from the log: in the same transaction the read
        models are emptied and the tracking position forgotten, so that the
        next catch-up projects them again, in this layout (no reader sees the
        new tables empty while the position says they are current).
        """
        with self.dialect.transaction(commit=True) as c:
            old = self.dialect.old_tables(c)
            for name in old:
                c.execute(self.dialect.drop_table(name))
            if old:
                self._reset(c, application_name)
        return bool(old)

    # -- settings -----------------------------------------------------------------------

    def setting(self, name: str, default: str) -> str:
        """The store's setting ``name``; ``default`` is recorded first if there is none (first writer wins)."""
        return self._settings.setting(name, default)

    def stored_setting(self, name: str) -> str | None:
        """The store's setting ``name``, or None."""
        return self._settings.stored_setting(name)

    def bookkeeping(self) -> tuple[dict[str, Any], dict[str, str]]:
        """Every row of the tracking table (position by name) and of the settings (for ``verify``)."""
        return self._tracking.rows(), self._settings.rows()

    # -- reading ----------------------------------------------------------------------

    def quarantined(self) -> list[QuarantinedEvent]:
        """The events quarantined since the last rebuild, oldest first."""
        return self._quarantine.events()

    def conversation(self, conversation_id: UUID) -> ConversationView | None:
        """The conversation's row, or None if it was never projected."""
        return self._conversations.read(conversation_id)

    def name_log(self, events_table: str) -> None:
        """The log's events table, in this database: ``conversation_at_head`` reads it too."""
        self.dialect.name_log(events_table)
        self._log_named = True

    def conversation_at_head(
        self, conversation_id: UUID
    ) -> tuple[ConversationView | None, int] | None:
        """The conversation's row and the log's newest version of it, in one query (see
        ``ReadModelView``); None until ``name_log`` named the log's table."""
        if not self._log_named:
            return None
        return self._conversations.read_at_head(conversation_id)

    def history(self, conversation_id: UUID, query: HistoryQuery) -> list[TimelineEntry]:
        """Timeline entries of one conversation, in order."""
        return self._timeline.history(conversation_id, query)

    def pending_approvals(self, tenant: str) -> list[PendingApproval]:
        """The tenant's tool calls awaiting approval, oldest first."""
        return self._inbox.pending_approvals(tenant)

    def pending_continuations(self, tenant: str) -> list[ContinuationRequest]:
        """The tenant's pending continuation requests, oldest first."""
        return self._inbox.pending_continuations(tenant)

    def list_conversations(self, query: ListQuery) -> ConversationList:
        """One page of the tenant's conversations, newest change first."""
        return self._list.list_conversations(query)

    def idle_conversations(
        self, before: datetime, tenant: str | None
    ) -> list[tuple[UUID, datetime]]:
        """(id, last change) of the conversations (of ``tenant``, or all) unchanged since ``before``, oldest first."""
        return self._list.idle_conversations(before, tenant)

    def list_missing(self) -> bool:
        """Whether conversations were projected before the conversation list existed (it then needs a rebuild)."""
        with self.dialect.transaction(commit=False) as c:
            c.execute(
                self.dialect.statement(
                    "SELECT 1 AS found FROM {conversations}"
                    " WHERE NOT EXISTS (SELECT 1 FROM {list}) LIMIT 1"
                )
            )
            return c.fetchone() is not None

    def counts(self) -> dict[str, int]:
        """Rows per read model."""
        found = {}
        with self.dialect.transaction(commit=False) as c:
            for name in TABLES:
                c.execute(self.dialect.statement(f"SELECT COUNT(*) AS n FROM {{{name}}}"))
                found[name] = c.fetchone()["n"]
        return found


def _deletes(names: Iterable[str]) -> list[str]:
    """Statements that empty the tables ``names``."""
    return [f"DELETE FROM {{{name}}}" for name in names]
