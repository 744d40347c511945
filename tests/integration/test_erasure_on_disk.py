"""Erasure you can take at its word: after ``erase`` the files hold nothing of the conversation, or it says so.

Searched as someone holding the disk would: the raw bytes of the SQLite file
and its ``-wal``; every PostgreSQL table, index and TOAST file of the store's
schema (after a ``CHECKPOINT``). Without a cipher key the canaries are the
conversation's texts (stored uncompressed, so they show raw); with one they
are the conversation's wrapped data key, which with the store key would
decrypt any copy of its events.

A concurrent reader is a real second connection with a read open from before
the erasure (SQLite: ``BEGIN; SELECT ...``; PostgreSQL: a REPEATABLE READ
transaction), released by the test after ``erase`` has answered. While it is
open, ``erase`` must answer "pending" and name why; once it is released,
``finish_erasure`` completes and the files are clean. PostgreSQL's own WAL
is outside chatledger's reach: the answer must name it.
"""

from __future__ import annotations

import contextlib
import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest
from eventsourcing.cryptography import AESCipher
from psycopg import sql

from tests.integration.conftest import _POSTGRES, _SQLITE, Backend, _backend, _postgres_conninfo
from tests.integration.on_disk import files_holding, store_files
from tests.integration.tamper import Tamperer
from tests.integration.test_erasure import canaries, fill

WAIT = 0.3
"""How long erase waits for readers here (seconds): the reader is released only after it answers."""
SETTLE = 60.0
"""How long erase waits where the test holds no reader: another test run on the server may hold the
erased rows back a while (a transaction of any database older than the erasure does); it answers as
soon as they are gone."""


@pytest.fixture(params=[_SQLITE, _POSTGRES])
def durable_backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    """A fresh SQLite file, or on PostgreSQL a database of its own (not a schema in the shared one).

    VACUUM keeps a dead row while any session of its database may still see it, and erase waits
    for those sessions: in the shared database, another test run's transactions would hold the
    erased rows back and make the answer "pending".
    """
    if request.param == "sqlite":
        yield from _backend("sqlite", request, tmp_path)
        return
    request.getfixturevalue("postgres_server")
    with durable_database() as backend:
        yield backend


_SERVER_GUARD = 0x63686C67  # an advisory lock key of the server's shared test database
_guard: psycopg.Connection[Any] | None = None


@contextlib.contextmanager
def server_guard(*, exclusive: bool) -> Iterator[None]:
    """Keeps erasure tests of other test runs on the same server apart from the ones that hold
    transactions open in other databases on purpose.

    Such a transaction holds back every erasure on the server (that is what those tests check),
    so a test expecting "done" that runs meanwhile in another test run would get "pending". Tests
    expecting "done" take the lock shared, the holders exclusive (before anything else); one
    idle session of this process holds it, so a test's own locks never wait for each other.
    """
    global _guard
    if _guard is None or _guard.closed:
        _guard = psycopg.connect(
            _postgres_conninfo(), autocommit=True, application_name="chatledger-tests-guard"
        )
    kind = "" if exclusive else "_shared"
    _guard.execute(f"SELECT pg_advisory_lock{kind}(%s)", (_SERVER_GUARD,))
    try:
        yield
    finally:
        _guard.execute(f"SELECT pg_advisory_unlock{kind}(%s)", (_SERVER_GUARD,))


@contextlib.contextmanager
def durable_database(*, holds_others_back: bool = False) -> Iterator[Backend]:
    """A PostgreSQL database of its own, dropped at the end, as a store URL's ``Backend``.

    ``holds_others_back``: the test holds transactions open in other databases, which keep every
    erasure on the server from finishing (see ``server_guard``).
    """
    with server_guard(exclusive=holds_others_back), _database() as backend:
        yield backend


@contextlib.contextmanager
def _database() -> Iterator[Backend]:
    name = f"erase_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(_postgres_conninfo(), autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    url = urlunsplit(
        urlsplit(_postgres_conninfo())._replace(path=f"/{name}", query="schema=ledger")
    )
    backend = Backend("postgres", url)
    try:
        yield backend
    finally:
        backend.close_all()
        with psycopg.connect(_postgres_conninfo(), autocommit=True) as admin:
            drop = sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            admin.execute(drop)


def _server_of(backend: Backend) -> str:
    """The conninfo of the database a store URL names (its ``schema`` parameter left out)."""
    return urlunsplit(urlsplit(backend.url)._replace(query=""))


@contextlib.contextmanager
def reader_open(backend: Backend) -> Iterator[None]:
    """A second connection with a read transaction open (it has read the events), until exit."""
    if backend.name == "sqlite":
        db = sqlite3.connect(backend.url.removeprefix("sqlite:///"), isolation_level=None)
        db.execute("BEGIN")
        db.execute("SELECT count(*), max(length(state)) FROM stored_events").fetchone()
        try:
            yield
        finally:
            db.execute("ROLLBACK")
            db.close()
        return
    schema = backend.url.rsplit("schema=", 1)[1]
    with psycopg.connect(_server_of(backend), application_name="a-long-report") as pg:
        pg.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        pg.execute(f'SELECT count(*) FROM "{schema}".chatledger_events').fetchone()
        try:
            yield
        finally:
            pg.rollback()


