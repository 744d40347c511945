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

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any, Protocol
from uuid import UUID

from eventsourcing.persistence import InterfaceError, Notification, OperationalError, Tracking

from chatledger.domain.aggregate import Conversation
from chatledger.domain.continuation import awaiting_approval, status_of
from chatledger.domain.conversation import ConversationState
from chatledger.domain.erasure import ConversationErased, erased_entry
from chatledger.domain.errors import (
    ConversationErasedError,
    StoredDataError,
    StoreUnavailableError,
)
from chatledger.domain.events import ConversationEvent, Redacted
from chatledger.domain.redaction import Masks
from chatledger.domain.timeline import TimelineEntry, compact, describe
from chatledger.domain.tool_parts import tool_name
from chatledger.projections.listing import ConversationSummary, search_text, title_of
from chatledger.projections.read_models import (
    ContinuationRequest,
    ConversationRow,
    Page,
    PendingApproval,
    QuarantinedEvent,
    ReadModelView,
    RowsAheadError,
    TrackingMovedError,
)

__all__ = [
    "EventLog",
    "Progress",
    "Projector",
    "approvals_of",
    "continuation_of",
    "full_timeline",
    "summary_of",
]

_log = logging.getLogger("chatledger.projector")

_UNAVAILABLE = (OperationalError, InterfaceError, OSError, StoreUnavailableError)
"""Failures of the database itself (not of one event): raised, never quarantined."""

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

    @property
    def events(self) -> Any: ...

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
        self.repairs = 0
        self._decodes = False  # set once this projector has decoded an event of the log
        """How many times rows were found ahead of the tracking position and re-applied."""

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
                    events = self._apply(notifications, position)
                except TrackingMovedError:
                    self._cache.clear()  # another projector got there first: re-read its work
                    continue
                except BaseException:
                    self._cache.clear()  # the cached aggregates are ahead of the view
                    raise
                applied += events
                if progress is not None:
                    progress(notifications[-1].id, max(head, notifications[-1].id))

    def _apply(self, notifications: list[Notification], position: int) -> int:
        """Apply one page after ``position``; a page that cannot be applied is retried event by event."""
        tracking = Tracking(self.log.name, notifications[-1].id)
        try:
            page = self._fold(notifications)
            self._write(page, tracking, position)
        except (TrackingMovedError, *_UNAVAILABLE):
            raise
        except Exception:  # some event of the page: find it, one at a time
            self._cache.clear()
            for index, notification in enumerate(notifications):
                after = position if index == 0 else notifications[index - 1].id
                self._apply_one(notification, after)
        return len(notifications)

    def _apply_one(self, notification: Notification, after: int) -> None:
        """Apply one event, or quarantine it: one bad event must not stop the projector for everyone."""
        tracking = Tracking(self.log.name, notification.id)
        try:
            self._write(self._fold([notification]), tracking, after)
        except (TrackingMovedError, *_UNAVAILABLE):
            raise
        except Exception as error:
            self._cache.clear()
            if self._undecodable_store(error):
                raise  # the settings (compression, key) do not fit the log: no event is to blame
            event = QuarantinedEvent(
                notification.id,
                _uuid(notification.originator_id),
                notification.originator_version,
                notification.topic,
                f"{type(error).__name__}: {error}"[:2000],
                datetime.now(UTC),
            )
            _log.error(
                "event %s (conversation %s, version %s) cannot be projected and is quarantined: %s",
                event.notification_id,
                event.conversation_id,
                event.version,
                event.error,
            )
            self.view.quarantine(event, tracking, after=after)

    def _undecodable_store(self, error: Exception) -> bool:
        """Whether a decoding failure is the store's, not one event's: even the log's first event fails.

        Opened with settings that do not fit its log, a store would
        otherwise quarantine every event; it raises instead, as before.
        """
        if not isinstance(error, StoredDataError) or self._decodes:
            return False
        first = self.log.recorder.select_notifications(start=0, limit=1)
        try:
            if first and self.log.mapper.tombstone_of(first[0]) is None:
                self.log.mapper.to_domain_event(first[0])
        except StoredDataError:
            return True
        self._decodes = True
        return False

    def _write(self, page: Page, tracking: Tracking, after: int) -> None:
        """Write a page; rows found ahead of the position (a partial restore) are overwritten, and said."""
        try:
            self.view.apply_page(page, tracking, after=after)
        except RowsAheadError:
            self.repairs += 1
            _log.warning(
                "read models hold rows after their tracking position %s (a partial restore?): "
                "re-applying events up to %s over them",
                after,
                tracking.notification_id,
            )
            self.view.apply_page(page, tracking, after=after, overwrite=True)

    def quarantined(self) -> list[QuarantinedEvent]:
        """The events that could not be projected (skipped so the rest keeps working), oldest first."""
        return self.view.quarantined()

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
            tombstone = self.log.mapper.tombstone_of(notification)
            if tombstone is not None:  # erased: its timeline keeps kind, actor and time
                self._erased(page, touched, _uuid(notification.originator_id))
                entry = tombstone.entry(notification.originator_version)
                page.timeline[_uuid(notification.originator_id)].append(entry)
                continue
            event: ConversationEvent = self.log.mapper.to_domain_event(notification)
            key = event.originator_id
            if isinstance(event, ConversationErased):
                self._erased(page, touched, key)
                page.timeline[key].append(erased_entry(event))
                continue
            conversation = touched.get(key) or self._aggregate(key, event.originator_version - 1)
            before = conversation.state if conversation is not None else _NOTHING
            entry = compact(describe(event, before))
            conversation = event.mutate(conversation)
            assert conversation is not None
            touched[key] = conversation
            page.timeline.setdefault(key, []).append(entry)
            page.events += 1
            if isinstance(event, Redacted):
                page.retimed[key] = self._retime(key, event.originator_version - 1, conversation)
        self._decodes = True
        for key, conversation in touched.items():
            state = conversation.state
            shown = Masks(state.redactions).state(state)  # what views may show
            page.conversations[key] = ConversationRow(
                key,
                state.tenant,
                state.chat_id,
                conversation.version,
                shown.messages,
                status_of(state).status,
                conversation.modified_on.astimezone(UTC),
            )
            page.approvals[key] = approvals_of(shown, conversation.modified_on)
            page.summaries[key] = summary_of(conversation, len(page.approvals[key]), shown)
            page.continuations[key] = continuation_of(state)
            self._remember(key, conversation)
        return page

    def _erased(self, page: Page, touched: dict[UUID, Conversation], key: UUID) -> None:
        """The page shows ``key`` erased: no rows of its state, its cached state forgotten."""
        page.erased.add(key)
        page.timeline.setdefault(key, [])
        page.events += 1
        touched.pop(key, None)
        self._cache.pop(key, None)

    def _retime(self, key: UUID, version: int, conversation: Conversation) -> list[TimelineEntry]:
        """The timeline up to ``version`` again, hiding what the conversation's redactions hide."""
        masks = Masks(conversation.state.redactions)
        try:
            events = list(self.log.events.get(key, lte=version))
        except ConversationErasedError:
            return []  # erased since this page was read: its Erased event purges the rows
        return [compact(entry) for entry in full_timeline(events, None, masks).values()]

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


