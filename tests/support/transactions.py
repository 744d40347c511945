"""Which events each write transaction of a store carried, seen at its real recorder."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from chatledger import ConversationStore

T = TypeVar("T")


@contextmanager
def recorded_inserts(store: ConversationStore, note: Callable[[list[Any]], T]) -> Iterator[list[T]]:
    """``note`` of the stored events of each ``insert_events`` call (one transaction each).

    The store's own recorder does the writing; this only notes what each call
    carried (stored events have ``originator_id``, ``originator_version``, ``topic``).
    """
    recorder: Any = store.log.events.recorder
    real = recorder.insert_events
    calls: list[T] = []

    def insert_events(stored_events: Any, **kwargs: Any) -> Any:
        calls.append(note(list(stored_events)))
        return real(stored_events, **kwargs)

    recorder.insert_events = insert_events
    try:
        yield calls
    finally:
        del recorder.insert_events
