"""The ``eventsourcing`` application that holds every conversation's event log."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError, Application
from eventsourcing.persistence import IntegrityError

from chatledger.domain.aggregate import Conversation
from chatledger.domain.errors import ConcurrentWriteError, ConversationNotFoundError
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
        assert isinstance(conversation, Conversation)
        return conversation

    def record(self, conversation: Conversation) -> None:
        """Save pending events in one transaction; a version clash becomes ConcurrentWriteError."""
        try:
            self.save(conversation)
        except IntegrityError:
            raise ConcurrentWriteError(conversation.state.chat_id) from None

    def snapshot(self, conversation: Conversation) -> None:
        """Store a snapshot of the (saved) conversation and drop older ones."""
        assert self.snapshots is not None
        try:
            self.snapshots.put([ConversationSnapshot.take(conversation)])
        except IntegrityError:
            return  # another writer snapshotted this very version
        self._prune_snapshots(conversation.id, conversation.version)

    def _prune_snapshots(self, aggregate_id: UUID, keep_from: int) -> None:
        """Keep only the newest snapshot: older ones cost space and are never read first."""
        assert self.snapshots is not None
        recorder: Any = self.snapshots.recorder
        table = getattr(recorder, "events_table_name", None)
        datastore = getattr(recorder, "datastore", None)
        if table is None or datastore is None:
            return  # in-memory recorder: nothing on disk
        with datastore.transaction(commit=True) as cursor:
            if type(recorder).__module__.endswith("sqlite"):
                cursor.execute(
                    f"DELETE FROM {table} WHERE originator_id = ? AND originator_version < ?",  # noqa: S608
                    (aggregate_id.hex, keep_from),
                )
            else:
                schema = getattr(datastore, "schema", "public") or "public"
                cursor.execute(
                    f'DELETE FROM "{schema}"."{table}" WHERE originator_id = %s AND originator_version < %s',  # noqa: S608
                    (aggregate_id, keep_from),
                )
