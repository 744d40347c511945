"""The ``eventsourcing`` application that holds every conversation's event log."""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import partial
from typing import Any, cast
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError, Application
from eventsourcing.persistence import IntegrityError, Mapper, StoredEvent
from eventsourcing.utils import get_topic, resolve_topic

from chatledger.adapters.persistence.blobs import BlobStore, lift_policy
from chatledger.adapters.persistence.codec import PydanticMapper
from chatledger.adapters.persistence.config import StoreConfig
from chatledger.adapters.persistence.data_keys import DataKeys
from chatledger.adapters.persistence.errors import STORAGE_ERRORS
from chatledger.adapters.persistence.fork_prefix import resolve_fork
from chatledger.adapters.persistence.store_key import StoreKey
from chatledger.domain.aggregate import Conversation
from chatledger.domain.errors import (
    ChatLedgerError,
    ConcurrentWriteError,
    ConversationErasedError,
    ConversationNotFoundError,
    StoredDataError,
    StoreUnavailableError,
)
from chatledger.domain.snapshot import ConversationSnapshot

__all__ = ["ConversationLog"]

_log = logging.getLogger("chatledger.store")

_WRITE_ERRORS: tuple[type[BaseException], ...] = (*STORAGE_ERRORS, ValueError)
"""What a failed write raises below the log (a database error, or a value it cannot store)."""


