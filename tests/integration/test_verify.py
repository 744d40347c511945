"""``verify``: the store checked against its own event log, clean and after tampering.

The tampering is done with plain SQL on a real SQLite file, the way a bad
restore or a hand edit would do it; ``verify`` must name the conversation and
what differs, and ``rebuild`` must repair what is derived.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from chatledger import ConversationStore
from chatledger.adapters.cli.commands import main
from chatledger.adapters.persistence.keys import PLAIN
from chatledger.adapters.persistence.packing import pack
from chatledger.adapters.responders import demo
from chatledger.adapters.store.operations.verify import VerifyReport
from chatledger.domain.aggregate import conversation_id
from chatledger.domain.errors import ConversationNotFoundError, StoredDataError
from tests.integration.conftest import Backend


def fill(store: ConversationStore) -> None:
    """Finished, paused, continuing and streaming conversations, in two tenants."""
    demo.record_demo(store, "done")
    for chat in ("paused", "continuing"):
        store.start_conversation(chat)
        store.append_message(chat, demo.USER_MESSAGE)
        store.ingest(chat, demo.first_turn_chunks())
    store.respond_to_approval("continuing", approval_id=demo.APPROVAL_ID, approved=True)
    store.start_conversation("done", tenant="other")
    store.append_message("done", demo.USER_MESSAGE, tenant="other")
    writer = store.open_stream("done", tenant="other")
    writer.append({"type": "start"})
    writer.flush()


def test_a_healthy_store_verifies_clean(durable_backend: Backend) -> None:
    """Every conversation, event and read model agrees with the log (SQLite and PostgreSQL)."""
    store = durable_backend.open()
    fill(store)
    steps: list[tuple[str, int, int]] = []
    report = store.operations.verify(
        progress=lambda stage, done, total: steps.append((stage, done, total))
    )
    assert report.problems == []
    assert report.ok and report.advice == ""
    assert report.conversations == 4
    assert report.events == sum(
        store.version(chat, tenant=tenant)
        for chat, tenant in [("done", "default"), ("paused", "default"), ("continuing", "default")]
    ) + store.version("done", tenant="other")
    assert steps[-1] == ("conversations", 4, 4)
    assert any(stage == "log" for stage, _, _ in steps)
    one = store.operations.verify("paused")
    assert (one.ok, one.conversations, one.events) == (True, 1, store.version("paused"))
    with pytest.raises(ConversationNotFoundError):
        store.operations.verify("nobody")


@pytest.fixture
def tampered(tmp_path: Path) -> tuple[str, sqlite3.Connection]:
    """A SQLite store filled and closed, and a raw connection to its file."""
    path = tmp_path / "tampered.db"
    with ConversationStore.open(f"sqlite:///{path}") as store:
        fill(store)
        assert store.operations.verify().ok
    return f"sqlite:///{path}", sqlite3.connect(path, isolation_level=None)


def verify(url: str) -> VerifyReport:
    with ConversationStore.open(url) as store:
        return store.operations.verify()


def key(chat: str, tenant: str = "default") -> str:
    """The conversation's id as the read-model tables write it."""
    return str(conversation_id(tenant, chat))


def log_key(chat: str, tenant: str = "default") -> str:
    """The conversation's id as eventsourcing's SQLite tables write it."""
    return conversation_id(tenant, chat).hex


def test_an_edited_messages_row_is_found_and_rebuild_repairs_it(
    tampered: tuple[str, sqlite3.Connection],
) -> None:
    url, db = tampered
    db.execute(
        "UPDATE chatledger_messages_v2 SET message = ? WHERE conversation_id = ? AND position = 0",
        (pack(PLAIN, '{"id":"u0","role":"user","parts":[]}'), key("paused")),
    )
    report = verify(url)
    assert [(p.where, p.chat_id, p.what) for p in report.problems] == [
        ("read-model", "paused", "the messages row differs from the folded messages")
    ]
    assert "chatledger rebuild" in report.advice
    with ConversationStore.open(url) as store:
        store.operations.rebuild()
        assert store.operations.verify().ok


def test_a_lost_approval_and_timeline_entry_are_found(
    tampered: tuple[str, sqlite3.Connection],
) -> None:
    url, db = tampered
    db.execute(
        "DELETE FROM chatledger_pending_approvals WHERE conversation_id = ?", (key("paused"),)
    )
    db.execute(
        "DELETE FROM chatledger_timeline_v2 WHERE conversation_id = ? AND position = 2",
        (key("done"),),
    )
    with ConversationStore.open(url) as store:
        events = store.version("done")
    found = {(p.chat_id, p.what) for p in verify(url).problems}
    assert found == {
        ("paused", f"approvals inbox lists [], the events give ['{demo.TOOL_CALL_ID}']"),
        ("done", f"the timeline has {events - 1} entries for {events} events"),
    }


