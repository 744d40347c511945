"""chatledger's PostgreSQL persistence for ``eventsourcing``: the recorder (a commit's events, chain
links and snapshot in one transaction, sent in one round trip) and the factory (connections that
prepare no statements and start with the store's lock timeout)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from eventsourcing import postgres
from eventsourcing.persistence import (
    InterfaceError,
    Notification,
    OperationalError,
    PersistenceError,
    ProgrammingError,
    StoredEvent,
)
from eventsourcing.postgres import PostgresApplicationRecorder
from eventsourcing.utils import retry
from psycopg import sql
from psycopg.abc import Query
from psycopg.pq import TransactionStatus

from chatledger.adapters.persistence.blobs import postgres_blob_ddl
from chatledger.adapters.persistence.chain import (
    PREFIX_BYTES,
    HeadCache,
    chain_events,
    postgres_chain_ddl,
    split_link,
)
from chatledger.adapters.persistence.data_keys import (
    postgres_data_key_ddl,
)
from chatledger.adapters.persistence.feed import Feed
from chatledger.adapters.persistence.inserts import call_inserted, snapshots_of
from chatledger.adapters.persistence.rendered_sql import rendered
from chatledger.adapters.persistence.signed_heads import HeadSigner

__all__ = ["PostgresConversationRecorder", "PostgresFactory", "channel_of"]

_BEGIN, _COMMIT = b"BEGIN", b"COMMIT"
_IDLE = TransactionStatus.IDLE
_NAME_BYTES = 63
"""PostgreSQL's longest identifier (NAMEDATALEN - 1): a longer one is cut to it."""
_VALUES_ROWS = 32
"""Most events a commit inserts with its own ``VALUES`` statement (one rendered statement per count)."""
SESSION_LOCK_TIMEOUT = "_chatledger_session_lock_timeout"
"""Set (True) on a datastore whose connections start with its ``lock_timeout``
(``PostgresFactory``): its writers then need no ``SET LOCAL lock_timeout`` a transaction."""


def channel_of(schema: str | None, table: str) -> str:
    """The NOTIFY channel of the events table ``table`` in ``schema``.

    A channel belongs to the whole database, not to a schema: two stores in
    one database (one schema each) need channels of their own, or every
    commit of one wakes the listeners of the other for a read that finds
    nothing. The store in ``public`` keeps the table's name (the channel of
    earlier versions); another schema's is prefixed with the schema, and
    hashed when that would pass PostgreSQL's 63-byte identifier limit
    (which would cut two long names to one).
    """
    if not schema or schema == "public":
        return table
    name = f"{schema}_{table}"
    if len(name.encode()) <= _NAME_BYTES:
        return name
    digest = hashlib.sha256(f"{schema}.{table}".encode()).hexdigest()[:16]
    return f"{name.encode()[: _NAME_BYTES - 17].decode(errors='ignore')}_{digest}"


