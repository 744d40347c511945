"""The ``eventsourcing`` application that holds every conversation's event log."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError, Application
from eventsourcing.persistence import IntegrityError, PersistenceError
import psycopg
from psycopg import sql

from chatledger.domain.aggregate import Conversation
from chatledger.domain.errors import (
    ConcurrentWriteError,
    ConversationNotFoundError,
    StoreUnavailableError,
)
from chatledger.domain.snapshot import ConversationSnapshot

__all__ = ["ConversationLog"]


class ConversationLog(Application):
    """Event store of conversations (tables ``chatledger_events`` / ``chatledger_snapshots`` on PostgreSQL)."""

    name = "chatledger"
    is_snapshotting_enabled = True
    snapshot_class = ConversationSnapshot
    env = {  # noqa: RUF012 (eventsourcing reads this class attribute)
        "MAPPER_TOPIC": "chatledger.adapters.codec:PydanticMapper",
        "COMPRESSOR_TOPIC": "chatledger.adapters.codec:ChunkCompressor",
    }

    def load(self, aggregate_id: UUID, tenant: str, chat_id: str, version: int | None = None) -> Conversation:
        """The conversation (at ``version``), or ConversationNotFoundError."""
        try:
            conversation = self.repository.get(aggregate_id, version=version)
        except AggregateNotFoundError:
            raise ConversationNotFoundError(tenant, chat_id) from None
        except (PersistenceError, psycopg.Error, OSError) as error:
            raise StoreUnavailableError(f"cannot read conversation {chat_id!r}: {error}") from error
        assert isinstance(conversation, Conversation)
        return conversation

    def record(self, conversation: Conversation) -> None:
        """Save pending events in one transaction.

        A version clash becomes ConcurrentWriteError, any other database failure
        StoreUnavailableError. Either way nothing was written, and the
        in-memory ``conversation`` is now ahead of the log: reload it.
        """
        try:
            self.save(conversation)
        except IntegrityError:
            raise ConcurrentWriteError(conversation.state.chat_id) from None
        except (PersistenceError, psycopg.Error, OSError, ValueError) as error:
            raise StoreUnavailableError(f"the write was not recorded: {error}") from error

    def snapshot(self, conversation: Conversation) -> None:
        """Store a snapshot of the (saved) conversation and drop older ones, in one transaction.

        Only the newest snapshot is kept: older ones cost space and are never
        read first (a past version replays from the start instead).
        """
        assert self.snapshots is not None
        snapshot = ConversationSnapshot.take(conversation)
        recorder: Any = self.snapshots.recorder
        datastore = getattr(recorder, "datastore", None)
        if datastore is None:  # in-memory recorder
            self.snapshots.put([snapshot])
            return
        stored = self.snapshots.mapper.to_stored_event(snapshot)
        table = recorder.events_table_name
        try:
            with datastore.transaction(commit=True) as cursor:
                if type(recorder).__module__.endswith("sqlite"):
                    key = conversation.id.hex
                    cursor.execute(
                        f"INSERT INTO {table} VALUES (?,?,?,?)",  # noqa: S608
                        (key, stored.originator_version, stored.topic, stored.state),
                    )
                    cursor.execute(
                        f"DELETE FROM {table} WHERE originator_id = ? AND originator_version < ?",  # noqa: S608
                        (key, stored.originator_version),
                    )
                else:
                    name = sql.Identifier(datastore.schema or "public", table)
                    cursor.execute(
                        sql.SQL("INSERT INTO {} VALUES (%s, %s, %s, %s)").format(name),
                        (conversation.id, stored.originator_version, stored.topic, stored.state),
                    )
                    cursor.execute(
                        sql.SQL("DELETE FROM {} WHERE originator_id = %s AND originator_version < %s").format(name),
                        (conversation.id, stored.originator_version),
                    )
        except (IntegrityError, psycopg.IntegrityError):
            return  # another writer snapshotted this very version
