"""What one store is made of: its infrastructure (``StoreParts``) and the services composed over it.

``chatledger.adapters.bootstrap`` opens the parts at a URL and composes the
services (``compose``); ``ConversationStore`` wraps one ``Services``. The
services by concern: ``chats`` (writing a conversation), ``streams`` (a
model's answer), ``turns`` (a request recorded and answered, for any
transport), ``reads`` (the one reader), ``inbox`` (what waits across
conversations) and ``operations`` (what operators run).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from chatledger.domain.owners import OWNER_CLAIM_LIMIT_SECONDS

if TYPE_CHECKING:
    from chatledger.adapters.grants.log import GrantLog
    from chatledger.adapters.grants.service import Grants
    from chatledger.adapters.persistence.config import StoreConfig
    from chatledger.adapters.persistence.log import ConversationLog
    from chatledger.adapters.store.chats import Chats
    from chatledger.adapters.store.inbox import Inbox
    from chatledger.adapters.store.operations import Operations
    from chatledger.adapters.store.reads.news import News
    from chatledger.adapters.store.reads.reader import Reader
    from chatledger.adapters.store.streams.flusher import Flusher
    from chatledger.adapters.store.streams.policy import BatchPolicy
    from chatledger.adapters.store.streams.service import Streams
    from chatledger.adapters.store.turns.service import Turns
    from chatledger.domain.limits import Limits
    from chatledger.projections.projector import Projector
    from chatledger.projections.read_models import ReadModelView

__all__ = ["DEFAULT_TENANT", "Services", "StoreParts", "StoreSettings"]

DEFAULT_TENANT = "default"
"""The tenant of a store opened without one."""


@dataclass(frozen=True)
class StoreParts:
    """The infrastructure a store is composed of: configuration, event log, read models, projector."""

    config: StoreConfig
    log: ConversationLog
    """The event log (an eventsourcing ``Application``): the source of truth."""
    read_models: ReadModelView
    """The read-model tables next to the log."""
    projector: Projector
    """Keeps the read models up to date with the log."""
    grant_log: GrantLog | None = None
    """The standing approval grants' ledgers, in a table next to the log (``adapters/grants``)."""


@dataclass(frozen=True)
class StoreSettings:
    """How a store behaves: checked once, when it is composed."""

    tenant: str
    """The tenant of calls that name none."""
    limits: Limits
    """What one chunk, message, tool output or name may hold."""
    batch: BatchPolicy
    """When buffered chunks are committed (the crash window)."""
    auto_continue: bool
    """Whether approvals and tool results request a continuation unless told otherwise."""
    ai_sdk: int
    """The AI SDK major new conversations speak."""
    stream_lease_seconds: float
    """The lease of the streams this store opens (and of old streams that recorded none)."""
    process: str
    """Who this process is in the audit when it closes a stream whose lease expired."""
    owner_claim_limit_seconds: float = OWNER_CLAIM_LIMIT_SECONDS
    """How long a continuation request waits for its owner before it is reported overdue."""


@dataclass(frozen=True)
class Services:
    """One store's services, composed over its parts (``chatledger.adapters.bootstrap.compose``)."""

    parts: StoreParts
    settings: StoreSettings
    chats: Chats
    streams: Streams
    turns: Turns
    reads: Reader
    inbox: Inbox
    operations: Operations
    flusher: Flusher | None = None
    """The thread that group-commits the due batches of this store's open streams (a sharded
    store has none of its own: each database's store has one)."""
    news: News | None = None
    """The hub that wakes this store's followers when the log moves on (per database too)."""
    grants: Grants | None = None
    """Standing approval grants (``chatledger.adapters.grants``; none on a sharded store)."""

    def close(self) -> None:
        """Stop the background threads, then release the database connections."""
        if self.flusher is not None:
            self.flusher.stop()
        if self.news is not None:
            self.news.close()
        if self.grants is not None:
            self.grants.close()
        self.parts.log.close()
        self.parts.read_models.close()
