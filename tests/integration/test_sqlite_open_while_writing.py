"""Opening a SQLite store while another process writes to it succeeds.

A worker started next to ``serve``, or a CLI command next to a running
server, opened the store while the server was writing: 4 of 40 opens failed
with "database is locked". Opening ran its ``CREATE ... IF NOT EXISTS``
statements in a deferred transaction, which SQLite fails at once (without
waiting) when another connection holds the write lock. The interleaving is
forced here: another connection holds the write lock, uncommitted, for the
whole open.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from chatledger import ConversationStore


@pytest.mark.timeout(60)
def test_an_existing_store_opens_while_another_connection_holds_the_write_lock(
    tmp_path: Path,
) -> None:
    """The writer holds the lock through the open; the open succeeds, and its write waits its turn."""
    path = tmp_path / "store.db"
    url = f"sqlite:///{path}"
    with ConversationStore.open(url) as store:
        store.start_conversation("before")
    writer = sqlite3.connect(path, isolation_level=None)
    try:
        writer.execute("BEGIN IMMEDIATE")  # the write lock, as a committing server holds it
        writer.execute("UPDATE chatledger_settings SET value = value")
        opened = [ConversationStore.open(url) for _ in range(5)]
        writer.execute("COMMIT")
    finally:
        writer.close()
    for store in opened:
        with store:
            assert store.messages("before") == []
    with ConversationStore.open(url) as store:
        store.start_conversation("after")
        assert store.operations.verify().ok


@pytest.mark.timeout(60)
def test_a_new_store_opens_after_waiting_for_another_process_holding_the_write_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Creating the tables clashes with a writer: the open tries again, and succeeds once it commits.

    The writer (another creator, in effect) holds the lock through the first
    attempt and commits exactly when the open looks again (the gate: its
    second look at the tables), so the clash is certain, not a race.
    """
    from chatledger.adapters import bootstrap

    path = tmp_path / "new.db"
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("PRAGMA journal_mode=WAL")
    writer.execute("BEGIN IMMEDIATE")
    writer.execute("CREATE TABLE made_by_another_process (x)")
    looks = []
    prepare = bootstrap.preparing

    def preparing_then_release(config: object) -> object:
        looks.append(1)
        if len(looks) == 2:
            writer.execute("COMMIT")
        return prepare(config)  # type: ignore[arg-type]

    monkeypatch.setattr(bootstrap, "preparing", preparing_then_release)
    try:
        with ConversationStore.open(f"sqlite:///{path}") as store:
            store.start_conversation("first")
    finally:
        writer.close()
    assert len(looks) >= 2
    with ConversationStore.open(f"sqlite:///{path}") as store:
        assert store.messages("first") == []