def _uuid(value: Any) -> UUID:
    return value if isinstance(value, UUID) else UUID(str(value))


def summary_of(
    conversation: Conversation, pending_approvals: int, shown: ConversationState | None = None
) -> ConversationSummary:
    """The conversation list's row of a conversation (``shown``: its state as views show it)."""
    state = shown if shown is not None else conversation.state
    return ConversationSummary(
        conversation.id,
        state.tenant,
        state.chat_id,
        title_of(state.messages, state.title, state.chat_id),
        state.title is not None,
        conversation.created_on.astimezone(UTC),
        conversation.modified_on.astimezone(UTC),
        conversation.version,
        len(state.messages),
        status_of(state).status,
        pending_approvals,
        state.metadata,
        search_text(state.messages, state.title),
    )


def approvals_of(state: ConversationState, fallback_time: datetime) -> list[PendingApproval]:
    """The conversation's tool calls awaiting approval (those its current turn waits on), oldest first."""
    found = []
    for message, part in awaiting_approval(state):
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
    return ContinuationRequest.pending_in(state)


def full_timeline(
    events: Iterable[ConversationEvent], positions: set[int] | None, masks: Masks | None = None
) -> dict[int, TimelineEntry]:
    """Full (not compact) timeline entries at ``positions`` (None: all), from a conversation's events in order.

    ``masks`` hide what the conversation's redactions hide, in every entry
    (also those from before the redaction).
    """
    found: dict[int, TimelineEntry] = {}
    conversation: Conversation | None = None
    last = max(positions, default=0) if positions is not None else None
    for event in events:
        if last is not None and event.originator_version > last:
            break
        if positions is None or event.originator_version in positions:
            before = conversation.state if conversation is not None else _NOTHING
            found[event.originator_version] = describe(event, before, masks)
        conversation = event.mutate(conversation)
    return found
