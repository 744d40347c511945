"""Erasure and PostgreSQL's removal horizon: what keeps VACUUM FULL from removing erased rows.

VACUUM removes a dead row version only once no transaction may still see it.
A session of the store's database with an older snapshot may; so may a
transaction of *any* database that is older: every snapshot taken on the
server since counts it as running (the rewrite's own included). An erasure
also goes on after its own transaction (the grant ledgers are rewritten in
transactions of their own), so "older" means older than the end of the
erasure. The interleavings are forced: a transaction held open across the
erasure, a lock that stops the rewrite at a table of the test's choosing.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import psycopg
import pytest

from chatledger.adapters.persistence.compaction import _SINCE, PURGED_TABLES, _holders, _rewrite
from tests.integration.conftest import _postgres_conninfo
from tests.integration.stream_in_support import until
from tests.integration.test_erasure import fill
from tests.integration.test_erasure_on_disk import (
    INPUT,
    SETTLE,
    WAIT,
    _server_of,
    durable_database,
    grant_in,
    holding,
    in_store,
    needles,
)

pytestmark = pytest.mark.postgres


@contextlib.contextmanager
def transaction_elsewhere(name: str) -> Iterator[psycopg.Connection[Any]]:
    """A transaction with a transaction id, in another database of the server, open until exit."""
    with psycopg.connect(_postgres_conninfo(), application_name=name) as other:
        other.execute("SELECT txid_current()").fetchone()
        try:
            yield other
        finally:
            other.rollback()


@pytest.mark.timeout(60)
def test_a_transaction_in_another_database_older_than_the_erasure_holds_it_back(
    postgres_server: str,
) -> None:
    """Every snapshot taken since counts it as running, the rewrite's own too: pending, named, until it ends."""
    with durable_database(holds_others_back=True) as backend:
        store = backend.open(compress=False)
        chat = fill(store, "A")
        what = needles(backend, "A", False)
        with transaction_elsewhere("a-batch-elsewhere"):
            report = store.operations.erase(
                chat, actor="operator:olga", reason="test", wait_for_readers=WAIT
            )
            compaction = report.compaction
            assert compaction is not None and compaction.status == "pending", compaction
            assert compaction.pending is not None and "a-batch-elsewhere" in compaction.pending
            assert "finish-erasure" in compaction.pending
            assert in_store(holding(backend, what), backend)  # it said so: the files hold it
        compaction = store.operations.finish_erasure(wait_for_readers=SETTLE)
        assert compaction.done, compaction.pending
        assert in_store(holding(backend, what), backend) == []


@pytest.mark.timeout(60)
def test_a_transaction_begun_during_the_erasure_holds_what_it_erased_after(
    postgres_server: str,
) -> None:
    """Begun after the erasure's own transaction, before its grant ledger was rewritten: it holds that."""
    with durable_database(holds_others_back=True) as backend, contextlib.ExitStack() as stack:
        store = backend.open(compress=False)
        chat, kept = fill(store, "A"), fill(store, "B")
        grant_in(store, chat, kept)  # the ledger names the chat and its input until rewritten

        def meanwhile(tenant: str, chat_id: str) -> None:
            stack.enter_context(transaction_elsewhere("begun-mid-erasure"))
            store.grants.forget_conversation(tenant, chat_id)

        store.operations.notify_erasures(meanwhile)
        report = store.operations.erase(chat, actor="op:olga", reason="test", wait_for_readers=WAIT)
        compaction = report.compaction
        assert compaction is not None and compaction.status == "pending", compaction
        assert compaction.pending is not None and "begun-mid-erasure" in compaction.pending
        assert in_store(holding(backend, [INPUT.encode()]), backend)
        stack.close()
        compaction = store.operations.finish_erasure(wait_for_readers=SETTLE)
        assert compaction.done, compaction.pending
        assert in_store(holding(backend, [INPUT.encode(), chat.encode()]), backend) == []


@pytest.mark.timeout(60)
def test_the_rewrite_reports_the_dead_rows_it_had_to_keep(postgres_server: str) -> None:
    """VACUUM FULL's own account, which erasure checks: rows kept while an older transaction runs."""
    with durable_database(holds_others_back=True) as backend:
        store = backend.open(compress=False)
        chat = fill(store, "A")
        with psycopg.connect(_server_of(backend), autocommit=True) as db:
            with transaction_elsewhere("a-batch-elsewhere"):
                store.operations.erase(chat, actor="op:olga", reason="test", wait_for_readers=0)
                kept = _rewrite(db, "ledger", PURGED_TABLES)
                assert kept and all(count > 0 for count in kept.values()), kept
                assert in_store(holding(backend, needles(backend, "A", False)), backend)
            (since,) = db.execute(_SINCE).fetchone()  # another test run's older transactions: ended
            assert _holders(db, since, time.monotonic() + SETTLE) == []
            assert _rewrite(db, "ledger", PURGED_TABLES) == {}


_WAITING = """
SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
WHERE NOT l.granted AND c.relname = 'chatledger_conversation_keys'
"""


@pytest.mark.timeout(120)
def test_rows_changed_after_the_cleanup_began_do_not_hold_it_back(postgres_server: str) -> None:
    """A live store: a reader still sees a row changed while the tables are rewritten; done all the same.

    The rewrite is stopped at the data keys (a lock), the grant ledger (rewritten after them) is
    changed while a reader's snapshot still sees its old version: VACUUM keeps that version.
    """
    with durable_database() as backend:
        store = backend.open(compress=False)
        chat, kept = fill(store, "A"), fill(store, "B")
        grant_in(store, chat, kept)
        report = store.operations.erase(
            chat, actor="op:olga", reason="test", wait_for_readers=SETTLE
        )
        assert report.compaction is not None and report.compaction.done, report.compaction.pending
        server = _server_of(backend)
        with (
            psycopg.connect(server) as blocker,
            psycopg.connect(server) as reader,
            psycopg.connect(server, autocommit=True) as writer,
            ThreadPoolExecutor(1) as pool,
        ):
            # read committed: the lock stays, no snapshot does
            blocker.execute("LOCK TABLE ledger.chatledger_conversation_keys IN ACCESS SHARE MODE")
            finishing = pool.submit(store.operations.finish_erasure, wait_for_readers=SETTLE)
            until(lambda: writer.execute(_WAITING).fetchone()[0], "never waited", timeout=SETTLE)
            reader.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
            reader.execute("SELECT 1").fetchone()
            writer.execute("UPDATE ledger.chatledger_grants_events SET topic = topic")
            blocker.commit()
            compaction = finishing.result(timeout=60)
        assert compaction.done, compaction.pending
        cleaned = "; ".join(compaction.cleaned)
        assert "newer than the erasure kept" in cleaned and "chatledger_grants_events" in cleaned
        assert in_store(holding(backend, needles(backend, "A", False)), backend) == []
