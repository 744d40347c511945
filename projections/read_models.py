"""The read models' rows, what one page of events changes in them, and the view interface that stores them.

Four read models are kept together, in one set of tables, behind one
``eventsourcing`` tracking position (so they always agree with each other):

- **conversations**: per conversation, its UIMessages and status as of its
  latest projected version (``messages()`` reads this instead of replaying);
- **timeline**: one audit entry per event (``history()``);
- **conversation list**: per conversation, its summary (title, times,
  counts, status) and the text full-text search looks in (``list_conversations()``);
- **inbox**: the tool calls awaiting approval and the pending continuation
  requests, across conversations (``pending_approvals()``,
  ``pending_continuations()``).

A ``ReadModelView`` is an ``eventsourcing`` tracking recorder: ``apply_page``
writes a page of changes and the tracking record of its last event in one
transaction, so each event is applied exactly once even when two projectors
race (the loser's transaction fails on the tracking record and rolls back).
The SQL implementations live in ``chatledger.adapters.persistence.read_models``.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

from eventsourcing.persistence import IntegrityError, Tracking, TrackingRecorder

from chatledger.domain.conversation import ConversationState
from chatledger.domain.timeline import TimelineEntry
from chatledger.projections.listing import ConversationList, ConversationSummary, ListQuery

__all__ = [
    "ContinuationRequest",
    "ConversationRow",
    "ConversationView",
    "HistoryQuery",
    "Page",
    "PendingApproval",
    "QuarantinedEvent",
    "ReadModelView",
    "RowsAheadError",
    "TrackingMovedError",
]


class TrackingMovedError(IntegrityError):
    """The tracking position is no longer the one a page was folded after (another projector, a rebuild)."""


class RowsAheadError(IntegrityError):
    """A page's rows are already there while the tracking position says they are not.

    The read models are ahead of their own position (for example after a
    partial restore of the tracking table): re-applying the page must
    overwrite those rows instead of failing on them forever.
    """


@dataclass(frozen=True)
class QuarantinedEvent:
    """An event the projector could not apply, skipped so that the rest of the store keeps working."""

    notification_id: int
    """Its position in the whole store's log."""
    conversation_id: UUID
    version: int
    """Its version in its conversation."""
    topic: str
    """Its stored event class."""
    error: str
    """Why it could not be applied."""
    quarantined_at: datetime


@dataclass(frozen=True)
class PendingApproval:
    """A tool call awaiting a human's approval."""

    tenant: str
    chat_id: str
    message_id: str
    tool_call_id: str
    tool_name: str
    input: Any
    approval_id: str
    requested_at: datetime
    """When the approval was requested (UTC)."""

    @property
    def age_seconds(self) -> float:
        """How long it has been waiting."""
        return (datetime.now(UTC) - self.requested_at).total_seconds()

    def to_json(self) -> dict[str, Any]:
        """The approval as the JSON API and the MCP tools give it (camelCase keys)."""
        return {
            "chatId": self.chat_id,
            "messageId": self.message_id,
            "toolCallId": self.tool_call_id,
            "toolName": self.tool_name,
            "input": self.input,
            "approvalId": self.approval_id,
            "requestedAt": self.requested_at.isoformat(),
            "ageSeconds": self.age_seconds,
        }


@dataclass(frozen=True)
class ContinuationRequest:
    """A request for the model to continue a turn, not yet fulfilled (claimed or not)."""

    tenant: str
    chat_id: str
    request_id: str
    message_id: str
    cause: str
    requested_at: datetime
    claimed_by: str | None = None
    lease_until: datetime | None = None
    owner: str = "any"
    """Who may claim it: a worker of this owner (``chatledger.domain.owners``)."""
    overdue: bool = False
    """It has waited past its owner's claim limit with no live claim (the inbox sets it)."""

    @classmethod
    def pending_in(cls, state: ConversationState) -> ContinuationRequest | None:
        """The conversation's pending request, if any."""
        data = state.continuation
        if data is None:
            return None
        lease = data.get("leaseUntil")
        return cls(
            state.tenant,
            state.chat_id,
            data["requestId"],
            data["messageId"],
            data["cause"],
            datetime.fromisoformat(data["requestedAt"]),
            data.get("claimedBy"),
            datetime.fromisoformat(lease) if lease else None,
            data["owner"],
        )

    @property
    def age_seconds(self) -> float:
        """How long it has been waiting."""
        return (datetime.now(UTC) - self.requested_at).total_seconds()


