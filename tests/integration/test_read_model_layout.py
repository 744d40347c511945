"""A store whose read models an older version laid out opens with this one and reads right.

The read models are derived from the log: tables laid out before the ``_v2``
names (messages as JSON text, timeline text columns, the list row with its
search text) are dropped on open and projected again from the log.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from chatledger import ConversationStore
from chatledger.adapters.responders import demo
from chatledger.domain.aggregate import conversation_id
from tests.integration.conftest import Backend
from tests.integration.tamper import Tamperer

pytestmark = pytest.mark.timeout(120)

# The read-model tables as the version before the _v2 layout created them.
OLD_SQLITE = (
    "CREATE TABLE chatledger_conversations ("
    " conversation_id TEXT PRIMARY KEY, tenant TEXT NOT NULL, chat_id TEXT NOT NULL,"
    " version INTEGER NOT NULL, messages TEXT NOT NULL, status TEXT NOT NULL,"
    " updated_at TEXT NOT NULL)",
    "CREATE TABLE chatledger_timeline ("
    " conversation_id TEXT NOT NULL, position INTEGER NOT NULL, recorded_at TEXT NOT NULL,"
    " actor TEXT, kind TEXT NOT NULL, summary TEXT NOT NULL, details TEXT NOT NULL,"
    " marks TEXT NOT NULL, PRIMARY KEY (conversation_id, position))",
    "CREATE TABLE chatledger_conversation_list ("
    " conversation_id TEXT PRIMARY KEY, tenant TEXT NOT NULL, chat_id TEXT NOT NULL,"
    " title TEXT NOT NULL, titled INTEGER NOT NULL, created_at TEXT NOT NULL,"
    " updated_at TEXT NOT NULL, version INTEGER NOT NULL, message_count INTEGER NOT NULL,"
    " status TEXT NOT NULL, pending_approvals INTEGER NOT NULL, metadata TEXT,"
    " body TEXT NOT NULL DEFAULT '')",
    "CREATE INDEX chatledger_conversation_list_by_tenant"
    " ON chatledger_conversation_list (tenant, updated_at, conversation_id)",
    "CREATE VIRTUAL TABLE chatledger_conversation_search USING fts5("
    " body, tokenize = 'unicode61 remove_diacritics 2')",
)
OLD_POSTGRES = (
    *OLD_SQLITE[:2],
    "CREATE TABLE chatledger_conversation_list ("
    ' conversation_id TEXT COLLATE "C" PRIMARY KEY, tenant TEXT NOT NULL,'
    " chat_id TEXT NOT NULL, title TEXT NOT NULL, titled INTEGER NOT NULL,"
    ' created_at TEXT NOT NULL, updated_at TEXT COLLATE "C" NOT NULL,'
    " version INTEGER NOT NULL, message_count INTEGER NOT NULL, status TEXT NOT NULL,"
    " pending_approvals INTEGER NOT NULL, metadata TEXT, body TEXT NOT NULL,"
    " search tsvector GENERATED ALWAYS AS (to_tsvector('simple', body)) STORED)",
    "CREATE INDEX chatledger_conversation_list_by_tenant"
    " ON chatledger_conversation_list (tenant, updated_at, conversation_id)",
    "CREATE INDEX chatledger_conversation_list_search"
    " ON chatledger_conversation_list USING GIN (search)",
)
NEW = (
    "chatledger_conversations_v2",
    "chatledger_timeline_v2",
    "chatledger_conversation_list_v2",
)


def _fill(store: ConversationStore) -> dict[str, Any]:
    """Two conversations (one waiting on an approval); what the reads give."""
    demo.record_demo(store, "done")
    store.start_conversation("paused")
    store.append_message("paused", demo.USER_MESSAGE)
    store.ingest("paused", demo.first_turn_chunks())
    return _reads(store)


def _reads(store: ConversationStore) -> dict[str, Any]:
    listed = store.list_conversations()
    texts = [p["text"] for m in store.messages("done") for p in m["parts"] if p["type"] == "text"]
    word = re.findall(r"\w{4,}", texts[-1])[0]  # a word of the last answer
    return {
        "messages": {chat: store.messages(chat) for chat in ("done", "paused")},
        "history": {
            chat: [entry.to_json() for entry in store.history(chat)] for chat in ("done", "paused")
        },
        "kinds": [entry.position for entry in store.history("done", kinds=["stream-closed"])],
        "list": [(s.chat_id, s.title, s.version, s.status) for s in listed.conversations],
        "search": sorted(s.chat_id for s in store.list_conversations(query=word[:3]).conversations),
        "approvals": [(p.chat_id, p.tool_call_id) for p in store.pending_approvals()],
    }


def _lay_out_as_before(backend: Backend, reads: dict[str, Any]) -> None:
    """The read models as the older version left them: old tables, filled, tracking at the head."""
    raw = Tamperer(backend.url)
    search = () if raw.postgres else ("chatledger_conversation_search_v2",)
    for table in (*NEW, *search):
        raw.run(f"DROP TABLE {table}")
    for statement in OLD_POSTGRES if raw.postgres else OLD_SQLITE:
        raw.run(statement)
    for chat, messages in reads["messages"].items():
        key = str(conversation_id("default", chat))
        version = len(reads["history"][chat])
        raw.run(
            "INSERT INTO chatledger_conversations VALUES (?, 'default', ?, ?, ?, 'idle', ?)",
            key,
            chat,
            version,
            json.dumps(messages),
            "2026-01-01T00:00:00.000000+00:00",
        )
        for entry in reads["history"][chat]:
            raw.run(
                "INSERT INTO chatledger_timeline VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                key,
                entry["position"],
                entry["time"],
                entry["actor"],
                entry["kind"],
                entry["summary"],
                json.dumps(entry["details"]),
                json.dumps(entry["marks"]),
            )
        raw.run(
            "INSERT INTO chatledger_conversation_list (conversation_id, tenant, chat_id, title,"
            " titled, created_at, updated_at, version, message_count, status,"
            " pending_approvals, metadata, body) VALUES"
            " (?, 'default', ?, ?, 0, ?, ?, ?, ?, 'idle', 0, NULL, ?)",
            key,
            chat,
            chat,
            "2026-01-01T00:00:00.000000+00:00",
            "2026-01-01T00:00:00.000000+00:00",
            version,
            len(messages),
            json.dumps(messages),
        )


def test_a_store_with_read_models_of_the_older_layout_reads_right(
    durable_backend: Backend,
) -> None:
    with ConversationStore.open(durable_backend.url) as store:
        expected = _fill(store)
    assert expected["approvals"] and expected["search"] and expected["kinds"]
    _lay_out_as_before(durable_backend, expected)

    with ConversationStore.open(durable_backend.url) as store:
        assert _reads(store) == expected
        assert store.operations.verify().ok
    raw = Tamperer(durable_backend.url)
    if raw.postgres:
        found = raw.run(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
        )
    else:
        found = raw.run("SELECT name FROM sqlite_master WHERE type = 'table'")
    names = {name for (name,) in found}
    assert set(NEW) <= names
    assert not names & {"chatledger_conversations", "chatledger_timeline"}  # dropped
