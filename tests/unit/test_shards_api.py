"""A sharded store answers every public method of ``ConversationStore`` itself (none reaches a missing part)."""

from __future__ import annotations

from chatledger.adapters.store.shards import ShardedStore, shard_index
from chatledger.adapters.store.store import ConversationStore


def test_every_public_method_is_routed_or_read_across_shards() -> None:
    public = [
        name
        for name in dir(ConversationStore)
        if not name.startswith("_") and callable(getattr(ConversationStore, name))
    ]
    inherited = [
        name
        for name in public
        if name != "open" and getattr(ShardedStore, name) is getattr(ConversationStore, name)
    ]
    assert inherited == [], f"add these to chatledger.adapters.store.shards: {inherited}"


def test_a_conversation_stays_in_its_shard_and_chats_spread_over_all() -> None:
    assert shard_index("t", "chat", 3) == shard_index("t", "chat", 3)
    assert {shard_index("t", f"chat-{n}", 3) for n in range(60)} == {0, 1, 2}