@dataclass(frozen=True)
class ConversationRow:
    """One conversation as of ``version``: what the conversations read model holds."""

    conversation_id: UUID
    tenant: str
    chat_id: str
    version: int
    messages: list[dict[str, Any]]
    status: str
    updated_at: datetime


@dataclass(frozen=True)
class ConversationView:
    """A conversation as read back from the read model (its messages still as JSON text)."""

    version: int
    messages_json: str
    status: str


@dataclass
class Page:
    """Everything one page of events changes, keyed by conversation."""

    conversations: dict[UUID, ConversationRow] = field(default_factory=dict)
    timeline: dict[UUID, list[TimelineEntry]] = field(default_factory=dict)
    approvals: dict[UUID, list[PendingApproval]] = field(default_factory=dict)
    """The conversation's full set of pending approvals after the page (replaces the old set)."""
    continuations: dict[UUID, ContinuationRequest | None] = field(default_factory=dict)
    """The conversation's pending continuation after the page, or None (replaces the old one)."""
    summaries: dict[UUID, ConversationSummary] = field(default_factory=dict)
    """The conversation list's row of each conversation the page touched."""
    retimed: dict[UUID, list[TimelineEntry]] = field(default_factory=dict)
    """Timeline rows recorded before the page, written again (a redaction hides content in them)."""
    events: int = 0
    """How many events the page held."""
    erased: set[UUID] = field(default_factory=set)
    """Conversations the page shows erased: every row of theirs but the timeline's kinds, actors
    and times is purged (after the page's timeline entries are written)."""


@dataclass(frozen=True)
class HistoryQuery:
    """Which timeline entries to read."""

    kinds: Sequence[str] | None = None
    actor: str | None = None
    after: int = 0
    """Only entries after this position."""
    limit: int | None = None


class ReadModelView(TrackingRecorder):
    """Storage of the read models (an ``eventsourcing`` tracking recorder)."""

    def close(self) -> None:
        """Release what the read models hold of their own (by default they share the log's connections)."""

    @abstractmethod
    def apply_page(
        self, page: Page, tracking: Tracking, *, after: int, overwrite: bool = False
    ) -> None:
        """Write the page and move the tracking position from ``after`` to ``tracking``, in one transaction.

        Raises ``TrackingMovedError`` (and writes nothing) when the stored
        position is no longer ``after``: another projector applied events
        meanwhile, or the view was reset. Raises ``RowsAheadError`` (and
        writes nothing) when rows of the page are already there; with
        ``overwrite`` such rows are replaced instead.
        """

    @abstractmethod
    def quarantine(self, event: QuarantinedEvent, tracking: Tracking, *, after: int) -> None:
        """Record ``event`` as quarantined and move the tracking position past it, in one transaction."""

    @abstractmethod
    def quarantined(self) -> list[QuarantinedEvent]:
        """The events quarantined since the read models were last rebuilt, oldest first."""

    @abstractmethod
    def conversation(self, conversation_id: UUID) -> ConversationView | None:
        """The conversation's row, or None if it was never projected."""

    def conversation_at_head(
        self, conversation_id: UUID
    ) -> tuple[ConversationView | None, int] | None:
        """The conversation's row (None if never projected) and the log's newest version of it
        (0: none), read together in one query; None when these read models cannot see the
        log (then ask the log: ``conversation`` and a check of the log)."""
        return None

    @abstractmethod
    def history(self, conversation_id: UUID, query: HistoryQuery) -> list[TimelineEntry]:
        """Timeline entries of one conversation, in order."""

    @abstractmethod
    def pending_approvals(self, tenant: str) -> list[PendingApproval]:
        """The tenant's tool calls awaiting approval, oldest first."""

    @abstractmethod
    def pending_continuations(self, tenant: str) -> list[ContinuationRequest]:
        """The tenant's pending continuation requests, oldest first."""

    @abstractmethod
    def list_conversations(self, query: ListQuery) -> ConversationList:
        """One page of the tenant's conversations, newest change first."""

    @abstractmethod
    def reset(self, application_name: str) -> None:
        """Empty every read model and forget the tracking position, in one transaction."""

    @abstractmethod
    def counts(self) -> dict[str, int]:
        """Rows per read model (for ``rebuild`` reports and tests)."""
