"""Erasure and retention (``store.operations.erase``, ``.retain``) on a real SQLite file and PostgreSQL schema.

After an erase the raw database (every byte of the SQLite file and its WAL;
every row of every table of the PostgreSQL schema) holds nothing of the
conversation: canaries written into its chat id, messages, answer, title
and metadata are searched for in plain text and in hex (how PostgreSQL
prints ``bytea``).
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from io import StringIO
from pathlib import Path
from typing import Any

import psycopg
import pytest
from eventsourcing.cryptography import AESCipher
from psycopg import sql

from chatledger import ConversationErasedError, ConversationStore
from chatledger.adapters.persistence.chain import split_link
from chatledger.domain.errors import ConversationNotFoundError, StoreConfigurationError
from chatledger.domain.seal import SealKey
from tests.integration.conftest import Backend, _postgres_conninfo
from tests.integration.packed_rows import unpacked
from tests.integration.tamper import Tamperer

SEAL = SealKey.from_text("an operator secret of thirty-two bytes")


def chat_of(tag: str) -> str:
    return f"chat-CANARY{tag}ID"


def canaries(tag: str) -> list[str]:
    """What a conversation writes that must not survive its erasure."""
    return [chat_of(tag), *(f"CANARY{tag}{what}" for what in ("TEXT", "ANSWER", "TITLE", "META"))]


def fill(store: ConversationStore, tag: str, tenant: str | None = None) -> str:
    """A conversation holding every canary of ``tag``: chat id, user text, answer, title, metadata."""
    chat = chat_of(tag)
    store.start_conversation(
        chat, tenant=tenant, actor="user:alice", metadata={"note": f"CANARY{tag}META"}
    )
    store.append_message(
        chat,
        {"id": f"u-{tag}", "role": "user", "parts": [{"type": "text", "text": f"CANARY{tag}TEXT"}]},
        tenant=tenant,
        actor="user:alice",
    )
    store.ingest(
        chat,
        [
            {"type": "start", "messageId": f"a-{tag}"},
            {"type": "start-step"},
            {"type": "text-start", "id": "t"},
            {"type": "text-delta", "id": "t", "delta": f"the CANARY{tag}ANSWER it is"},
            {"type": "text-end", "id": "t"},
            {"type": "finish-step"},
            {"type": "finish"},
        ],
        tenant=tenant,
        actor="agent:bot",
    )
    store.set_title(chat, f"CANARY{tag}TITLE", tenant=tenant, actor="user:alice")
    return chat


def raw_database(backend: Backend) -> bytes:
    """Every byte the database keeps: the SQLite file and its WAL, or every PostgreSQL row as text."""
    if backend.name == "sqlite":
        path = Path(backend.url.removeprefix("sqlite:///"))
        files = [path, path.with_name(path.name + "-wal")]
        raw = b"".join(file.read_bytes() for file in files if file.exists())
        with contextlib.closing(sqlite3.connect(path)) as db:
            tables = [
                row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")
            ]
            texts = [
                unpacked(value)
                for table in tables
                for row in db.execute(f'SELECT * FROM "{table}"')
                for value in row
            ]
        return raw + "\n".join(text for text in texts if text).encode("utf-8", "surrogateescape")
    schema = backend.url.rsplit("schema=", 1)[1]
    rows = []
    with psycopg.connect(_postgres_conninfo(), autocommit=True) as connection:
        tables = connection.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = %s", (schema,)
        ).fetchall()
        for (table,) in tables:
            query = sql.SQL("SELECT t::text FROM {} t").format(sql.Identifier(schema, table))
            rows += [row[0] for row in connection.execute(query).fetchall()]
            query = sql.SQL("SELECT * FROM {}").format(sql.Identifier(schema, table))
            for row in connection.execute(query).fetchall():
                rows += [text for text in map(unpacked, row) if text]  # compressed values, opened
    return "\n".join(rows).encode("utf-8", "surrogateescape")


def traces(raw: bytes, tag: str) -> list[str]:
    """The canaries of ``tag`` found in ``raw``, as text or as hex, in any case (the search index
    keeps words lowercased)."""
    low = raw.lower()
    found = []
    for canary in canaries(tag):
        word = canary.lower().encode()
        if word in low or word.hex().encode() in low:
            found.append(canary)
    return found


def timeline(store: ConversationStore, chat: str, tenant: str | None = None) -> list[Any]:
    return [(e.position, e.kind, e.actor, e.time) for e in store.history(chat, tenant=tenant)]


@pytest.fixture(params=[pytest.param(False, id="no-key"), pytest.param(True, id="key")])
def keyed(request: pytest.FixtureRequest) -> bool:
    return bool(request.param)


@pytest.fixture
def opened(durable_backend: Backend, keyed: bool) -> Iterator[tuple[Backend, dict[str, Any]]]:
    """A store's options: with a cipher key, or without (and uncompressed, so its canaries show raw)."""
    options: dict[str, Any] = (
        {"cipher_key": AESCipher.create_key(32)} if keyed else {"compress": False}
    )
    yield durable_backend, options


