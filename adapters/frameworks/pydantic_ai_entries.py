"""The Pydantic AI entries and records ``ChatLedgerConversationStore`` reads back from chatledger.

A conversation's current record is the last record marker of its chat's view
(or, when a write was interrupted after its cut, the last one in the log);
its history is the chain of entries from the record's head back to the first.
Entries never change once stored, so every entry read (from a view, or from
the ``message-appended`` audit for cut branches) is cached for the life of
the store instance.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from pydantic_ai.conversation_store import (
    ConversationConflict,
    ConversationEntry,
    ConversationRecord,
)

from chatledger.adapters.frameworks.pydantic_ai_mapping import (
    Json,
    branch_tips,
    entry_of,
    record_in,
)
from chatledger.domain.errors import ConversationNotFoundError

if TYPE_CHECKING:
    from chatledger.adapters.store import ConversationStore

__all__ = ["DELETE_TRIGGER", "EntryIndex"]

DELETE_TRIGGER = "pydantic-ai-delete"
"""The cut trigger of ``delete_record``: a record before it in the log is deleted."""


class EntryIndex:
    """The entries of the chats one store instance reads, cached by id, and the records they hang from."""

    def __init__(self, store: ConversationStore, tenant: str | None) -> None:
        self.store = store
        self.tenant = tenant
        self._entries: dict[str, ConversationEntry] = {}
        """Entries seen by this instance (entries never change, so a cache is safe)."""

    def remember(self, entries: dict[str, ConversationEntry]) -> None:
        """Cache entries just written (their ids are new, or hold the same entry)."""
        for entry_id, entry in entries.items():
            self._entries.setdefault(entry_id, entry)

    def current(self, chat: str, messages: list[Json]) -> ConversationRecord | None:
        """The chat's current record (indexing its entries on the way).

        The last record marker of the view; when the view has none (a write
        was interrupted after its cut), the last marker in the log, unless a
        ``pydantic-ai-delete`` cut came after it.
        """
        record = record_in(messages)
        if record is not None:
            self._index(chat, messages)
            return record
        logged = self.store.history(
            chat, kinds=["message-appended", "messages-cut"], tenant=self.tenant
        )
        for item in logged:
            if item.kind == "messages-cut":
                if item.details.get("trigger") == DELETE_TRIGGER:
                    record = None
                continue
            message = item.details.get("message") or {}
            entry = entry_of(message)
            if entry is not None:
                self._entries.setdefault(entry.id, entry)
            record = record_in([message]) or record
        return record

    def history(
        self, record: ConversationRecord, new_entries: dict[str, ConversationEntry]
    ) -> list[ConversationEntry]:
        """The entries from the first to ``record.head_id`` (the chat's log is read for unseen ones)."""
        history: list[ConversationEntry] = []
        entry_id = record.head_id
        indexed = False
        while entry_id is not None:
            entry = new_entries.get(entry_id) or self._entries.get(entry_id)
            if entry is None and not indexed:
                self._index_log(record.conversation_id)
                indexed = True
                continue
            if entry is None:  # released by a concurrent delete, or never stored
                raise ConversationConflict(record.conversation_id)
            history.append(entry)
            entry_id = entry.parent_id
        history.reverse()
        return history

    def find(self, entry_id: str, chats: Callable[[], Iterable[str]]) -> ConversationEntry:
        """A copy of an entry of any of ``chats`` (their logs are indexed on a miss); else KeyError."""
        if entry_id not in self._entries:
            for chat in chats():
                self._index_log(chat)
                if entry_id in self._entries:
                    break
        return copy.deepcopy(self._entries[entry_id])

    def _index(self, chat: str, messages: list[Json]) -> None:
        """Cache every entry the chat ever held (the view, and cut branches from the log)."""
        found = [entry_of(message) for message in messages]
        if any(entry is not None and entry.id not in self._entries for entry in found) or any(
            tip not in self._entries for tip in branch_tips(messages)
        ):
            appended = self.store.history(chat, kinds=["message-appended"], tenant=self.tenant)
            found += [entry_of(item.details.get("message") or {}) for item in appended]
        for entry in found:
            if entry is not None:
                self._entries.setdefault(entry.id, entry)

    def _index_log(self, chat: str) -> None:
        """Cache every entry the chat's log holds."""
        with contextlib.suppress(ConversationNotFoundError):
            for item in self.store.history(chat, kinds=["message-appended"], tenant=self.tenant):
                entry = entry_of(item.details.get("message") or {})
                if entry is not None:
                    self._entries.setdefault(entry.id, entry)
