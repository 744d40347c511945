"""Test-only views of what a ``ConversationStore`` keeps: stored events, snapshots, full replays.

These reach below the public API into the store's ``eventsourcing`` application
(``store.log``) on purpose: the properties they serve are about the stored log
itself (it never changes, folding it from scratch rebuilds the live state,
snapshots change nothing). Keeping every such access here means one place to
update when the store's internals move.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from uuid import UUID

import psycopg
from eventsourcing.application import project_aggregate
from psycopg import sql

from chatledger import ConversationStore
from chatledger.domain.aggregate import Conversation, conversation_id
from chatledger.domain.events import ChunksReceived, ConversationEvent

__all__ = [
    "aggregate_id",
    "as_json",
    "drop_snapshots",
    "load_with_snapshots",
    "replay_from_scratch",
    "snapshot_versions",
    "stored_chunk_count",
    "stored_events",
    "stored_records",
    "writes_blocked",
]


def as_json(value: Any) -> str:
    """``value`` as canonical JSON: equal text is JSON-equal (``1``, ``1.0``, ``true`` differ)."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, allow_nan=False)


def aggregate_id(store: ConversationStore, chat_id: str, tenant: str | None = None) -> UUID:
    """The aggregate id the store files ``chat_id`` under."""
    return conversation_id(tenant or store.tenant, chat_id)


def stored_records(
    store: ConversationStore, chat_id: str, tenant: str | None = None
) -> list[tuple[int, str, bytes]]:
    """The conversation's stored events exactly as recorded: (version, topic, stored bytes)."""
    recorder: Any = store.log.events.recorder
    return [
        (record.originator_version, record.topic, bytes(record.state))
        for record in recorder.select_events(aggregate_id(store, chat_id, tenant))
    ]


def stored_events(
    store: ConversationStore, chat_id: str, tenant: str | None = None
) -> list[ConversationEvent]:
    """The conversation's stored events, decoded."""
    return list(store.log.events.get(aggregate_id(store, chat_id, tenant)))


def stored_chunk_count(store: ConversationStore, chat_id: str, tenant: str | None = None) -> int:
    """How many stream chunks (of any verdict) the log holds for the conversation."""
    return sum(
        len(event.chunks)
        for event in stored_events(store, chat_id, tenant)
        if isinstance(event, ChunksReceived)
    )


def replay_from_scratch(
    store: ConversationStore, chat_id: str, version: int | None = None
) -> Conversation:
    """Fold every stored event from the first one (no snapshot), up to ``version``."""
    events = store.log.events.get(aggregate_id(store, chat_id), lte=version)
    conversation = project_aggregate(None, events)
    assert isinstance(conversation, Conversation), f"no conversation {chat_id!r} at {version}"
    return conversation


def load_with_snapshots(
    store: ConversationStore, chat_id: str, version: int | None = None
) -> Conversation:
    """Load the conversation the way the store does: newest snapshot, then later events."""
    conversation = store.log.repository.get(aggregate_id(store, chat_id), version=version)
    assert isinstance(conversation, Conversation)
    return conversation


def snapshot_versions(store: ConversationStore, chat_id: str) -> list[int]:
    """Versions at which the conversation has a stored snapshot."""
    assert store.log.snapshots is not None
    recorder: Any = store.log.snapshots.recorder
    return [
        record.originator_version for record in recorder.select_events(aggregate_id(store, chat_id))
    ]


def drop_snapshots(store: ConversationStore) -> None:
    """Delete every stored snapshot, so the next load folds the whole log."""
    assert store.log.snapshots is not None
    recorder: Any = store.log.snapshots.recorder
    datastore = getattr(recorder, "datastore", None)
    if datastore is None:  # eventsourcing.popo (memory://): an in-memory index
        with recorder._database_lock:
            recorder._stored_events_index.clear()
        return
    table = recorder.events_table_name
    with datastore.transaction(commit=True) as cursor:
        if type(recorder).__module__.endswith("sqlite"):
            cursor.execute(f"DELETE FROM {table}")
        else:
            cursor.execute(f'DELETE FROM "{datastore.schema or "public"}"."{table}"')


@contextmanager
def writes_blocked(store: ConversationStore) -> Iterator[None]:
    """Hold a lock from another connection: the store's commits fail after its lock timeout.

    SQLite: an exclusive transaction on the file; PostgreSQL: an exclusive lock on
    the events table. (memory:// has no such thing.)
    """
    config = store.config
    if config.backend == "sqlite":
        blocker = sqlite3.connect(str(config.sqlite_path), isolation_level=None)
        blocker.execute("BEGIN EXCLUSIVE")
        try:
            yield
        finally:
            blocker.execute("ROLLBACK")
            blocker.close()
        return
    assert config.backend == "postgres", "only SQLite and PostgreSQL stores can be blocked"
    env = config.env
    table = store.log.events.recorder.events_table_name  # type: ignore[attr-defined]
    with psycopg.connect(
        dbname=env["POSTGRES_DBNAME"],
        host=env["POSTGRES_HOST"],
        port=int(env["POSTGRES_PORT"]),
        user=env["POSTGRES_USER"],
        password=env["POSTGRES_PASSWORD"] or None,
    ) as blocker:
        blocker.execute(
            sql.SQL("LOCK TABLE {} IN ACCESS EXCLUSIVE MODE").format(
                sql.Identifier(env["POSTGRES_SCHEMA"], table)
            )
        )
        yield
        blocker.rollback()
