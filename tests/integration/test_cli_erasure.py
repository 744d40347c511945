"""``chatledger erase`` and ``chatledger retain``, run as real processes on a SQLite file."""

from __future__ import annotations

import contextlib
import os
import pty
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from chatledger import ConversationErasedError, ConversationStore
from chatledger.adapters.responders import demo


def _environ() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("CHATLEDGER_")}


def chatledger(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The command with no terminal on stdin (as in a script or CI)."""
    return subprocess.run(
        [sys.executable, "-m", "chatledger", *args],
        capture_output=True,
        stdin=subprocess.DEVNULL,
        text=True,
        cwd=cwd,
        env=_environ(),
        timeout=60,
    )


def on_a_terminal(*args: str, answer: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The command with a terminal (a pseudo-terminal) on stdin, where ``answer`` is typed."""
    typing, stdin = pty.openpty()
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", "chatledger", *args],
            stdin=stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=cwd,
            env=_environ(),
        )
        os.close(stdin)
        os.write(typing, answer.encode())
        out, err = process.communicate(timeout=60)
    finally:
        os.close(typing)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def log_rows(url: str) -> list[tuple[object, ...]]:
    with contextlib.closing(sqlite3.connect(url.removeprefix("sqlite:///"))) as connection:
        return connection.execute("SELECT * FROM stored_events ORDER BY rowid").fetchall()


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
        "--url", url, "erase", "done", "--actor", "ops:olga", "--reason", "ticket 9", "--yes",
        cwd=tmp_path,
    )  # fmt: skip
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
    missing = chatledger(
        "--url", url, "erase", "done", "--actor", "ops:olga", "--yes", cwd=tmp_path
    )
    assert missing.returncode == 2 and "--reason" in missing.stderr


def test_retain_dry_run_lists_and_changes_nothing_then_erases(url: str, tmp_path: Path) -> None:
    """``retain --dry-run`` lists every tenant's idle chats and changes nothing; without it they are erased."""
    before = log_rows(url)
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
    assert log_rows(url) == before
    with ConversationStore.open(url) as store:
        assert store.messages("done")

    kept = chatledger("--url", url, "retain", "--older-than", "90d", "--yes", cwd=tmp_path)
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
        "--yes",
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


def test_without_a_terminal_nothing_is_erased_unless_yes(url: str, tmp_path: Path) -> None:
    """A script that runs ``erase`` or ``retain`` without ``--yes`` erases nothing, and is told why."""
    before = log_rows(url)
    erase = chatledger(
        "--url", url, "erase", "done", "--actor", "ops:olga", "--reason", "ticket 9", cwd=tmp_path
    )  # fmt: skip
    retain = chatledger(
        "--url", url, "retain", "--older-than", "1d", "--as-of", "2999-01-01", cwd=tmp_path
    )  # fmt: skip
    for refused in (erase, retain):
        assert refused.returncode == 1, refused.stdout
        assert "not a terminal" in refused.stderr and "--yes" in refused.stderr
        assert "nothing was erased" in refused.stderr and "Traceback" not in refused.stderr
    assert log_rows(url) == before


def test_on_a_terminal_they_show_what_would_go_and_ask(url: str, tmp_path: Path) -> None:
    """On a terminal: the conversations that would go, a question; only ``yes`` erases."""
    before = log_rows(url)
    retain = ("--url", url, "retain", "--older-than", "1d", "--as-of", "2999-01-01")
    declined = on_a_terminal(*retain, answer="no\n", cwd=tmp_path)
    assert declined.returncode == 1, declined.stderr
    assert "would erase: 'done' (tenant 'default')" in declined.stderr
    assert "would erase: 'other' (tenant 'acme')" in declined.stderr
    assert "Erase these 2 conversation(s) of every tenant?" in declined.stderr
    assert "cannot be undone" in declined.stderr and "nothing was erased" in declined.stderr
    erase = ("--url", url, "erase", "done", "--actor", "ops:olga", "--reason", "ticket 9")
    declined = on_a_terminal(*erase, answer="\n", cwd=tmp_path)
    assert declined.returncode == 1, declined.stderr
    assert "would erase: 'done' (tenant 'default'), 2 message(s) in" in declined.stderr
    assert log_rows(url) == before

    erased = on_a_terminal(*erase, answer="yes\n", cwd=tmp_path)
    assert erased.returncode == 0, erased.stderr
    assert "erased conversation 'done'" in erased.stdout
    with ConversationStore.open(url) as store:
        with pytest.raises(ConversationErasedError):
            store.messages("done")
        assert store.version("other", tenant="acme")


@pytest.mark.parametrize("given", ["6m", "10M", "m", "6 months"])
def test_a_duration_must_name_an_unambiguous_unit(url: str, tmp_path: Path, given: str) -> None:
    """``--older-than 6m`` is refused (minutes or months?); nothing is erased."""
    before = log_rows(url)
    refused = chatledger("--url", url, "retain", "--older-than", given, "--yes", cwd=tmp_path)
    assert refused.returncode == 2 and "--older-than" in refused.stderr
    assert log_rows(url) == before
    if given == "6m":
        assert "write 6min or 6mo" in refused.stderr


def test_durations_in_every_unit() -> None:
    """``s``, ``min``, ``h``, ``d``, ``w``, ``mo`` (30 days) and ``y`` (365 days)."""
    from chatledger.adapters.cli.values import parse_duration

    day = 86400
    given = ["45s", "30min", "2h", "90d", "2w", "6mo", "1y", "1.5d"]
    seconds = [45, 1800, 7200, 90 * day, 14 * day, 180 * day, 365 * day, 1.5 * day]
    assert [parse_duration(text) for text in given] == seconds


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
            "--url", url, "erase", "done", "--actor", "ops:olga", "--reason", "t", "--yes",
            cwd=tmp_path,
        )  # fmt: skip
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
