"""Decisions on the cached conversation: no read query first, and never wrong when it is stale.

A store keeps the conversations it saved last and decides on them without
asking the database whether they are still current: a decision that records
events is checked by its own commit (a version clash if anyone wrote since),
and one that records nothing or refuses is checked afterwards and decided
again on the stored state if the cached one was stale.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from chatledger import ConversationStore
from chatledger.domain.errors import InvalidMessageError
from tests.integration.conftest import Backend
from tests.support.ledger import stored_events


def _user(message_id: str) -> dict[str, Any]:
    return {"id": message_id, "role": "user", "parts": [{"type": "text", "text": message_id}]}


@contextmanager
def counting_freshness_checks(store: ConversationStore) -> Iterator[list[int]]:
    """Count the log's 'anything newer?' queries (the real method, only counted)."""
    log = store.log
    real = log.has_events_after
    count = [0]

    def has_events_after(*args: Any) -> bool:
        count[0] += 1
        return real(*args)

    log.has_events_after = has_events_after  # type: ignore[method-assign]
    try:
        yield count
    finally:
        log.has_events_after = real  # type: ignore[method-assign]


def test_a_turn_on_a_cached_conversation_asks_nothing_before_writing(backend: Backend) -> None:
    """User message, stream open and close on a conversation this store wrote last: no query."""
    store = backend.open()
    store.start_conversation("chat")
    store.append_message("chat", _user("u0"))
    with counting_freshness_checks(store) as checks:
        store.append_message("chat", _user("u1"))
        with store.open_stream("chat") as stream:
            stream.append({"type": "start"})
        store.append_message("chat", _user("u2"))
    assert checks[0] == 0
    users = [m["id"] for m in store.messages("chat") if m["role"] == "user"]
    assert users == ["u0", "u1", "u2"]


def test_a_refusal_on_a_stale_cached_conversation_is_decided_again(
    durable_backend: Backend,
) -> None:
    """This store's cache says no stream is open; another store opened one since. Closing
    'whichever stream is open' is refused on the cached state, so it is decided again on the
    stored one and closes the other store's stream."""
    store = durable_backend.open()
    other = durable_backend.other_store(store)
    store.start_conversation("chat")
    store.append_message("chat", _user("u1"))  # cached here, with no stream open
    opened = other.open_stream("chat", commit=True)
    store.close_stream("chat", outcome="interrupted")
    closed = [e for e in stored_events(store, "chat") if type(e).__name__ == "StreamClosed"]
    assert [e.stream_id for e in closed] == [opened.stream_id]


def test_a_write_on_a_stale_cached_conversation_clashes_and_is_decided_again(
    durable_backend: Backend,
) -> None:
    """The cached state misses a message another store appended: a write of the same message
    clashes on its version and, decided again on the stored state, is refused as a duplicate;
    the next write lands after it."""
    store = durable_backend.open()
    other = durable_backend.other_store(store)
    store.start_conversation("chat")
    store.append_message("chat", _user("u1"))
    other.append_message("chat", _user("u2"))
    with pytest.raises(InvalidMessageError, match="already in the conversation"):
        store.append_message("chat", _user("u2"))  # new on the cached state only
    store.append_message("chat", _user("u3"))
    assert [m["id"] for m in store.messages("chat")] == ["u1", "u2", "u3"]
