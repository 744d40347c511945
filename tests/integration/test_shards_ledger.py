"""Compaction and the usage ledger on a sharded store: each call goes to the conversation's database."""

from __future__ import annotations

import pytest

from chatledger import ConversationStore
from chatledger.adapters.store.usage import read_usage
from chatledger.domain.usage import Tokens
from tests.integration.test_compaction import _talk
from tests.integration.test_shards import _one_chat_per_shard, three_databases  # noqa: F401

pytestmark = pytest.mark.postgres


@pytest.mark.timeout(180)
def test_compaction_and_usage_across_shards(three_databases: str) -> None:  # noqa: F811
    """A compaction per shard reads back from its shard; usage rolls up over every shard."""
    with ConversationStore.open(three_databases) as store:
        chats = _one_chat_per_shard(store.tenant, 3)
        for n, chat in enumerate(chats, start=1):
            _talk(store, chat, 7)
            store.compact(chat, from_message_id="u1", to_message_id="a2", summary=chat, actor="x")
            store.record_usage(chat, Tokens(input=n, output=n), model=f"m{n}")
        for chat in chats:
            assert store.model_messages(chat, "openai-chat")[0] == {
                "role": "system",
                "content": chat,
            }
            assert store.compactions(chat)[0]["messageIds"] == ["u1", "a1", "u2", "a2"]
        report = read_usage(store, by=["model", "conversation"])
        assert report.total.total == 2 + 4 + 6
        assert sorted(row.key for row in report.groups["conversation"]) == sorted(chats)