class PostgresConversationRecorder(PostgresApplicationRecorder):
    """PostgreSQL: events with their chain links, and the snapshot passed as ``snapshot=``, in one transaction.

    Writers take no table lock: the positions of concurrent transactions may
    commit out of order, and the feed (``select_notifications``,
    ``max_notification_id``) reads them so that no reader passes a position
    that could still be filled (``chatledger.adapters.persistence.feed``).
    The NOTIFY that wakes listeners follows the COMMIT as a transaction of
    its own (nothing to flush, about as cheap as ``SELECT 1``), sent with it:
    inside the transaction it would hold PostgreSQL's server-wide NOTIFY lock
    through the commit's flush to disk, which serialises commits again.
    """

    def __init__(self, datastore: Any, **kwargs: Any) -> None:
        super().__init__(datastore, **kwargs)
        self.feed = Feed(datastore, self.events_table_name)
        """The gap-safe reading of the events table (its ``settle_seconds`` bounds a read's wait)."""
        # No LOCK TABLE; the lock_timeout a transaction, unless every connection starts with it.
        session_timeout = getattr(datastore, SESSION_LOCK_TIMEOUT, False)
        self.lock_table_statements = [] if session_timeout else self.lock_table_statements[:1]
        self.channel_name = channel_of(datastore.schema, self.events_table_name)
        # Run at every commit: rendered once (see ``rendered_sql``).
        self.insert_events_statement = rendered(self.insert_events_statement)  # type: ignore[assignment]
        self._notify: Query = rendered(
            sql.SQL("NOTIFY {}").format(sql.Identifier(self.channel_name))
        )
        self._rendered: dict[Any, bytes] = {}
        """The statements built per row count or per snapshot table, rendered once each."""
        self.sql_create_statements.extend(
            postgres_chain_ddl(datastore.schema, self.events_table_name)
        )
        self.sql_create_statements.extend(postgres_data_key_ddl(datastore.schema))
        self.sql_create_statements.extend(postgres_blob_ddl(datastore.schema))
        self._previous = sql.SQL(
            f"SELECT substring(state from 1 for {PREFIX_BYTES}) AS prefix FROM {{}} "
            "WHERE originator_id = %s AND originator_version = %s"
        ).format(sql.Identifier(datastore.schema, self.events_table_name))
        self.heads = HeadCache()
        self.signer: HeadSigner | None = None
        """Signs each commit's new heads (signed writes; None: off)."""
        self.on_inserted: list[Callable[[Sequence[Any], Sequence[int]], None]] = []
        """Called once a commit is done, before listeners are woken, with its stored events and
        their positions (in-process followers mark what they are fed: ``Fanout``)."""
        self.marking: list[Callable[[Sequence[Any]], bool]] = []
        """Whether an ``on_inserted`` hook marks some of a commit's events (``Fanout.feeds``):
        its NOTIFY then waits for the hooks; otherwise it goes with the commit."""

    @retry((InterfaceError, OperationalError), max_attempts=10, wait=0.2)
    def insert_events(self, stored_events: Any, **kwargs: Any) -> Any:
        """Insert in one transaction, sent in one round trip; remember the new chain heads.

        eventsourcing's pipeline waits for the server five times a commit
        (after BEGIN, after the INSERT, twice more around the COMMIT) and the
        NOTIFY after it took a sixth, on a connection of its own. Here BEGIN,
        the writes, COMMIT and the NOTIFY (its own transaction after the
        commit, see the class docstring) are queued and sent with one sync;
        only a chain link not in ``heads`` (a read) waits in between. A failed
        statement skips the rest (the COMMIT and the NOTIFY with it) and the
        transaction is rolled back. When this process follows one of the
        conversations written (``marking``), the NOTIFY waits for the
        ``on_inserted`` hooks instead, sent on its own as before.
        """
        new_heads: dict[Any, tuple[int, bytes]] = {}
        kwargs["new_heads"] = new_heads
        late = any(marks(stored_events) for marks in self.marking)
        notify = self.wake_listeners and not late
        ids = self._insert_in_one_trip(stored_events, notify, **kwargs) if stored_events else []
        self.heads.update(new_heads)
        call_inserted(self.on_inserted, stored_events, ids)  # before a late NOTIFY wakes listeners
        if late and self.wake_listeners:
            self._wake_listeners()
        return ids

    def _wake_listeners(self) -> None:
        """NOTIFY the channel after the commit; a lost one only delays readers (they re-check on their own)."""
        try:
            with self.datastore.get_connection() as conn:
                conn.execute(self._notify)  # a transaction that writes nothing: no flush
        except PersistenceError:
            pass  # the events are committed; listeners poll as well

    def _once(self, key: Any, statement: Callable[[], Query]) -> bytes:
        """``statement()`` rendered, once for each ``key``."""
        found = self._rendered.get(key)
        if found is None:
            found = self._rendered[key] = rendered(statement())
        return found

    def _insert_in_one_trip(self, stored_events: Any, notify: bool, **kwargs: Any) -> list[int]:
        with self.datastore.get_connection() as conn:
            assert conn.autocommit
            curs = conn.cursor()
            try:
                with conn.pipeline():  # sent and synced as the block ends: a failure raises there
                    conn.execute(_BEGIN)
                    with conn.cursor() as first:
                        self._insert_events(first, stored_events, **kwargs)
                    self._insert_stored_events(curs, stored_events, **kwargs)
                    conn.execute(_COMMIT)
                    if notify:
                        conn.execute(self._notify)
                ids = [row["notification_id"] for row in curs.fetchall()]
            except BaseException:
                if conn.info.transaction_status != _IDLE:
                    conn.rollback()
                raise
            finally:
                curs.close()
        if len(ids) != len(stored_events):
            raise ProgrammingError(f"{len(ids)} positions for {len(stored_events)} events")
        return ids

    wake_listeners = True
    """Send the NOTIFY that wakes listeners after each commit (False: they only poll)."""

    def _notify_channel(self, curs: Any) -> None:
        """Nothing inside the transaction (the NOTIFY follows the COMMIT: see the class docstring)."""

    @retry((InterfaceError, OperationalError), max_attempts=10, wait=0.2)
    def select_notifications(
        self,
        start: int | None,
        limit: int,
        stop: int | None = None,
        topics: Sequence[str] = (),
        *,
        inclusive_of_start: bool = True,
    ) -> list[Notification]:
        """Events in position order from ``start``, never past a position a writer in flight may still fill."""
        after = 0 if start is None else (start - 1 if inclusive_of_start else start)
        found = self.feed.select(after, limit, stop)
        if topics:
            found = [notification for notification in found if notification.topic in topics]
        return found

    @retry((InterfaceError, OperationalError), max_attempts=10, wait=0.2)
    def max_notification_id(self) -> int | None:
        """The largest position below which no event can still appear (None when the log is empty)."""
        return self.feed.head() or None

    def _insert_stored_events(self, curs: Any, stored_events: Any, **kwargs: Any) -> None:
        """Put each event's link in front of its state, then insert as eventsourcing does.

        The previous event read here is committed and immutable (the
        conversation was loaded from it); a concurrent writer of the same
        version fails on the primary key as before.
        """

        def previous_of(key: Any, version: int) -> bytes | None:
            curs.execute(self._previous, (key, version))
            row = curs.fetchone()
            return None if row is None else split_link(bytes(row["prefix"]))[0]

        chained, heads = chain_events(stored_events, previous_of, self.heads)
        kwargs.get("new_heads", {}).update(heads)
        if self.signer is not None and heads:  # signed writes: same transaction, own cursor
            with curs.connection.cursor() as other:  # (``curs`` returns the new positions)
                self.signer.write(other, heads)
        self._insert_rows(curs, chained, **kwargs)

    def _insert_rows(self, curs: Any, chained: Sequence[StoredEvent], **kwargs: Any) -> None:
        """Insert the chained events; the cursor then holds their positions, in order.

        A commit's few events go as one ``INSERT ... VALUES`` with the states as binary
        parameters: eventsourcing's ``unnest`` of an array of its composite type has psycopg
        write every state as hex text inside a composite literal, which the server parses
        back (a third more of the client's time a commit). More rows (a large group
        commit) take eventsourcing's statement.
        """
        rows = len(chained)
        if rows > _VALUES_ROWS or self.datastore.originator_id_type != "uuid":
            super()._insert_stored_events(curs, chained, **kwargs)
            return
        self._lock_table(curs)  # SET LOCAL lock_timeout, unless the connection has it
        table = (self.datastore.schema, self.events_table_name)
        statement = self._once(rows, partial(_values_insert, table, rows))
        params: list[Any] = []
        for event in chained:
            params += (event.originator_id, event.originator_version, event.topic, event.state)
        curs.execute(statement, params)

    def _insert_events(self, curs: Any, stored_events: Any, **kwargs: Any) -> None:
        super()._insert_events(curs, stored_events, **kwargs)
        also = kwargs.get("also")
        if also is not None:
            also(curs)
        for snapshot in snapshots_of(kwargs):
            name = kwargs["snapshot_table"]
            # The older snapshot is dropped in the statement that writes the new one: one
            # statement fewer a snapshot (the DELETE sees the table as it was before the INSERT).
            curs.execute(
                self._once(name, partial(_replace_snapshot, (self.datastore.schema, name))),
                (
                    snapshot.originator_id,
                    snapshot.originator_version,
                    snapshot.originator_id,
                    snapshot.originator_version,
                    snapshot.topic,
                    snapshot.state,
                ),
            )


