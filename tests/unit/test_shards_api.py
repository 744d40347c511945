"""A sharded store answers every method of ``ConversationStore`` and ``Operations`` itself (none is left missing)."""

from __future__ import annotations

import inspect

from chatledger.adapters.store.operations import Operations
from chatledger.adapters.store.operations.sharded import ShardedOperations
from chatledger.adapters.store.shards import ShardedStore, shard_index
from chatledger.adapters.store.store import ConversationStore


def _public_methods(cls: type) -> list[str]:
    return [name for name in dir(cls) if not name.startswith("_") and callable(getattr(cls, name))]


def _parameters(function: object) -> list[tuple[str, object, object]]:
    """Each parameter's name, kind and default (annotations are spelt per module)."""
    signature = inspect.signature(function)  # type: ignore[arg-type]
    return [(p.name, p.kind, p.default) for p in signature.parameters.values()]


def test_every_public_method_is_routed_or_read_across_shards() -> None:
    inherited = [
        name
        for name in _public_methods(ConversationStore)
        if name != "open" and getattr(ShardedStore, name) is getattr(ConversationStore, name)
    ]
    assert inherited == [], f"add these to chatledger.adapters.store.shards: {inherited}"


def test_every_operation_is_answered_across_shards() -> None:
    """``ShardedStore(...).operations`` defines each ``Operations`` method itself, called the same way."""
    shards = [ConversationStore.open("memory://"), ConversationStore.open("memory://")]
    with ShardedStore(shards) as sharded:
        operations = sharded.operations
        assert isinstance(operations, ShardedOperations)
        for name in _public_methods(Operations):
            assert name in vars(ShardedOperations), f"add {name} to ShardedOperations"
            answered = getattr(operations, name)
            assert answered.__self__ is operations
            assert _parameters(answered) == _parameters(getattr(shards[0].operations, name)), name


def test_a_conversation_stays_in_its_shard_and_chats_spread_over_all() -> None:
    assert shard_index("t", "chat", 3) == shard_index("t", "chat", 3)
    assert {shard_index("t", f"chat-{n}", 3) for n in range(60)} == {0, 1, 2}
