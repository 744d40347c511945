"""A store over several PostgreSQL databases: every conversation in one shard, the inbox read across all.

One URL lists the databases, comma-separated, on one server:
``postgresql://user@host:5432/chat_a,chat_b,chat_c`` (``?schema=`` applies
to each). A conversation lives in the shard its (tenant, chat id) hashes to
(its conversation id modulo the number of shards), so everything it is (its
log, snapshots, read-model rows) is in one database and every write to it is
a transaction of that database alone. Reads of one conversation go to its
shard; the conversation list, the approvals inbox and the continuation queue
read every shard and merge (the list keeps its order and its cursors).

``ShardedStore`` (``chatledger.adapters.store.store``) is a
``ConversationStore`` whose services are the ones here: they route each call
about one conversation to that conversation's shard (``Routed``), and those
across conversations merge (``ShardedInbox``, ``ShardedOperations``). The list
of databases is part of the store: adding, removing or reordering databases
moves conversations to other shards, so open the store with the same list
every time.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from chatledger.adapters.persistence.read_models.columns import list_time
from chatledger.domain.aggregate import conversation_id
from chatledger.projections.listing import ConversationList, ListQuery, encode_cursor
from chatledger.projections.read_models import ContinuationRequest, PendingApproval

if TYPE_CHECKING:
    from chatledger.adapters.store.store import ConversationStore

__all__ = ["ONE_PER_DATABASE", "Routed", "ShardedInbox", "Shards", "shard_index"]

ONE_PER_DATABASE = (
    "a sharded store has a log, read models and projector per database: use "
    "store.shards[i], or run `chatledger project` with each database's own URL"
)
"""Why a sharded store has no one log, read models or projector."""


class Shards(Protocol):
    """What the routed services need of their store: its databases' stores, and which holds a chat."""

    tenant: str
    shards: list[ConversationStore]

    def shard(self, chat_id: str, tenant: str | None = None) -> ConversationStore:
        """The store of the database that holds this conversation."""
        ...


def shard_index(tenant: str, chat_id: str, shards: int) -> int:
    """Which of ``shards`` databases holds the conversation (stable for a given list)."""
    return conversation_id(tenant, chat_id).int % shards


class Routed:
    """A service of a sharded store: a call about one conversation goes to that conversation's shard.

    Every per-conversation method of a service takes the chat id first (and
    ``tenant=`` when not the default); ``across`` names the methods that
    concern every shard, with their implementation.
    """

    def __init__(
        self, store: Shards, service: str, across: dict[str, Callable[..., Any]] | None = None
    ) -> None:
        self._store, self._service, self._across = store, service, across or {}

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name in self._across:
            return self._across[name]
        getattr(getattr(self._store.shards[0], self._service), name)  # AttributeError if none

        def to_shard(chat_id: str, *args: Any, **kwargs: Any) -> Any:
            shard = self._store.shard(chat_id, kwargs.get("tenant"))
            return getattr(getattr(shard, self._service), name)(chat_id, *args, **kwargs)

        return to_shard


class ShardedInbox:
    """The inbox across shards: each shard's, merged in the order one database gives."""

    def __init__(self, store: Shards) -> None:
        self._store = store

    def pending_approvals(self, *, tenant: str | None = None) -> list[PendingApproval]:
        """Every tool call awaiting approval across the tenant's conversations in all shards, oldest first."""
        found = [a for s in self._store.shards for a in s.inbox.pending_approvals(tenant=tenant)]
        return sorted(found, key=lambda a: a.requested_at)

    def automatic_approvals(self, *, tenant: str | None = None, limit: int = 10) -> list[Any]:
        """What standing grants approved lately, newest first (the shards share the first's ledger)."""
        return self._store.shards[0].inbox.automatic_approvals(tenant=tenant, limit=limit)

    def pending_continuations(self, *, tenant: str | None = None) -> list[ContinuationRequest]:
        """Continuation requests not yet started, in all shards, oldest first."""
        shards = self._store.shards
        found = [r for s in shards for r in s.inbox.pending_continuations(tenant=tenant)]
        return sorted(found, key=lambda r: r.requested_at)

    def claim_continuation(
        self, worker: str, *, tenant: str | None = None, chat_id: str | None = None, **options: Any
    ) -> ContinuationRequest | None:
        """Take the oldest claimable request of any shard (of ``chat_id``'s shard when given)."""
        if chat_id is not None:
            inbox = self._store.shard(chat_id, tenant).inbox
            return inbox.claim_continuation(worker, tenant=tenant, chat_id=chat_id, **options)
        for request in self.pending_continuations(tenant=tenant):
            won = self._store.shard(request.chat_id, request.tenant).inbox.claim_continuation(
                worker, tenant=request.tenant, chat_id=request.chat_id, **options
            )
            if won is not None:
                return won
        return None

    def list_conversations(self, *, tenant: str | None = None, **options: Any) -> ConversationList:
        """One page of the tenant's conversations of all shards, most recently changed first.

        Each shard gives its page after the same cursor; the merge keeps the
        first ``limit`` in the list's order (update time, then id, both
        descending), and the cursor names the last one kept.
        """
        wanted = ListQuery(tenant or self._store.tenant, **options)  # refuses bad options once
        pages = [s.inbox.list_conversations(tenant=tenant, **options) for s in self._store.shards]
        merged = sorted(
            (c for page in pages for c in page.conversations),
            key=lambda c: (list_time(c.updated_at), str(c.conversation_id)),
            reverse=True,
        )
        kept = merged[: wanted.limit]
        more = len(merged) > wanted.limit or any(page.next_cursor for page in pages)
        cursor = None
        if more and kept:
            last = kept[-1]
            cursor = encode_cursor(list_time(last.updated_at), last.conversation_id)
        return ConversationList(kept, cursor)