def ask(store: Any, chat: str, call: str, path: str) -> None:
    """A turn of ``chat`` that ends on ``delete_file(path)`` awaiting approval."""
    store.ingest(
        chat,
        [
            {"type": "start"},
            {"type": "start-step"},
            {"type": "tool-input-start", "toolCallId": call, "toolName": "delete_file"},
            {"type": "tool-input-available", "toolCallId": call, "toolName": "delete_file",
             "input": {"path": path}},
            {"type": "tool-approval-request", "approvalId": f"ap-{call}", "toolCallId": call},
            {"type": "finish-step"},
            {"type": "finish", "finishReason": "tool-calls"},
        ],
        actor="agent:bot",
    )  # fmt: skip


def grant_in(store: Any, erased: str, kept: str) -> tuple[str, str]:
    """Grants given in ``erased``: one for its exact input (tenant-wide, used there again, and
    covering it in ``kept``), one for the whole conversation. Their ids."""
    path = f"/srv/{INPUT}"
    ask(store, erased, "call-1", path)
    exact = store.grants.approve(erased, tool_call_id="call-1", actor="user:alice")
    ask(store, erased, "call-2", path)  # approved by the grant: a use naming the erased chat
    whole = store.grants.give(scope="conversation", chat_id=erased, actor="user:alice")
    assert store.grants.get(exact.grant_id).uses == 1
    assert store.grants.covering(kept, "delete_file", {"path": path}) is not None
    return exact.grant_id, whole.grant_id


INPUT = "CANARYAINPUT"
"""The erased chat's tool input, which its grant was given for."""


def needles(backend: Backend, tag: str, keyed: bool) -> list[bytes]:
    """What must not survive: the texts, or (with a cipher key) the wrapped data keys of the chat."""
    if not keyed:
        return [c.encode() for c in canaries(tag)]
    found = Tamperer(backend.url).run("SELECT wrapped FROM chatledger_conversation_keys")
    assert len(found) == 2  # the erased chat's and the kept chat's
    return [bytes(found[0][0]), *(c.encode() for c in canaries(tag))]


def holding(backend: Backend, what: list[bytes]) -> dict[str, list[str]]:
    """Where on disk ``what`` is found, by kind of file."""
    return {kind: files_holding(files, what) for kind, files in store_files(backend).items()}


def in_store(found: dict[str, list[str]], backend: Backend) -> list[str]:
    """The files chatledger controls that hold it (PostgreSQL's WAL is outside its reach)."""
    kinds = ["file", "wal"] if backend.name == "sqlite" else ["relations"]
    return [name for kind in kinds for name in found[kind]]


@pytest.fixture(params=[pytest.param(False, id="no-key"), pytest.param(True, id="key")])
def keyed(request: pytest.FixtureRequest) -> bool:
    return bool(request.param)


@pytest.fixture(params=[pytest.param(False, id="alone"), pytest.param(True, id="reader")])
def concurrent_reader(request: pytest.FixtureRequest) -> bool:
    return bool(request.param)


@pytest.mark.postgres
@pytest.mark.timeout(120)
def test_a_transaction_in_another_database_does_not_hold_the_erasure_back(
    postgres_server: str,
) -> None:
    """VACUUM's horizon is per database: a snapshot open elsewhere on the server is not a reader."""
    with durable_database() as backend:
        store = backend.open(compress=False)
        chat = fill(store, "A")
        with psycopg.connect(_postgres_conninfo(), application_name="another-database") as other:
            other.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
            other.execute("SELECT count(*) FROM pg_class").fetchone()  # holds a snapshot
            report = store.operations.erase(
                chat, actor="operator:olga", reason="test", wait_for_readers=SETTLE
            )
            other.rollback()
        assert report.compaction is not None and report.compaction.done, report.compaction.pending
        assert in_store(holding(backend, needles(backend, "A", False)), backend) == []


