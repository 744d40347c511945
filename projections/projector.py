"""The projector: reads the event log after the view's tracking position and applies it, a page at a time.

``eventsourcing``'s own ``ProjectionRunner`` commits once per event and needs
push subscriptions (PostgreSQL only); the projector pulls pages of
notifications instead (``select_notifications``, which every backend has),
folds them into the conversations they belong to, and hands the view one
``Page`` of changes with one tracking record. Tracking makes it exactly-once;
paging makes it fast; pulling makes it work on SQLite too.

To compute a conversation's new rows the projector needs its state before
each event, so it keeps the ``Conversation`` aggregates it has folded in a
small LRU cache. On a miss it loads the aggregate from the log *at the version
the view holds* (so it resumes exactly where the view stopped).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any, Protocol
from uuid import UUID

from eventsourcing.persistence import IntegrityError, Notification, Tracking

from chatledger.domain.aggregate import Conversation
from chatledger.domain.continuation import awaiting_approval, status_of
from chatledger.domain.conversation import ConversationState
from chatledger.domain.events import ConversationEvent
from chatledger.domain.timeline import TimelineEntry, compact, describe
from chatledger.domain.tool_parts import tool_name
from chatledger.projections.read_models import (
    ContinuationRequest,
    ConversationRow,
    Page,
    PendingApproval,
    ReadModelView,
)

__all__ = [
    "EventLog",
    "Progress",
    "Projector",
    "approvals_of",
    "continuation_of",
    "full_timeline",
]

_NOTHING = ConversationState(tenant="", chat_id="")
"""The state before a conversation's first event."""

Progress = Callable[[int, int], None]
"""Called after each page with (position reached, head of the log)."""


class EventLog(Protocol):
    """What the projector needs of the upstream ``eventsourcing`` application."""

    name: str

    @property
    def recorder(self) -> Any: ...

    @property
    def mapper(self) -> Any: ...

    def load_at(self, conversation_id: UUID, version: int) -> Conversation:
        """The conversation as it stood at ``version``."""
        ...


class Projector:
    """Brings a ``ReadModelView`` up to date with an event log; safe to share between threads."""

    def __init__(
        self, log: EventLog, view: ReadModelView, *, page_size: int = 500, cache_size: int = 256
    ) -> None:
        self.log = log
        self.view = view
        self.page_size = page_size
        self.cache_size = cache_size
        self._cache: OrderedDict[UUID, Conversation] = OrderedDict()
        self._lock = threading.RLock()

    def position(self) -> int:
        """The last notification id the view has applied (0 when empty)."""
        return self.view.max_tracking_id(self.log.name) or 0

    def catch_up(self, *, until: int | None = None, progress: Progress | None = None) -> int:
        """Apply every event recorded after the view's position; returns how many were applied.

        ``until`` stops at that notification id (the view then shows the log
        as it stood there).

        When another projector (thread or process) applies a page first, this
        one drops its cached state and carries on from the new position.
        """
        applied = 0
        with self._lock:
            head = (self.log.recorder.max_notification_id() or 0) if progress else 0
            while True:
                position = self.position()
                if until is not None and position >= until:
                    return applied
                notifications = self.log.recorder.select_notifications(
                    start=position, limit=self.page_size, stop=until, inclusive_of_start=False
                )
                if not notifications:
                    return applied
                try:
                    page = self._fold(notifications)
                    tracking = Tracking(self.log.name, notifications[-1].id)
                    self.view.apply_page(page, tracking, after=position)
                except IntegrityError:
                    self._cache.clear()  # another projector got there first: re-read its work
                    continue
                except BaseException:
                    self._cache.clear()  # the cached aggregates are ahead of the view
                    raise
                applied += page.events
                if progress is not None:
                    progress(notifications[-1].id, max(head, notifications[-1].id))

    def rebuild(self, *, progress: Progress | None = None) -> int:
        """Empty the view and apply the whole log again; returns how many events were applied.

        Readers see the read models fill up meanwhile; projectors elsewhere
        notice the reset (their next page fails its tracking check) and follow.
        """
        with self._lock:
            self.view.reset(self.log.name)
            self._cache.clear()
            return self.catch_up(progress=progress)

    # -- folding a page -----------------------------------------------------

    def _fold(self, notifications: Iterable[Notification]) -> Page:
        page = Page()
        touched: dict[UUID, Conversation] = {}
        for notification in notifications:
            event: ConversationEvent = self.log.mapper.to_domain_event(notification)
            key = event.originator_id
            conversation = touched.get(key) or self._aggregate(key, event.originator_version - 1)
            before = conversation.state if conversation is not None else _NOTHING
            entry = compact(describe(event, before))
            conversation = event.mutate(conversation)
            assert conversation is not None
            touched[key] = conversation
            page.timeline.setdefault(key, []).append(entry)
            page.events += 1
        for key, conversation in touched.items():
            state = conversation.state
            page.conversations[key] = ConversationRow(
                key,
                state.tenant,
                state.chat_id,
                conversation.version,
                state.messages,
                status_of(state).status,
                conversation.modified_on.astimezone(UTC),
            )
            page.approvals[key] = approvals_of(state, conversation.modified_on)
            page.continuations[key] = continuation_of(state)
            self._remember(key, conversation)
        return page

    def _aggregate(self, key: UUID, version: int) -> Conversation | None:
        """The conversation at ``version`` (None before its first event)."""
        cached = self._cache.pop(key, None)
        if cached is not None and cached.version == version:
            return cached
        if version == 0:
            return None
        return self.log.load_at(key, version)

    def _remember(self, key: UUID, conversation: Conversation) -> None:
        self._cache[key] = conversation
        self._cache.move_to_end(key)
        while len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)


def approvals_of(state: ConversationState, fallback_time: datetime) -> list[PendingApproval]:
    """The conversation's tool calls awaiting approval (those its current turn waits on)."""
    message, awaiting = awaiting_approval(state)
    found = []
    for part in awaiting:
        assert message is not None
        when = state.approval_times.get(part["toolCallId"])
        found.append(
            PendingApproval(
                state.tenant,
                state.chat_id,
                message["id"],
                part["toolCallId"],
                tool_name(part),
                part.get("input"),
                str((part.get("approval") or {}).get("id", part["toolCallId"])),
                datetime.fromisoformat(when) if when else fallback_time,
            )
        )
    return found


def continuation_of(state: ConversationState) -> ContinuationRequest | None:
    """The conversation's pending continuation request, if any."""
    data = state.continuation
    if data is None:
        return None
    lease = data.get("leaseUntil")
    return ContinuationRequest(
        state.tenant,
        state.chat_id,
        data["requestId"],
        data["messageId"],
        data["cause"],
        datetime.fromisoformat(data["requestedAt"]),
        data.get("claimedBy"),
        datetime.fromisoformat(lease) if lease else None,
    )


def full_timeline(
    events: Iterable[ConversationEvent], positions: set[int]
) -> dict[int, TimelineEntry]:
    """Full (not compact) timeline entries at ``positions``, from a conversation's events in order."""
    found: dict[int, TimelineEntry] = {}
    conversation: Conversation | None = None
    last = max(positions, default=0)
    for event in events:
        if event.originator_version > last:
            break
        if event.originator_version in positions:
            before = conversation.state if conversation is not None else _NOTHING
            found[event.originator_version] = describe(event, before)
        conversation = event.mutate(conversation)
    return found