def test_erase_leaves_nothing_of_the_chat_in_the_database(
    opened: tuple[Backend, dict[str, Any]], keyed: bool
) -> None:
    """Canaries of the erased chat: none in the raw database; the other chat reads as before; verify passes."""
    backend, options = opened
    store = backend.open(**options)
    gone, kept = fill(store, "A"), fill(store, "B")
    kept_messages = store.messages(kept)
    store.list_conversations(query="CANARYATEXT")  # the search index has its words too
    before = timeline(store, gone)
    if not keyed:  # the search below finds them while they are there
        assert traces(raw_database(backend), "A") == canaries("A")
    store.operations.seal(SEAL)

    wrapped = Tamperer(backend.url).run("SELECT wrapped FROM chatledger_conversation_keys")
    assert len(wrapped) == (2 if keyed else 0)  # a data key per conversation, with a store key

    report = store.operations.erase(gone, actor="operator:olga", reason="GDPR request 42")

    assert (report.events, report.actor, report.chat_id) == (len(before), "operator:olga", gone)
    assert traces(raw_database(backend), "A") == []
    left = raw_database(backend)
    kept_keys = [
        bytes(w) for (w,) in wrapped if bytes(w) in left or bytes(w).hex().encode() in left
    ]
    assert (
        len(kept_keys) == len(wrapped) // 2
    )  # the erased chat's wrapped key is gone, bytes and all
    if not keyed:
        assert traces(raw_database(backend), "B") == canaries("B")
    assert store.messages(kept) == kept_messages
    verified = store.operations.verify(seal_key=SEAL)
    assert verified.ok, verified.problems
    assert verified.erased == 1
    after = timeline(store, gone)
    assert after[:-1] == before
    assert after[-1][1:3] == ("conversation-erased", "operator:olga")
    store.close()

    again = backend.open(**options)  # another process: nothing cached
    assert again.messages(kept) == kept_messages
    with pytest.raises(ConversationErasedError, match="operator:olga"):
        again.messages(gone)
    assert timeline(again, gone) == after
    again.operations.rebuild()
    assert timeline(again, gone) == after
    assert [s.chat_id for s in again.list_conversations().conversations] == [kept]
    assert again.list_conversations(query="CANARYATEXT").conversations == []
    assert again.operations.verify(seal_key=SEAL).ok
    assert traces(raw_database(backend), "A") == []