class ConversationLog(Application[UUID]):
    """Event store of conversations (tables ``chatledger_events`` / ``chatledger_snapshots`` on PostgreSQL)."""

    name = "chatledger"
    is_snapshotting_enabled = True
    snapshot_class = ConversationSnapshot
    env = {  # noqa: RUF012 (eventsourcing reads this class attribute)
        "MAPPER_TOPIC": "chatledger.adapters.persistence.codec:PydanticMapper",
        "COMPRESSOR_TOPIC": "chatledger.adapters.persistence.codec:ChunkCompressor",
    }

    def __init__(
        self, config: StoreConfig, env: dict[str, str] | None = None, key: StoreKey | None = None
    ) -> None:
        self.config = config
        """Where the log lives (backend, connection settings)."""
        self._key = key
        self.datastore: Any = None
        """The database's ``eventsourcing`` datastore, shared by the log, data keys and read models (None in memory)."""
        self.data_keys: DataKeys
        """The conversations' data keys and the erasures register (made with the mapper)."""
        self.on_commit: list[Callable[[list[Any], list[int]], None]] = []
        """Called after each commit with its events (as committed: domain events) and their
        positions in the store (empty when the recorder gives none); see ``_put``."""
        super().__init__(env={**config.env, **(env or {})})

    def construct_mapper(self) -> Mapper[UUID]:
        """The ``MAPPER_TOPIC`` mapper, encrypting with the store key given (none without one).

        The key is given to the constructor, not read from ``CIPHER_*``
        settings: the data keys and the read models are made from the same
        value. The data keys share the log's database connections (made
        before the mapper, which is made before the recorder).
        """
        self.datastore = getattr(self.factory, "datastore", None)
        self.data_keys = DataKeys(self.datastore, self.config.backend, self._key)
        mapper_class = resolve_topic(self.env.get("MAPPER_TOPIC") or get_topic(PydanticMapper))
        assert issubclass(mapper_class, PydanticMapper), mapper_class
        mapper: PydanticMapper = mapper_class(
            transcoder=self.construct_transcoder(),
            compressor=self.factory.compressor(),
            cipher=None if self._key is None else self._key.cipher(),
            data_keys=self.data_keys,
        )
        mapper.resolve = partial(resolve_fork, self)
        if self.datastore is not None and self.config.backend in ("sqlite", "postgres"):
            mapper.blobs = BlobStore(self.datastore, self.config.backend, self.data_keys)
            mapper.lift_policy = lift_policy(self.env)
        return mapper

    # -- the reader port: what followers and listeners need ---------------------

    def select_events(
        self,
        aggregate_id: UUID,
        *,
        gt: int | None = None,
        lte: int | None = None,
        desc: bool = False,
        limit: int | None = None,
    ) -> list[StoredEvent]:
        """Stored (still encoded) events of one conversation, one indexed query."""
        try:
            return list(
                self.recorder.select_events(aggregate_id, gt=gt, lte=lte, desc=desc, limit=limit)
            )
        except STORAGE_ERRORS as error:
            raise StoreUnavailableError(f"cannot read the log: {error}") from error

    def decode(self, stored: StoredEvent) -> Any:
        """The domain event (decrypted, decompressed, upcast) of a stored event."""
        return self.mapper.to_domain_event(stored)

    def touched_after(self, position: int, limit: int) -> list[tuple[int, UUID]]:
        """(position, conversation id) of the events recorded after ``position`` in the whole store, in order."""
        try:
            found = self.recorder.select_notifications(position, limit, inclusive_of_start=False)
        except STORAGE_ERRORS as error:
            raise StoreUnavailableError(f"cannot read the log: {error}") from error
        # The recorders store UUID originator ids (eventsourcing types them UUID | str).
        return [(notification.id, cast(UUID, notification.originator_id)) for notification in found]

    def head(self) -> int:
        """The id of the last event recorded in the whole store (0 when empty)."""
        return int(self.recorder.max_notification_id() or 0)

    # -- conversations ------------------------------------------------------------

    def load(
        self, aggregate_id: UUID, tenant: str, chat_id: str, version: int | None = None
    ) -> Conversation:
        """The conversation (at ``version``), or ConversationNotFoundError.

        Events that cannot be folded (a damaged log: an event changed, lost or
        moved from another conversation) raise StoredDataError naming the
        conversation, never what the fold tripped on.
        """
        try:
            conversation: Any = self.repository.get(aggregate_id, version=version)
        except AggregateNotFoundError:
            raise ConversationNotFoundError(tenant, chat_id) from None
        except ConversationErasedError:
            raise self.erased_error(aggregate_id, tenant, chat_id) from None
        except STORAGE_ERRORS as error:
            raise StoreUnavailableError(f"cannot read conversation {chat_id!r}: {error}") from error
        except ChatLedgerError:
            raise
        except Exception as error:  # the fold of a damaged log: name it, do not crash the reader
            raise _damaged(chat_id, f"{type(error).__name__}: {error}") from error
        if not isinstance(conversation, Conversation) or (
            conversation.state.tenant,
            conversation.state.chat_id,
        ) != (tenant, chat_id):
            raise _damaged(chat_id, "its events are those of another conversation")
        return conversation

    def erased_error(
        self, aggregate_id: UUID, tenant: str, chat_id: str
    ) -> ConversationErasedError:
        """The error reads of an erased conversation answer: when, by whom and why, if recorded."""
        erasure = self.data_keys.erasure(aggregate_id)
        if erasure is None:
            return ConversationErasedError(tenant, chat_id)
        return erasure.error(tenant, chat_id)

    def load_at(self, aggregate_id: UUID, version: int) -> Conversation:
        """The conversation as it stood at ``version`` (for the projector).

        A database that cannot be reached raises StoreUnavailableError; an
        event that cannot be read raises what its decoding raised.
        """
        try:
            conversation: Any = self.repository.get(aggregate_id, version=version)
        except STORAGE_ERRORS as error:
            raise StoreUnavailableError(f"cannot read the log: {error}") from error
        assert isinstance(conversation, Conversation)
        return conversation

    def has_events_after(self, aggregate_id: UUID, version: int) -> bool:
        """Whether the log holds events of this conversation after ``version`` (one indexed query)."""
        try:
            return bool(self.recorder.select_events(aggregate_id, gt=version, limit=1))
        except STORAGE_ERRORS as error:
            raise StoreUnavailableError(f"cannot read the log: {error}") from error

    def record(self, conversation: Conversation, *, snapshot: bool = False) -> tuple[int, int]:
        """Save pending events (and, if asked, a snapshot of the result) in one transaction.

        Returns the stored bytes of the events and of the snapshot (0 when
        none was written: a fork's prefix is its origin's), for the snapshot
        policy. A version clash becomes ConcurrentWriteError, any other
        database failure StoreUnavailableError. Either way nothing was
        written, and the in-memory ``conversation`` is now ahead of the log:
        reload it.
        """
        extra: dict[str, Any] = {}
        snapshot = (
            snapshot and conversation.state.forked_from is None
        )  # a fork's prefix is its origin's
        assert self.snapshots is not None
        stored = (
            self.snapshots.mapper.to_stored_event(ConversationSnapshot.take(conversation))
            if snapshot
            else None
        )
        recorder: Any = self.snapshots.recorder
        if stored is not None and hasattr(recorder, "datastore"):
            extra = {"snapshot": stored, "snapshot_table": recorder.events_table_name}
        try:
            written = self._put(list(conversation.collect_events()), **extra)
        except IntegrityError:
            raise ConcurrentWriteError(conversation.state.chat_id) from None
        except ConversationErasedError:
            state = conversation.state
            raise self.erased_error(conversation.id, state.tenant, state.chat_id) from None
        except _WRITE_ERRORS as error:
            raise StoreUnavailableError(f"the write was not recorded: {error}") from error
        if stored is not None and not extra:
            recorder.insert_events([stored])  # in memory: nothing to prune
        return sum(written.values()), 0 if stored is None else len(stored.state)

    def _put(self, events: list[Any], **extra: Any) -> dict[UUID, int]:
        """What ``Application.save`` does with a conversation's (or a group's) events, without
        its layers this log does not use; returns the stored bytes written per conversation.

        ``save`` sorts what it is given by runtime ``Protocol`` checks (a few dozen
        microseconds a commit) and then offers the aggregates to a repository cache, interval
        snapshots and ``_notify``, none of which this log configures (the store keeps its own
        cache and snapshot policy; listeners are woken by the recorder).
        """
        assert not self.snapshotting_intervals and not self.repository.cache, "unused here"
        recordings = self.events.put(events, **extra)
        written: dict[UUID, int] = {}
        for recording in recordings:
            notification = recording.notification
            key = cast(UUID, notification.originator_id)
            written[key] = written.get(key, 0) + len(notification.state)
        if self.on_commit:
            positions = [recording.notification.id for recording in recordings]
            for hook in self.on_commit:
                try:
                    hook(events, positions)
                except Exception:  # committed all the same; a hook only speeds readers up
                    _log.exception("a commit hook failed")
        return written

    def encoded_snapshot(self, conversation: Conversation) -> StoredEvent | None:
        """A snapshot of the conversation as it is now, encoded for ``record_many``.

        None in memory (no database): commit such a conversation with ``record``.
        """
        assert self.snapshots is not None
        if not hasattr(self.snapshots.recorder, "datastore"):
            return None
        stored: StoredEvent = self.snapshots.mapper.to_stored_event(
            ConversationSnapshot.take(conversation)
        )
        return stored

    def record_many(
        self, events: list[Any], snapshots: list[StoredEvent] | None = None
    ) -> dict[UUID, int]:
        """Save events of several conversations (taken off them: ``collect_events``) in one
        transaction; returns the stored bytes of the events per conversation.

        One ``insert_events`` call: the recorders chain each conversation's
        events from its own previous link, encrypt each with its own data key
        (the mapper does, event by event), write the ``snapshots`` given
        (``encoded_snapshot``; each replaces its conversation's older one) and
        wake listeners once after the commit. Either everything is recorded or
        nothing is: a version clash of any conversation (another process
        wrote it meanwhile) becomes ConcurrentWriteError, an erased one
        ConversationErasedError, any other database failure
        StoreUnavailableError. After a failure every conversation the events
        came from is ahead of the log: reload each.
        """
        extra: dict[str, Any] = {}
        if snapshots:
            assert self.snapshots is not None
            recorder: Any = self.snapshots.recorder
            extra = {"snapshots": snapshots, "snapshot_table": recorder.events_table_name}
        try:
            return self._put(events, **extra)
        except IntegrityError:
            raise ConcurrentWriteError("(one of a group commit)") from None
        except _WRITE_ERRORS as error:
            raise StoreUnavailableError(f"the writes were not recorded: {error}") from error


def _damaged(chat_id: str, what: str) -> StoredDataError:
    return StoredDataError(
        f"conversation {chat_id[:80]!r} cannot be rebuilt from its events ({what[:300]}): the "
        "log is damaged; 'chatledger verify' names the damage"
    )
