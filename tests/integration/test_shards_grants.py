"""Standing grants on a store over three PostgreSQL databases: one ledger, covering every shard."""

from __future__ import annotations

import pytest

from chatledger import ConversationStore
from chatledger.adapters.store.store import ShardedStore
from tests.integration.test_grants import USER, approved_by_grant, ask
from tests.integration.test_shards import _one_chat_per_shard, three_databases  # noqa: F401

pytestmark = pytest.mark.postgres


@pytest.mark.timeout(180)
def test_a_grant_given_in_one_shard_covers_the_calls_of_every_shard(three_databases: str) -> None:  # noqa: F811
    store = ConversationStore.open(three_databases)
    try:
        assert isinstance(store, ShardedStore)
        first, *others = _one_chat_per_shard(store.tenant, 3)
        call = ask(store, first, "search", {"q": "x"})
        grant = store.grants.approve(first, tool_call_id=call, actor=USER)
        for chat in others:
            assert approved_by_grant(store, chat, ask(store, chat, "search", {"q": "x"}))
            assert not approved_by_grant(store, chat, ask(store, chat, "search", {"q": "y"}))
        assert store.grants.get(grant.grant_id).uses == 2
    finally:
        store.close()


@pytest.mark.timeout(180)
def test_erasing_a_chat_of_another_shard_erases_it_from_the_shared_ledger(
    three_databases: str,  # noqa: F811
) -> None:
    """The ledger is in the first database: its events stop naming the chat, and its files are cleaned."""
    from urllib.parse import urlsplit, urlunsplit

    import psycopg

    store = ConversationStore.open(three_databases)
    try:
        first, other, _ = _one_chat_per_shard(store.tenant, 3)
        grant = store.grants.approve(first, tool_call_id=ask(store, first, "search", {"q": "x"}),
                                     actor=USER)  # fmt: skip
        assert approved_by_grant(store, other, ask(store, other, "search", {"q": "x"}))
        report = store.operations.erase(other, actor="op:olga", reason="GDPR 44")
        assert report.compaction is not None and report.compaction.done, report.compaction
        assert any("chatledger_grants_events" in c for c in report.compaction.cleaned)
        parts = urlsplit(three_databases)
        ledger_db = urlunsplit(parts._replace(path="/" + parts.path.strip("/").split(",")[0]))
        with psycopg.connect(ledger_db) as db:
            rows = [bytes(r[0]) for r in db.execute("SELECT state FROM chatledger_grants_events")]
        assert rows and not any(other.encode() in state for state in rows)
        assert store.grants.get(grant.grant_id).uses == 1  # the use still counts
    finally:
        store.close()
