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
