"""Names that moved to a service (``store.operations``, ``store.streams``) answer for a release, with a warning."""

from __future__ import annotations

import io
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from chatledger import ConversationStore
from chatledger.adapters.store.operations import WIRING, Operations
from chatledger.adapters.store.operations.sharded import ShardedOperations
from chatledger.adapters.store.store import ShardedStore
from chatledger.adapters.store.surface import DEPRECATED
from chatledger.domain.seal import SealKey

NOW = datetime(2025, 1, 1, tzinfo=UTC)
CALLS: dict[str, tuple[tuple[Any, ...], dict[str, Any]]] = {
    "verify": ((), {}),
    "seal": ((SealKey.from_text("an operator's seal key, long enough"),), {}),
    "head": ((), {}),
    "export": (("chat", io.StringIO()), {}),
    "erase": (("chat",), {"actor": "ops:olga", "reason": "request"}),
    "retain": ((timedelta(days=1),), {"dry_run": True, "now": NOW}),
    "rebuild": ((), {}),
    "catch_up": ((), {}),
    "quarantined": ((), {}),
    "read_model_counts": ((), {}),
    "forget_cached": ((), {}),
    "otel_exporter": (("http://127.0.0.1:9",), {}),
}
"""One call of each operator method (a memory:// store answers some with an error)."""
SINCE_THE_MOVE = {"finish_erasure", "conversations_of", "erase_subject", "export_subject"}
"""Operations added after the move: never on the store itself, so no old spelling forwards them."""


def _opened() -> ConversationStore:
    store = ConversationStore.open("memory://")
    store.start_conversation("chat")
    return store


@pytest.fixture
def store() -> Iterator[ConversationStore]:
    with _opened() as opened:
        yield opened


def _outcome(call: Any, name: str) -> Any:
    """What the call returns, or the type and text of what it raises."""
    args, kwargs = CALLS[name]
    try:
        return call(*args, **kwargs)
    except Exception as error:
        return type(error), str(error)


def test_the_table_names_every_operation() -> None:
    """The deprecated names are exactly the public methods of ``Operations``."""
    public = (
        {name for name in vars(Operations) if not name.startswith("_")} - SINCE_THE_MOVE - WIRING
    )
    operations = {name for name, service in DEPRECATED.items() if service == "operations"}
    assert public == operations == set(CALLS)


def test_the_stream_expiry_moved_to_store_streams(store: ConversationStore) -> None:
    """``store.expire_stream(s)`` warn, naming ``store.streams``, and answer as it does."""
    assert {name for name, service in DEPRECATED.items() if service == "streams"} == {
        "expire_stream",
        "expire_streams",
    }
    with pytest.warns(DeprecationWarning, match=r"use store\.streams\.expire_stream\("):
        assert store.expire_stream("chat") is False
    with pytest.warns(DeprecationWarning, match=r"use store\.streams\.expire_streams\("):
        assert store.expire_streams() == store.streams.expire_streams() == []


@pytest.mark.parametrize("name", sorted(CALLS))
def test_the_old_spelling_warns_and_answers_as_store_operations(
    store: ConversationStore, name: str
) -> None:
    """``store.x(...)`` warns at the caller's line, naming ``store.operations.x``, and gives its result."""
    with pytest.warns(DeprecationWarning, match=rf"use store\.operations\.{name}\(") as caught:
        forward = getattr(store, name)
    assert [w.filename for w in caught] == [__file__]  # stacklevel: the caller, not the store
    assert forward == getattr(store.operations, name)  # the bound method itself
    with _opened() as twin:  # the same store again: calls that change it are compared fairly
        assert _outcome(forward, name) == _outcome(getattr(twin.operations, name), name)


def test_a_misspelt_attribute_raises_attribute_error_as_usual(store: ConversationStore) -> None:
    """Only the table's names are forwarded: anything else missing is an AttributeError."""
    with pytest.raises(AttributeError) as raised:
        store.verfiy  # type: ignore[attr-defined]  # noqa: B018
    assert str(raised.value) == "'ConversationStore' object has no attribute 'verfiy'"
    assert raised.value.name == "verfiy" and raised.value.obj is store
    assert not hasattr(store, "verfiy")
    assert not hasattr(ConversationStore, "verify")  # no method of the class any more


def test_dir_lists_operations_not_the_deprecated_names(store: ConversationStore) -> None:
    """``dir()`` steers to the new spelling; ``hasattr`` still finds the old one (with a warning)."""
    assert "operations" in dir(store) and "verify" not in dir(store)
    with pytest.warns(DeprecationWarning):
        assert hasattr(store, "verify")


def test_a_sharded_store_forwards_to_its_sharded_operations() -> None:
    """``sharded.verify()`` warns too, and runs across the shards."""
    shards = [ConversationStore.open("memory://"), ConversationStore.open("memory://")]
    with ShardedStore(shards) as sharded:
        assert isinstance(sharded.operations, ShardedOperations)
        with pytest.warns(DeprecationWarning, match=r"store\.operations\.head\("):
            head = sharded.head()  # type: ignore[attr-defined]
        assert head == sharded.operations.head() == 0
        with pytest.raises(AttributeError, match="'ShardedStore' object has no attribute 'hed'"):
            sharded.hed  # type: ignore[attr-defined]  # noqa: B018