class PostgresFactory(postgres.PostgresFactory):
    """PostgreSQL persistence with chatledger's recorder, on connections that prepare no statements.

    ``eventsourcing`` asks psycopg to prepare its statements. psycopg then
    remembers, per connection, which statements the server holds; when the
    two disagree (seen under concurrent version clashes, where a pipelined
    transaction aborts), every later use of that statement on that connection
    fails with "prepared statement ... does not exist", reads and writes
    alike. Turning preparation off removes that failure; the statements are
    short and planned in microseconds.
    """

    application_recorder_class = PostgresConversationRecorder

    def __init__(self, env: Any) -> None:
        super().__init__(env)
        # psycopg: prepare_threshold=None disables preparing, even when asked per statement.
        kwargs = self.datastore.pool.kwargs
        assert isinstance(kwargs, dict)  # eventsourcing gives the pool a plain dict
        kwargs["prepare_threshold"] = None
        # Every connection starts with the store's lock_timeout (what eventsourcing sets with
        # SET LOCAL in each write transaction: one statement a commit fewer; see the recorder).
        options = [f"-c lock_timeout={int(self.datastore.lock_timeout)}s"]
        # ?synchronous_commit= in the store URL (see config.SYNCHRONOUS_COMMIT_MODES).
        mode = self.env.get("POSTGRES_SYNCHRONOUS_COMMIT") or "on"
        if mode != "on":
            options.append(f"-c synchronous_commit={mode}")
        kwargs["options"] = " ".join(options)
        setattr(self.datastore, SESSION_LOCK_TIMEOUT, True)


def _replace_snapshot(table: tuple[str, str]) -> sql.Composed:
    """Write a snapshot (its id and version twice, then topic and state) and drop the older ones
    (``table``: schema and name)."""
    return sql.SQL(
        "WITH pruned AS (DELETE FROM {} WHERE originator_id = %s AND "
        "originator_version < %s) INSERT INTO {} VALUES (%s, %s, %s, %s)"
    ).format(sql.Identifier(*table), sql.Identifier(*table))


def _values_insert(table: tuple[str, str], rows: int) -> sql.Composed:
    """Insert ``rows`` events (id, version, topic, binary state each) into ``table`` (schema and
    name), returning their positions."""
    return sql.SQL(
        "INSERT INTO {} (originator_id, originator_version, topic, state) VALUES "
        + ", ".join(["(%s, %s, %s, %b)"] * rows)
        + " RETURNING notification_id"
    ).format(sql.Identifier(*table))