def test_every_read_and_write_of_an_erased_chat_says_it_was_erased(
    durable_backend: Backend,
) -> None:
    """Reads, writes, export and a second erase answer ConversationErasedError, also in a process that had it cached."""
    store = durable_backend.open()
    other = durable_backend.open()
    chat = fill(store, "C")
    assert other.messages(chat)  # cached there
    store.operations.seal(SEAL)
    store.operations.erase(chat, actor="operator:olga", reason="closing the account")

    for read in (
        lambda s: s.messages(chat),
        lambda s: s.messages(chat, at_version=2),
        lambda s: s.status(chat),
        lambda s: s.model_messages(chat, "anthropic"),
        lambda s: s.operations.export(chat, StringIO()),
        lambda s: s.append_message(chat, {"id": "u9", "role": "user", "parts": []}),
        lambda s: s.set_title(chat, "again"),
        lambda s: s.operations.erase(chat, actor="operator:olga", reason="twice"),
    ):
        for either in (store, other):
            with pytest.raises(ConversationErasedError, match="erased"):
                read(either)
    assert store.start_conversation(chat, exist_ok=True) is False
    with pytest.raises(ConversationNotFoundError):
        store.operations.erase("never-was", actor="operator:olga", reason="r")
    with pytest.raises(Exception, match="reason"):
        store.operations.erase(fill(store, "D"), actor="operator:olga", reason=" ")


def test_the_chain_of_an_erased_chat_still_catches_tampering(durable_backend: Backend) -> None:
    """A tombstone's kept digest is what its link commits to: changing it is named as changed."""
    store = durable_backend.open()
    chat = fill(store, "E")
    store.operations.erase(chat, actor="operator:olga", reason="r")
    assert store.operations.verify().ok
    tamperer = Tamperer(durable_backend.url)
    _, state = tamperer.state(chat, 2)
    link, inner = split_link(state)
    assert link is not None
    digest_at = len(state) - len(inner) + 10  # after the link and the tombstone's marker
    forged = state[:digest_at] + bytes([state[digest_at] ^ 1]) + state[digest_at + 1 :]
    tamperer.run(
        f"UPDATE {tamperer.events} SET state = ? WHERE originator_id = ? AND originator_version = 2",
        forged,
        tamperer.key(chat),
    )
    problems = store.operations.verify().problems
    assert [(p.where, p.kind, p.version) for p in problems] == [("chain", "changed", 2)]


def test_retention_erases_idle_chats_and_its_dry_run_changes_nothing(
    durable_backend: Backend,
) -> None:
    """Idle before the cutoff: erased (of one tenant, then of all); a dry run lists them and writes nothing."""
    store = durable_backend.open()
    old_a, old_b = fill(store, "F", tenant="acme"), fill(store, "G", tenant="acme")
    old_c = fill(store, "H", tenant="globex")
    cutoff = datetime.now(UTC)
    fresh = fill(store, "I", tenant="acme")
    later = cutoff + timedelta(days=90)
    tamperer = Tamperer(durable_backend.url)
    raw_log = tamperer.run(
        f"SELECT originator_id, originator_version, state FROM {tamperer.events}"
    )
    seen: list[tuple[int, int]] = []

    dry = store.operations.retain(
        timedelta(days=90), dry_run=True, now=later, progress=lambda d, t: seen.append((d, t))
    )

    assert {(i.tenant, i.chat_id) for i in dry.idle} == {
        ("acme", old_a),
        ("acme", old_b),
        ("globex", old_c),
    }
    assert dry.erased == [] and seen == [(1, 3), (2, 3), (3, 3)]
    assert (
        tamperer.run(f"SELECT originator_id, originator_version, state FROM {tamperer.events}")
        == raw_log
    )
    assert store.messages(old_a, tenant="acme")

    acme = store.operations.retain(timedelta(days=90), tenant="acme", now=later)
    assert sorted(r.chat_id or "" for r in acme.erased) == sorted([old_a, old_b])
    with pytest.raises(ConversationErasedError):
        store.messages(old_a, tenant="acme")
    assert store.messages(old_c, tenant="globex") and store.messages(fresh, tenant="acme")
    assert store.history(old_a, tenant="acme")[-1].actor == "system:retention"

    everyone = store.operations.retain(timedelta(days=90), now=later)
    assert [r.chat_id for r in everyone.erased] == [old_c]
    assert store.messages(fresh, tenant="acme")
    assert store.operations.verify().ok
    raw = raw_database(durable_backend)
    assert [traces(raw, tag) for tag in "FGH"] == [[], [], []]
    assert traces(raw, "I") == canaries("I")  # the search sees what is there


