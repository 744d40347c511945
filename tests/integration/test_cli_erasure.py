"""``chatledger erase`` and ``chatledger retain``, run as real processes on a SQLite file."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from chatledger import ConversationErasedError, ConversationStore
from chatledger.adapters.responders import demo


def chatledger(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("CHATLEDGER_")}
    return subprocess.run(
        [sys.executable, "-m", "chatledger", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=environ,
        timeout=60,
    )


@pytest.fixture
def url(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    with ConversationStore.open(url) as store:
        demo.record_demo(store, "done")
        store.start_conversation("other", tenant="acme")
    return url


def test_erase_says_what_it_erased_and_show_then_says_erased(url: str, tmp_path: Path) -> None:
    """``erase CHAT --actor --reason``: one line of what was done; the chat then reads as erased."""
    with ConversationStore.open(url) as store:
        events = store.version("done")
    done = chatledger(
        "--url", url, "erase", "done", "--actor", "ops:olga", "--reason", "ticket 9", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert f"erased conversation 'done' (tenant 'default'): {events} event(s)" in done.stdout
    shown = chatledger("--url", url, "show", "done", cwd=tmp_path)
    assert shown.returncode == 1
    assert (
        "was erased" in shown.stderr
        and "ops:olga" in shown.stderr
        and "Traceback" not in shown.stderr
    )
    audit = chatledger("--url", url, "audit", "done", cwd=tmp_path)
    assert audit.returncode == 0 and "conversation-erased" in audit.stdout
    verified = chatledger("--url", url, "verify", cwd=tmp_path)
    assert verified.returncode == 0, verified.stdout
    assert "the chains of 1 erased conversation" in verified.stdout
    missing = chatledger("--url", url, "erase", "done", "--actor", "ops:olga", cwd=tmp_path)
    assert missing.returncode == 2 and "--reason" in missing.stderr


def test_retain_dry_run_lists_and_changes_nothing_then_erases(url: str, tmp_path: Path) -> None:
    """``retain --dry-run`` lists every tenant's idle chats and changes nothing; without it they are erased."""
    database = url.removeprefix("sqlite:///")

    def log_rows() -> list[tuple[object, ...]]:
        with contextlib.closing(sqlite3.connect(database)) as connection:
            return connection.execute("SELECT * FROM stored_events ORDER BY rowid").fetchall()

    before = log_rows()
    dry = chatledger(
        "--url",
        url,
        "retain",
        "--older-than",
        "1d",
        "--as-of",
        "2999-01-01",
        "--dry-run",
        cwd=tmp_path,
    )
    assert dry.returncode == 0, dry.stderr
    assert "would erase: 'done' (tenant 'default')" in dry.stdout
    assert "would erase: 'other' (tenant 'acme')" in dry.stdout
    assert "dry run: 2 conversation(s) of every tenant" in dry.stdout
    assert "nothing was changed" in dry.stdout
    assert log_rows() == before
    with ConversationStore.open(url) as store:
        assert store.messages("done")

    kept = chatledger("--url", url, "retain", "--older-than", "90d", cwd=tmp_path)
    assert "erased 0 conversation(s)" in kept.stdout

    acme = chatledger(
        "--url",
        url,
        "--tenant",
        "acme",
        "retain",
        "--older-than",
        "1d",
        "--as-of",
        "2999-01-01",
        cwd=tmp_path,
    )
    assert acme.returncode == 0, acme.stderr
    assert "erased: 'other' (tenant 'acme')" in acme.stdout
    assert "erased 1 conversation(s) of tenant 'acme'" in acme.stdout
    with ConversationStore.open(url) as store:
        assert store.messages("done")
        with pytest.raises(ConversationErasedError):
            store.messages("other", tenant="acme")
    bad = chatledger("--url", url, "retain", "--older-than", "soon", cwd=tmp_path)
    assert bad.returncode == 2 and "not a duration" in bad.stderr
    bad = chatledger("--url", url, "retain", "--older-than", "1d", "--as-of", "May", cwd=tmp_path)
    assert bad.returncode == 2 and "not an ISO 8601 time" in bad.stderr


@pytest.mark.timeout(90)
def test_erase_prints_its_receipt_pending_while_a_reader_holds_the_wal_then_finish(
    url: str, tmp_path: Path
) -> None:
    """A read open in another process: erase says PENDING and how to finish (exit 1); finish-erasure ends it."""
    reader = sqlite3.connect(url.removeprefix("sqlite:///"), isolation_level=None)
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM stored_events").fetchone()
    try:
        pending = chatledger(
            "--url", url, "erase", "done", "--actor", "ops:olga", "--reason", "t", cwd=tmp_path
        )
    finally:
        reader.execute("ROLLBACK")
        reader.close()
    assert pending.returncode == 1, pending.stderr
    assert "removed: the content of" in pending.stdout and "its snapshots" in pending.stdout
    assert "files: pending" in pending.stdout
    assert "PENDING:" in pending.stdout and "chatledger finish-erasure" in pending.stdout
    assert "outside the store (yours to handle): copies of the database file" in pending.stdout
    finished = chatledger("--url", url, "finish-erasure", cwd=tmp_path)
    assert finished.returncode == 0, finished.stdout + finished.stderr
    assert "files: done" in finished.stdout and "WAL checkpointed" in finished.stdout
    wal = Path(url.removeprefix("sqlite:///") + "-wal")
    assert not wal.exists() or wal.stat().st_size == 0
