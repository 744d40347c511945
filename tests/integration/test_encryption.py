"""Encryption at rest that protects: nothing readable in the raw database, and the key is checked at open.

A store opened with a key writes events, snapshots and read models so that
no content (message text, tool input and output, approval reason, chat id,
actor, tenant) can be read from the raw SQLite file or the PostgreSQL
tables. A wrong key, a missing key, or a key given to a store created
without one is refused before anything is read or written.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import psycopg
import pytest
from eventsourcing.cryptography import AESCipher
from psycopg import sql

from chatledger import CipherKeyError, ConversationStore
from chatledger.adapters.cli.commands import main
from tests.integration.conftest import Backend

CANARY = "CANARY"
CHAT = f"chat-{CANARY}-id"
TENANT = f"tenant-{CANARY}"
ACTOR = f"user:{CANARY}-alice"


def fill(store: ConversationStore) -> None:
    """A conversation with every kind of content, each holding the canary, and a pending continuation."""
    store.start_conversation(CHAT, tenant=TENANT, actor=ACTOR, metadata={"title": CANARY})
    store.append_message(
        CHAT,
        {
            "id": f"u-{CANARY}",
            "role": "user",
            "parts": [{"type": "text", "text": f"{CANARY} text"}],
        },
        tenant=TENANT,
        actor=ACTOR,
    )
    call, approval = f"call_{CANARY}", f"ap_{CANARY}"
    store.ingest(
        CHAT,
        [
            {"type": "start", "messageId": f"m-{CANARY}"},
            {"type": "text-start", "id": "t1"},
            {"type": "text-delta", "id": "t1", "delta": f"{CANARY} answer"},
            {"type": "text-end", "id": "t1"},
            {
                "type": "tool-input-available",
                "toolCallId": call,
                "toolName": f"tool_{CANARY}",
                "input": {"path": f"/{CANARY}/input"},
            },
            {"type": "tool-approval-request", "approvalId": approval, "toolCallId": call},
            {"type": "finish", "finishReason": "tool-calls"},
        ],
        tenant=TENANT,
        actor=ACTOR,
    )
    store.start_conversation(f"second-{CANARY}", tenant=TENANT, actor=ACTOR)
    store.append_message(
        f"second-{CANARY}",
        {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "x"}]},
        tenant=TENANT,
    )
    store.ingest(
        f"second-{CANARY}",
        [
            {"type": "start"},
            {"type": "tool-input-available", "toolCallId": "c2", "toolName": "t", "input": {}},
            {"type": "finish"},
        ],
        tenant=TENANT,
    )
    store.add_tool_output(
        f"second-{CANARY}", "c2", output={"out": f"{CANARY} output"}, tenant=TENANT, actor=ACTOR
    )
    store.respond_to_approval(
        CHAT, approval_id=approval, approved=False, reason=f"{CANARY} reason", tenant=TENANT,
        actor=ACTOR,
    )  # fmt: skip
    assert store.claim_continuation(f"worker-{CANARY}", tenant=TENANT) is not None


def raw_contents(backend: Backend) -> bytes:
    """Every byte the database holds for the store: the SQLite files, or every row of the schema."""
    parts = urlsplit(backend.url)
    if backend.name == "sqlite":
        path = Path(parts.path[1:])
        return b"".join(p.read_bytes() for p in path.parent.glob(path.name + "*"))
    schema = parse_qs(parts.query)["schema"][0]
    found = []
    with psycopg.connect(parts._replace(query="").geturl(), autocommit=True) as db:
        tables = db.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = %s", (schema,)
        ).fetchall()
        assert len(tables) >= 8
        for (table,) in tables:
            for row in db.execute(
                sql.SQL("SELECT * FROM {}").format(sql.Identifier(schema, table))
            ):
                for value in row:
                    found.append(value if isinstance(value, bytes) else str(value).encode())
    return b"\n".join(found)


def test_a_store_without_a_key_shows_the_canaries(durable_backend: Backend) -> None:
    """The grep is sound: without a key (and uncompressed), the content is there to find."""
    with durable_backend.open(compress=False) as store:
        fill(store)
    assert CANARY.encode() in raw_contents(durable_backend)


def test_no_content_is_readable_in_the_raw_database(durable_backend: Backend) -> None:
    """Events, snapshots, read models, inbox, queue: no canary in the raw bytes; reads still work."""
    key = AESCipher.create_key(32)
    with durable_backend.open(compress=False, cipher_key=key) as store:
        fill(store)
        assert store.operations.verify().ok
    raw = raw_contents(durable_backend)
    assert raw and CANARY.encode() not in raw
    with durable_backend.open(compress=False, cipher_key=key, tenant=TENANT) as store:
        assert store.messages(CHAT)[0]["parts"][0]["text"] == f"{CANARY} text"
        history = store.history(CHAT, actor=ACTOR, limit=2)
        assert [e.actor for e in history] == [ACTOR, ACTOR]
        assert store.history(CHAT, actor="nobody") == []
        queue = {c.chat_id: c.claimed_by for c in store.pending_continuations()}
        assert queue == {f"second-{CANARY}": f"worker-{CANARY}", CHAT: None}
        assert store.pending_approvals() == []
        assert store.operations.rebuild() > 0
        assert store.operations.verify().ok
    assert CANARY.encode() not in raw_contents(durable_backend)


def test_a_wrong_or_missing_key_is_refused_before_anything_is_read_or_written(
    durable_backend: Backend,
) -> None:
    """Wrong key, no key, a key for a plain store: CipherKeyError at open, the log unchanged."""
    key = AESCipher.create_key(32)
    with durable_backend.open(cipher_key=key) as store:
        fill(store)
        head = store.operations.head()
    with pytest.raises(CipherKeyError, match="not this store's key"):
        durable_backend.open(cipher_key=AESCipher.create_key(32))
    with pytest.raises(CipherKeyError, match="encrypted"):
        durable_backend.open()
    with pytest.raises(CipherKeyError, match="base64"):
        durable_backend.open(cipher_key="not a key")
    with durable_backend.open(cipher_key=key, tenant=TENANT) as store:
        assert store.operations.head() == head
        assert store.messages(CHAT)
    plain = Backend(durable_backend.name, durable_backend.url.replace(".db", "-plain.db"))
    if durable_backend.name == "sqlite":
        with plain.open() as store:
            store.start_conversation("c")
        with pytest.raises(CipherKeyError, match="without encryption"):
            plain.open(cipher_key=key)


def test_a_store_older_than_key_checks_is_checked_by_its_first_event(tmp_path: Path) -> None:
    """A store created before check values: the first event decides, then the check is recorded."""
    url = f"sqlite:///{tmp_path / 'old.db'}"
    key = AESCipher.create_key(16)
    with ConversationStore.open(url, cipher_key=key) as store:
        store.start_conversation("c")
    with sqlite3.connect(tmp_path / "old.db", isolation_level=None) as db:
        db.execute("DELETE FROM chatledger_settings")
        # An older version wrote the read models in plaintext.
        db.execute("UPDATE chatledger_conversations_v2 SET chat_id = 'c'")
    with pytest.raises(CipherKeyError, match="cannot be read without a cipher key"):
        ConversationStore.open(url)
    with pytest.raises(CipherKeyError, match="cannot be read with the cipher key given"):
        ConversationStore.open(url, cipher_key=AESCipher.create_key(16))
    with ConversationStore.open(url, cipher_key=key) as store:
        assert store.version("c") == 1
        assert store.messages("c") == [] and store.operations.verify().ok  # re-derived, sealed
    with sqlite3.connect(tmp_path / "old.db", isolation_level=None) as db:
        (chat,) = db.execute("SELECT chat_id FROM chatledger_conversations_v2").fetchone()
        assert chat.startswith("k1:")
    with pytest.raises(CipherKeyError, match="not this store's key"):
        ConversationStore.open(url, cipher_key=AESCipher.create_key(16))


def test_the_cli_takes_the_key_from_a_file_or_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """--cipher-key-file and CHATLEDGER_CIPHER_KEY open the store; without them: a clear error."""
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    key = AESCipher.create_key(32)
    with ConversationStore.open(url, cipher_key=key) as store:
        store.start_conversation("c")
        store.append_message(
            "c", {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "hello"}]}
        )
    key_file = tmp_path / "key"
    key_file.write_text(key + "\n")
    monkeypatch.delenv("CHATLEDGER_CIPHER_KEY", raising=False)
    assert main(["--url", url, "show", "c"]) == 1
    assert "this store is encrypted" in capsys.readouterr().err
    assert main(["--url", url, "--cipher-key-file", str(key_file), "show", "c"]) == 0
    assert "hello" in capsys.readouterr().out
    assert main(["show", "c", "--url", url, "--cipher-key-file", str(tmp_path / "none")]) == 1
    assert "cannot read the cipher key file" in capsys.readouterr().err
    monkeypatch.setenv("CHATLEDGER_CIPHER_KEY", key)
    assert main(["--url", url, "verify"]) == 0
    monkeypatch.delenv("CHATLEDGER_CIPHER_KEY")
    monkeypatch.setenv("CHATLEDGER_CIPHER_KEY_FILE", str(key_file))
    assert main(["--url", url, "show", "c"]) == 0