def test_a_memory_store_refuses_to_erase() -> None:
    """memory:// keeps no log to erase from: a clear error, not a traceback."""
    with ConversationStore.open("memory://") as store:
        chat = fill(store, "J")
        with pytest.raises(StoreConfigurationError, match="SQLite or PostgreSQL"):
            store.operations.erase(chat, actor="operator:olga", reason="r")


def test_events_encrypted_before_data_keys_load_verify_and_are_erased(
    durable_backend: Backend,
) -> None:
    """A store from before data keys: its store-key events still load and verify; erase purges them too."""
    key = AESCipher.create_key(32)
    old = durable_backend.open(cipher_key=key)
    data_keys = old.log.mapper.data_keys  # type: ignore[attr-defined]
    old.log.mapper.data_keys = None  # type: ignore[attr-defined]  # writes as a store without them did
    chat = fill(old, "K")
    expected = old.messages(chat)
    old.log.mapper.data_keys = data_keys  # type: ignore[attr-defined]
    old.close()
    tamperer = Tamperer(durable_backend.url)
    assert tamperer.run("SELECT COUNT(*) FROM chatledger_conversation_keys") == [(0,)]

    store = durable_backend.open(cipher_key=key)
    assert store.messages(chat) == expected
    store.append_message(
        chat, {"id": "u2", "role": "user", "parts": [{"type": "text", "text": "CANARYKTEXT again"}]}
    )
    assert tamperer.run("SELECT COUNT(*) FROM chatledger_conversation_keys") == [(1,)]
    assert store.messages(chat, at_version=store.version(chat))[-1]["id"] == "u2"
    assert store.operations.verify().ok
    store.operations.erase(chat, actor="operator:olga", reason="r")
    assert store.operations.verify().ok
    assert tamperer.run("SELECT COUNT(*) FROM chatledger_conversation_keys") == [(0,)]
    states = tamperer.run(f"SELECT state FROM {tamperer.events}")
    assert all(b"erased/1" in bytes(state) for (state,) in states[:-1])


def test_a_write_between_reading_and_erasing_is_erased_too(
    durable_backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another writer commits after erase read the events: the erase clashes, reads again, erases all."""
    from chatledger.adapters.store.operations import erasure

    store, writer = durable_backend.open(), durable_backend.open()
    chat = fill(store, "L")
    planned = erasure._plan
    interleaved: list[int] = []

    def plan_then_write(*args: Any) -> Any:
        found = planned(*args)
        if not interleaved:  # the gate: exactly one write lands between the read and the erase
            writer.append_message(
                chat,
                {"id": "late", "role": "user", "parts": [{"type": "text", "text": "CANARYLTEXT"}]},
            )
            interleaved.append(writer.version(chat))
        return found

    monkeypatch.setattr(erasure, "_plan", plan_then_write)
    report = store.operations.erase(chat, actor="operator:olga", reason="r")

    assert report.events == interleaved[0]  # the late event was read again and erased
    assert [e.kind for e in store.history(chat)][-2:] == ["message-appended", "conversation-erased"]
    assert store.operations.verify().ok
    with pytest.raises(ConversationErasedError):
        writer.messages(chat)


def test_a_redacted_chat_is_erased_and_still_verifies(durable_backend: Backend) -> None:
    """Redaction then erasure: the Redacted event is erased too; the chain and the timeline hold."""
    store = durable_backend.open()
    chat = fill(store, "M")
    store.redact(chat, message_id="u-M", fields=["text"], actor="operator:olga", reason="password")
    store.operations.erase(chat, actor="operator:olga", reason="account closed")
    assert [e.kind for e in store.history(chat)][-2:] == ["redacted", "conversation-erased"]
    assert store.operations.verify().ok
    assert traces(raw_database(durable_backend), "M") == []
