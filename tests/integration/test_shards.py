"""A store over three PostgreSQL databases (one URL listing them), used through HTTP.

The databases are created here (``CREATE DATABASE``) and dropped after. One
conversation per shard goes through ``POST /api/chat``; the approvals inbox,
the conversation list (with its cursor) and the continuation queue read all
three; each conversation's events are in its own database only.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest
from psycopg import sql

from chatledger import ConversationStore
from chatledger.adapters.http.app import create_app
from chatledger.adapters.responders import demo
from chatledger.adapters.responders.scripted import demo_responder
from chatledger.adapters.store.shards import shard_index
from chatledger.adapters.store.store import ShardedStore
from chatledger.domain.aggregate import conversation_id
from chatledger.domain.errors import InvalidInputError, StoreConfigurationError
from tests.integration.http_support import client_of, send_body, sse_events
from tests.support.builders import user

pytestmark = [pytest.mark.anyio, pytest.mark.postgres]


@pytest.fixture
def three_databases(postgres_server: str) -> Iterator[str]:
    """A sharded store URL over three new, empty databases (dropped at teardown)."""
    names = [f"chatledger_shard_{uuid.uuid4().hex[:10]}_{i}" for i in range(3)]
    with psycopg.connect(postgres_server, autocommit=True) as connection:
        for name in names:
            connection.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield urlunsplit(urlsplit(postgres_server)._replace(path="/" + ",".join(names)))
    finally:
        with psycopg.connect(postgres_server, autocommit=True) as connection:
            for name in names:
                connection.execute(
                    sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
                )


def _one_chat_per_shard(tenant: str, shards: int) -> list[str]:
    found: dict[int, str] = {}
    for n in range(1000):
        found.setdefault(shard_index(tenant, f"chat-{n}", shards), f"chat-{n}")
        if len(found) == shards:
            return [found[i] for i in range(shards)]
    raise AssertionError("no chat id for some shard")


def _conversations_in(url: str) -> set[str]:
    """The conversation ids with events in one database (read with psycopg, not the store)."""
    with psycopg.connect(url) as connection:
        rows = connection.execute(
            "SELECT DISTINCT originator_id::text FROM chatledger_events"
        ).fetchall()
    return {row[0] for row in rows}


@pytest.mark.timeout(180)
async def test_a_conversation_per_shard_through_http(three_databases: str) -> None:
    store = ConversationStore.open(three_databases)
    try:
        assert isinstance(store, ShardedStore) and len(store.shards) == 3
        chats = _one_chat_per_shard(store.tenant, 3)
        app = create_app(store, responder=demo_responder(), run_continuations=False)
        async with client_of(app) as client:
            for chat in chats:  # each turn pauses on the demo's approval request
                sse_events(
                    await client.post("/api/chat", json=send_body(chat, [demo.USER_MESSAGE]))
                )

            inbox = (await client.get("/api/approvals")).json()["approvals"]
            assert sorted(item["chatId"] for item in inbox) == sorted(chats)

            first = (await client.get("/api/chats", params={"limit": 2})).json()
            second = (
                await client.get("/api/chats", params={"limit": 2, "cursor": first["nextCursor"]})
            ).json()
            listed = [c["id"] for c in first["conversations"] + second["conversations"]]
            assert sorted(listed) == sorted(chats) and second["nextCursor"] is None

            for chat in chats:
                messages = (await client.get(f"/api/chats/{chat}/messages")).json()
                assert [m["role"] for m in messages["messages"]] == ["user", "assistant"]
                deny = {"approvalId": demo.APPROVAL_ID, "approved": False, "reason": "no"}
                answered = await client.post(f"/api/chats/{chat}/approvals", json=deny)
                assert answered.json()["continuationRequested"] is True

        queue = store.pending_continuations()
        assert sorted(r.chat_id for r in queue) == sorted(chats)
        owner = app.state.chatledger.runner.owner  # the app's chats are its responder's
        assert store.claim_continuation("worker:test", lease_seconds=60) is None  # not any's
        claimed = [
            store.claim_continuation("worker:test", lease_seconds=60, owner=owner) for _ in chats
        ]
        assert sorted(c.chat_id for c in claimed if c is not None) == sorted(chats)
        assert store.claim_continuation("worker:test", lease_seconds=60, owner=owner) is None

        for index, (shard, chat) in enumerate(zip(store.shards, chats, strict=True)):
            url = urlunsplit(
                urlsplit(three_databases)._replace(path="/" + shard.config.env["POSTGRES_DBNAME"])
            )
            assert _conversations_in(url) == {str(conversation_id(store.tenant, chat))}, index
    finally:
        store.close()


def test_a_sharded_url_names_each_database_once(postgres_server: str) -> None:
    bad = urlunsplit(urlsplit(postgres_server)._replace(path="/a,,b"))
    with pytest.raises(StoreConfigurationError, match="list each database once"):
        ConversationStore.open(bad)
    twice = urlunsplit(urlsplit(postgres_server)._replace(path="/a,a"))
    with pytest.raises(StoreConfigurationError, match="list each database once"):
        ConversationStore.open(twice)


def test_erase_and_retention_across_shards(three_databases: str) -> None:
    """erase goes to the chat's shard; retain erases the idle chats of every shard, in one report."""
    from datetime import UTC, datetime, timedelta

    from chatledger import ConversationErasedError

    with ConversationStore.open(three_databases) as store:
        chats = _one_chat_per_shard("default", 3)
        for chat in chats:
            store.start_conversation(chat)
        cutoff = datetime.now(UTC)
        fresh = next(c for c in (f"fresh-{n}" for n in range(100)) if c not in chats)
        store.start_conversation(fresh)
        store.operations.erase(chats[0], actor="ops:olga", reason="request")
        with pytest.raises(ConversationErasedError):
            store.messages(chats[0])
        seen: list[tuple[int, int]] = []
        report = store.operations.retain(
            timedelta(days=1),
            now=cutoff + timedelta(days=1),
            progress=lambda d, t: seen.append((d, t)),
        )
        assert sorted(r.chat_id or "" for r in report.erased) == sorted(chats[1:])
        assert seen[-1] == (2, 2)
        assert store.messages(fresh) == []
        assert store.operations.verify().ok


def test_a_fork_stays_in_its_origins_shard(three_databases: str) -> None:
    """A fork reads its origin's log: a new chat id of another shard is refused, one of the same shard works."""
    with ConversationStore.open(three_databases) as store:
        first, second, _ = _one_chat_per_shard("default", 3)
        store.start_conversation(first)
        store.append_message(first, user("u1", "hello"))
        with pytest.raises(InvalidInputError, match="another shard"):
            store.fork(first, second)
        same = next(
            f"fork-{n}"
            for n in range(1000)
            if shard_index("default", f"fork-{n}", 3) == shard_index("default", first, 3)
        )
        store.fork(first, same)
        assert [m["id"] for m in store.messages(same)] == ["u1"]