def test_a_missing_event_is_found(tampered: tuple[str, sqlite3.Connection]) -> None:
    """An event lost from the middle of a conversation's log is a log problem, named."""
    url, db = tampered
    db.execute(
        "DELETE FROM stored_events WHERE originator_id = ? AND originator_version = 3",
        (log_key("done"),),
    )
    report = verify(url)
    assert [str(p) for p in report.problems] == [
        "chain: chat 'done' (tenant 'default'): missing at version 3: event(s) 3 are not in the log",
        "log: chat 'done' (tenant 'default'): events are missing: version 4 follows version 2",
    ]
    assert "restore the database" in report.advice
    db.execute("DELETE FROM stored_events WHERE originator_id = ?", (log_key("paused"),))
    db.execute(
        "INSERT INTO stored_events SELECT ?, originator_version + 1, topic, state "
        "FROM stored_events WHERE originator_id = ? AND originator_version = 2",
        (log_key("paused"), log_key("continuing")),
    )
    (quarantined,) = db.execute(
        "SELECT MAX(rowid) FROM stored_events WHERE originator_id = ?", (log_key("paused"),)
    ).fetchone()
    orphans = [str(p) for p in verify(url).problems if p.chat_id is None and p.where != "chain"]
    assert orphans == [
        f"read-model: the store: event {quarantined} (conversation {key('paused')}, version 3) "
        "is quarantined: it cannot be projected (AggregateNotFoundError: "
        f"Aggregate UUID('{key('paused')}') version 2 not found.)",
        f"log: the store: events of conversation {key('paused')} without its first event "
        "(ConversationStarted): the start of its log is missing",
    ]


def test_a_wrong_snapshot_is_found(tampered: tuple[str, sqlite3.Connection]) -> None:
    """A snapshot holding another conversation's state: loading no longer equals folding."""
    url, db = tampered
    (other,) = db.execute(
        "SELECT state FROM stored_snapshots WHERE originator_id = ?", (log_key("paused"),)
    ).fetchone()
    db.execute(
        "UPDATE stored_snapshots SET state = ? WHERE originator_id = ?",
        (other, log_key("continuing")),
    )
    problems = [(p.where, p.chat_id) for p in verify(url).problems]
    assert ("snapshot", "continuing") in problems


def test_a_corrupt_snapshot_and_an_unknown_encoding_are_reported_not_raised(
    tampered: tuple[str, sqlite3.Connection], capsys: pytest.CaptureFixture[str]
) -> None:
    """Garbage in a snapshot, an event with an unknown encoding tag: problems named, no traceback."""
    url, db = tampered
    db.execute(
        "UPDATE stored_snapshots SET state = ? WHERE originator_id = ?",
        (b"\x01garbage", log_key("continuing")),
    )
    db.execute(
        "UPDATE stored_events SET state = ? WHERE originator_id = ? AND originator_version = 1",
        (b"\x07{}", log_key("paused")),
    )
    problems = [(p.where, p.chat_id, p.what) for p in verify(url).problems]
    assert ("snapshot", "continuing") in [(where, chat) for where, chat, _ in problems], problems
    assert any(
        where == "log" and "encoding" in what and "07" in what for where, _, what in problems
    ), problems
    assert main(["--url", url, "verify"]) == 1
    out = capsys.readouterr()
    assert "snapshot: chat 'continuing'" in out.out and "Traceback" not in out.err
    assert main(["--url", url, "show", "continuing"]) in (0, 1)
    assert "Traceback" not in capsys.readouterr().err
    with ConversationStore.open(url) as store, pytest.raises(StoredDataError, match="encoding"):
        store.conversation("paused", at_version=1)


def test_a_rewritten_approval_input_or_timeline_actor_is_found(
    tampered: tuple[str, sqlite3.Connection],
) -> None:
    """What the approver is shown, and who did what, are checked against the events too."""
    url, db = tampered
    db.execute(
        'UPDATE chatledger_pending_approvals SET input = \'{"path": "/tmp/harmless"}\' '
        "WHERE conversation_id = ?",
        (key("paused"),),
    )
    db.execute(
        "UPDATE chatledger_timeline_v2 SET actor = 'user:mallory' WHERE conversation_id = ? "
        "AND position = 3",
        (key("done"),),
    )
    found = {(p.chat_id, p.what) for p in verify(url).problems}
    assert found == {
        ("paused", "an approvals inbox row differs from the events (tool, input, message or time)"),
        ("done", "timeline entry 3 differs from its event (actor, kind, details or time)"),
    }
    with ConversationStore.open(url) as store:
        store.operations.rebuild()
        assert store.operations.verify().ok
