"""Conversations this store saved last, kept in memory so the next action need not reload them.

Each cached conversation has one owner at a time: an action takes it out,
decides on it, and puts it back only once its events are saved. Before use
it is checked against the log (one indexed query for newer events), and
optimistic concurrency catches any write that slips in between, so a stale
entry can cost a retry but never a wrong decision.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from uuid import UUID

from chatledger.domain.aggregate import Conversation

__all__ = ["ConversationCache", "ReadCache"]


class ConversationCache:
    """A small LRU of saved conversations, each handed out to one user at a time."""

    def __init__(self, size: int = 256) -> None:
        self._size = size
        self._items: OrderedDict[UUID, Conversation] = OrderedDict()
        self._lock = threading.Lock()

    def clear(self) -> None:
        """Forget every cached conversation."""
        with self._lock:
            self._items.clear()

    def take(self, key: UUID) -> Conversation | None:
        """Remove and return the cached conversation, if any."""
        with self._lock:
            return self._items.pop(key, None)

    def give(self, key: UUID, conversation: Conversation) -> None:
        """Keep a conversation whose events are all saved."""
        if self._size <= 0 or conversation.pending_events:
            return
        with self._lock:
            self._items[key] = conversation
            self._items.move_to_end(key)
            while len(self._items) > self._size:
                self._items.popitem(last=False)


class ReadCache:
    """The messages JSON last read from the read model per conversation, bounded by total size.

    A read checks the log for newer events (one indexed query) before using
    an entry, so an entry is never served stale; it saves re-fetching large
    rows (on PostgreSQL, most of the cost of reading a long conversation).
    """

    def __init__(self, max_chars: int = 64 * 1024 * 1024) -> None:
        self._max = max_chars
        self._used = 0
        self._items: OrderedDict[UUID, tuple[int, str]] = OrderedDict()
        self._lock = threading.Lock()

    def clear(self) -> None:
        """Forget every cached row."""
        with self._lock:
            self._items.clear()
            self._used = 0

    def get(self, key: UUID) -> tuple[int, str] | None:
        """(version, messages JSON) last kept for the conversation, if any."""
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
            return found

    def put(self, key: UUID, version: int, text: str) -> None:
        """Keep the conversation's messages JSON as of ``version``."""
        if len(text) > self._max // 4:
            return
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._used -= len(old[1])
            self._items[key] = (version, text)
            self._used += len(text)
            while self._used > self._max:
                _, (_, dropped) = self._items.popitem(last=False)
                self._used -= len(dropped)
