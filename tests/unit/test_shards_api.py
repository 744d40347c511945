"""A sharded store answers what ``ConversationStore`` and its services answer (none is left missing)."""

from __future__ import annotations

import inspect

from chatledger.adapters.store.chats import Chats
from chatledger.adapters.store.inbox import Inbox
from chatledger.adapters.store.operations import WIRING, Operations
from chatledger.adapters.store.operations.sharded import ShardedOperations
from chatledger.adapters.store.reads.reader import Reader
from chatledger.adapters.store.shards import ShardedInbox, shard_index
from chatledger.adapters.store.store import ConversationStore, ShardedStore
from chatledger.adapters.store.streams.service import Streams
from chatledger.adapters.store.surface import Store

CONSTRUCTORS = {"open"}


def _public_methods(cls: type) -> list[str]:
    return [name for name in dir(cls) if not name.startswith("_") and callable(getattr(cls, name))]


def _parameters(function: object) -> list[tuple[str, object, object]]:
    """Each parameter's name, kind and default (annotations are spelt per module)."""
    signature = inspect.signature(function)  # type: ignore[arg-type]
    return [(p.name, p.kind, p.default) for p in signature.parameters.values()]


def test_a_sharded_store_is_a_store_and_answers_the_whole_chat_surface() -> None:
    """Every public name of ``ConversationStore`` but its constructors, and every service method."""
    shards = [ConversationStore.open("memory://"), ConversationStore.open("memory://")]
    with ShardedStore(shards) as sharded:
        assert isinstance(sharded, Store) and isinstance(shards[0], Store)
        missing = [
            name
            for name in _public_methods(ConversationStore)
            if name not in CONSTRUCTORS and not hasattr(sharded, name)
        ]
        assert missing == [], f"add these to chatledger.adapters.store.shards: {missing}"
        for name in _public_methods(Inbox):
            assert name in vars(ShardedInbox), f"add {name} to ShardedInbox"
        for service, cls in (("chats", Chats), ("reads", Reader), ("streams", Streams)):
            for name in _public_methods(cls):
                assert callable(getattr(getattr(sharded, service), name)), f"{service}.{name}"


def test_every_operation_is_answered_across_shards() -> None:
    """``ShardedStore(...).operations`` defines each ``Operations`` method itself, called the same way."""
    shards = [ConversationStore.open("memory://"), ConversationStore.open("memory://")]
    with ShardedStore(shards) as sharded:
        operations = sharded.operations
        assert isinstance(operations, ShardedOperations)
        for name in set(_public_methods(Operations)) - WIRING:
            assert name in vars(ShardedOperations), f"add {name} to ShardedOperations"
            answered = getattr(operations, name)
            assert answered.__self__ is operations
            assert _parameters(answered) == _parameters(getattr(shards[0].operations, name)), name


def test_a_conversation_stays_in_its_shard_and_chats_spread_over_all() -> None:
    assert shard_index("t", "chat", 3) == shard_index("t", "chat", 3)
    assert {shard_index("t", f"chat-{n}", 3) for n in range(60)} == {0, 1, 2}
