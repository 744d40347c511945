"""A store over several PostgreSQL databases: every conversation in one shard, the inbox read across all.

One URL lists the databases, comma-separated, on one server:
``postgresql://user@host:5432/chat_a,chat_b,chat_c`` (``?schema=`` applies
to each). A conversation lives in the shard its (tenant, chat id) hashes to
(its conversation id modulo the number of shards), so everything it is (its
log, snapshots, read-model rows) is in one database and every write to it is
a transaction of that database alone. Reads of one conversation go to its
shard; the conversation list, the approvals inbox and the continuation queue
read every shard and merge (the list keeps its order and its cursors).

The list of databases is part of the store: adding, removing or reordering
databases moves conversations to other shards, so open the store with the
same list every time.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from chatledger.adapters.persistence.read_models.columns import list_time
from chatledger.adapters.store.operations.sharded import ShardedOperations
from chatledger.adapters.store.store import ConversationStore
from chatledger.domain.aggregate import conversation_id
from chatledger.domain.errors import InvalidInputError
from chatledger.projections.listing import ConversationList, ListQuery, encode_cursor
from chatledger.projections.read_models import ContinuationRequest, PendingApproval

__all__ = ["ROUTED", "ShardedStore", "shard_index"]

T = TypeVar("T")

ROUTED = (
    "start_conversation",
    "append_message",
    "open_stream",
    "close_stream",
    "ingest",
    "add_tool_output",
    "respond_to_approval",
    "regenerate",
    "cut",
    "edit",
    "transact",
    "status",
    "steering",
    "set_title",
    "set_metadata",
    "messages",
    "model_messages",
    "ai_sdk_of",
    "history",
    "follow",
    "follow_async",  # a coroutine: the shard's, awaited by the caller
    "version",
    "conversation",
    "expire_stream",
    "redact",
)
"""The methods about one conversation: each goes to the conversation's shard."""


_ONE_PER_DATABASE = (
    "a sharded store has a log, read models and projector per database: use "
    "store.shards[i], or run `chatledger project` with each database's own URL"
)


def shard_index(tenant: str, chat_id: str, shards: int) -> int:
    """Which of ``shards`` databases holds the conversation (stable for a given list)."""
    return conversation_id(tenant, chat_id).int % shards


class ShardedStore(ConversationStore):
    """``ConversationStore`` over several databases (see the module docstring); open it with a URL listing them."""

    def __init__(self, shards: Sequence[ConversationStore]) -> None:
        if not shards:
            raise InvalidInputError("a sharded store needs at least one database")
        first = shards[0]
        self.shards = list(shards)
        """One ``ConversationStore`` per database, in the URL's order."""
        self.config = first.config
        self.tenant = first.tenant
        self.limits = first.limits
        self.batch = first.batch
        self.auto_continue = first.auto_continue
        self.ai_sdk = first.ai_sdk
        self.stream_lease_seconds = first.stream_lease_seconds
        self.process = first.process
        self.operations = ShardedOperations(  # type: ignore[assignment]  # Operations' methods, across shards
            [s.operations for s in self.shards],
            lambda chat_id, tenant: self.shard(chat_id, tenant).operations,
        )
        """What operators run, over every shard (``ShardedOperations``)."""

    @property
    def clock(self) -> Any:
        """The shards' clock (the time leases are measured with); setting it sets every shard's."""
        return self.shards[0].clock

    @clock.setter
    def clock(self, value: Any) -> None:
        for store in self.shards:
            store.clock = value

    @property
    def log(self) -> Any:  # type: ignore[override]
        """Not one: each database has its own log (``shards[i].log``)."""
        raise InvalidInputError(_ONE_PER_DATABASE)

    @property
    def projector(self) -> Any:  # type: ignore[override]
        """Not one: each database has its own projector (``shards[i].projector``)."""
        raise InvalidInputError(_ONE_PER_DATABASE)

    @property
    def read_models(self) -> Any:  # type: ignore[override]
        """Not one: each database has its own read models (``shards[i].read_models``)."""
        raise InvalidInputError(_ONE_PER_DATABASE)

    def shard(self, chat_id: str, tenant: str | None = None) -> ConversationStore:
        """The store of the database that holds this conversation."""
        return self.shards[shard_index(tenant or self.tenant, chat_id, len(self.shards))]

    def close(self) -> None:
        """Close every shard."""
        for store in self.shards:
            store.close()

    # -- across shards ------------------------------------------------------------

    def pending_approvals(self, *, tenant: str | None = None) -> list[PendingApproval]:
        """Every tool call awaiting approval across the tenant's conversations in all shards, oldest first."""
        found = [a for s in self.shards for a in s.pending_approvals(tenant=tenant)]
        return sorted(found, key=lambda a: a.requested_at)

    def pending_continuations(self, *, tenant: str | None = None) -> list[ContinuationRequest]:
        """Continuation requests not yet started, in all shards, oldest first."""
        found = [r for s in self.shards for r in s.pending_continuations(tenant=tenant)]
        return sorted(found, key=lambda r: r.requested_at)

    def claim_continuation(
        self,
        worker: str,
        *,
        lease_seconds: float = 60.0,
        tenant: str | None = None,
        chat_id: str | None = None,
        min_age_seconds: float = 0.0,
    ) -> ContinuationRequest | None:
        """Take the oldest claimable request of any shard (of ``chat_id``'s shard when given)."""
        if chat_id is not None:
            return self.shard(chat_id, tenant).claim_continuation(
                worker, lease_seconds=lease_seconds, tenant=tenant, chat_id=chat_id,
                min_age_seconds=min_age_seconds,
            )  # fmt: skip
        for request in self.pending_continuations(tenant=tenant):
            won = self.shard(request.chat_id, request.tenant).claim_continuation(
                worker, lease_seconds=lease_seconds, tenant=request.tenant,
                chat_id=request.chat_id, min_age_seconds=min_age_seconds,
            )  # fmt: skip
            if won is not None:
                return won
        return None

    def list_conversations(self, *, tenant: str | None = None, **options: Any) -> ConversationList:
        """One page of the tenant's conversations of all shards, most recently changed first.

        Each shard gives its page after the same cursor; the merge keeps the
        first ``limit`` in the list's order (update time, then id, both
        descending), and the cursor names the last one kept.
        """
        wanted = ListQuery(tenant or self.tenant, **options)  # refuses bad options once
        pages = [s.list_conversations(tenant=tenant, **options) for s in self.shards]
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

    def expire_streams(self, **options: Any) -> list[str]:
        """Close the streams whose writer's lease ran out, in every shard; the chat ids closed."""
        return [chat for s in self.shards for chat in s.expire_streams(**options)]


def _routed(name: str) -> Callable[..., Any]:
    method = getattr(ConversationStore, name)

    @functools.wraps(method)
    def to_shard(self: ShardedStore, chat_id: str, *args: Any, **kwargs: Any) -> Any:
        return getattr(self.shard(chat_id, kwargs.get("tenant")), name)(chat_id, *args, **kwargs)

    return to_shard


for _name in ROUTED:
    setattr(ShardedStore, _name, _routed(_name))