@pytest.mark.timeout(120)
def test_erase_leaves_no_canary_on_disk_or_says_what_holds_it(
    durable_backend: Backend, keyed: bool, concurrent_reader: bool
) -> None:
    """Never "done" while a file holds the content; with a reader: pending, then finished."""
    backend = durable_backend
    options: dict[str, Any] = (
        {"cipher_key": AESCipher.create_key(32)} if keyed else {"compress": False}
    )
    store = backend.open(**options)
    chat = fill(store, "A")
    kept = fill(store, "B")
    exact, whole = grant_in(store, chat, kept)
    store.list_conversations(query="CANARYATEXT")
    what = [*needles(backend, "A", keyed), INPUT.encode()]
    assert in_store(holding(backend, what), backend)  # the search sees it before

    with reader_open(backend) if concurrent_reader else contextlib.nullcontext():
        report = store.operations.erase(
            chat,
            actor="operator:olga",
            reason="GDPR 42",
            wait_for_readers=WAIT if concurrent_reader else SETTLE,
        )
        found = holding(backend, what)
        compaction = report.compaction
        assert compaction is not None
        assert compaction.done == (in_store(found, backend) == []), (compaction, found)
        if concurrent_reader:
            assert compaction.status == "pending"
            assert compaction.pending is not None and "finish-erasure" in compaction.pending
            cause = "read open" if backend.name == "sqlite" else "a-long-report"
            assert cause in compaction.pending
        else:
            assert compaction.status == "done", compaction.pending

    if concurrent_reader:  # released: finishing completes it
        compaction = store.operations.finish_erasure(wait_for_readers=SETTLE)
        assert compaction.done, compaction.pending
        found = holding(backend, what)
    assert in_store(found, backend) == []
    if backend.name == "postgres":
        assert any("pg_wal" in where for where in compaction.outside)
        assert any("replica" in where for where in compaction.outside)
    assert any("backup" in where for where in compaction.outside)
    assert store.operations.verify().ok
    receipt = store.history(chat)[-1]  # the audit keeps the receipt: removed, and left outside
    assert receipt.kind == "conversation-erased" and receipt.actor == "operator:olga"
    assert list(report.removed) == receipt.details["removed"]
    assert any("snapshots" in r for r in report.removed)
    assert any("data key" in r for r in report.removed) == keyed
    assert any("backup" in where for where in receipt.details["outside"])
    # the grants outlive the erased chat without naming it: the exact one still answers elsewhere
    assert store.grants.covering(kept, "delete_file", {"path": f"/srv/{INPUT}"}).grant_id == exact
    assert store.grants.get(whole).status(store.grants.clock()) == "revoked"
    assert store.grants.get(exact).uses == 1


@pytest.mark.timeout(120)
def test_retention_cleans_the_files_once_after_its_erasures(durable_backend: Backend) -> None:
    """retain erases several chats and cleans the files once: nothing of them on disk, done."""
    from datetime import UTC, datetime, timedelta

    store = durable_backend.open(compress=False)
    gone = [fill(store, tag) for tag in "FG"]
    report = store.operations.retain(
        timedelta(days=1), now=datetime.now(UTC) + timedelta(days=2), wait_for_readers=SETTLE
    )
    assert sorted(r.chat_id or "" for r in report.erased) == sorted(gone)
    assert report.compaction is not None and report.compaction.done, report.compaction.pending
    what = [c.encode() for tag in "FG" for c in canaries(tag)]
    assert in_store(holding(durable_backend, what), durable_backend) == []


def test_finish_erasure_with_nothing_erased_is_done(durable_backend: Backend) -> None:
    """Harmless at any time: a store with no erasure compacts to done."""
    store = durable_backend.open()
    fill(store, "H")
    assert store.operations.finish_erasure(wait_for_readers=WAIT).done


def test_a_grant_stored_with_its_input_keeps_only_the_digest_after_the_erasure(
    durable_backend: Backend,
) -> None:
    """A grant kept before grants kept digests held the input: erasing its chat digests it."""
    from datetime import UTC, datetime

    store = durable_backend.open(compress=False)
    store.start_conversation("gone", actor="user:alice")
    ask(store, "gone", "c1", "/srv/CANARYOLDINPUT")
    old = {"path": "/srv/CANARYOLDINPUT"}
    source = {"chatId": "gone", "toolCallId": "c1", "approvalId": "ap-c1"}
    store.grants._change("default", lambda ledger: ledger.issue(  # as an older version stored it
        "grant_old", "input", "delete_file", old, None, "user:alice", None, datetime.now(UTC),
        None, source,
    ))  # fmt: skip
    store.start_conversation("kept", actor="user:alice")
    assert store.grants.covering("kept", "delete_file", old).input == old
    report = store.operations.erase(
        "gone", actor="op:olga", reason="GDPR 43", wait_for_readers=SETTLE
    )
    assert report.compaction is not None and report.compaction.done, report.compaction.pending
    assert in_store(holding(durable_backend, [b"CANARYOLDINPUT", b'"gone"']), durable_backend) == []
    still = store.grants.covering("kept", "delete_file", old)
    assert still is not None and still.input is None and still.input_digest is not None


def test_a_ledger_that_cannot_be_rewritten_is_named_with_how_to_finish(
    durable_backend: Backend,
) -> None:
    """The conversation is erased either way; the error says the ledger still names it, and what to run."""
    from chatledger.domain.errors import ChatLedgerError

    store = durable_backend.open(compress=False)
    chat = fill(store, "K")
    kept = fill(store, "L")
    grant_in(store, chat, kept)

    def broken(tenant: str, chat_id: str) -> None:
        raise OSError("disk full")

    store.operations.notify_erasures(broken)
    with pytest.raises(ChatLedgerError, match="forget_conversation") as raised:
        store.operations.erase(chat, actor="op:olga", reason="GDPR 45", wait_for_readers=WAIT)
    assert "disk full" in str(raised.value) and "finish-erasure" in str(raised.value)
    assert store.grants.forget_conversation("default", chat) > 0
    assert store.operations.finish_erasure(wait_for_readers=SETTLE).done
    what = [chat.encode(), INPUT.encode()]
    assert in_store(holding(durable_backend, what), durable_backend) == []
