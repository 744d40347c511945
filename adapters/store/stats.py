"""The one read behind ``chatledger stats``, ``GET /api/stats`` and the overview page: a tenant's figures.

It reads what the read models already keep, through the store's services (so
a sharded store works the same): the conversation list (when each started),
each conversation's timeline (streams opened, approvals answered, chunk
batches with the refused and replayed chunks they held), the conversation's
own record of when each approval was requested (only for conversations with
answers), and the inbox (what waits now). ``chatledger.projections.stats``
does the arithmetic. Erased conversations are not counted: their content,
tool names included, is gone; nor are answers that came too late (their
turn had stopped, so they changed nothing: the timeline marks them ``late``).

It reads every conversation of the tenant: a report for operators, not a
hot path. A ``StatsCache`` (the HTTP app keeps one) reads them again only
after the log has moved on; what depends on the clock (the daily window, the
ages of what waits) and the inbox are read on every call.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from chatledger.domain.errors import (
    ConversationErasedError,
    ConversationNotFoundError,
    InvalidInputError,
)
from chatledger.projections.listing import MAX_LIMIT, ConversationSummary
from chatledger.projections.stats import Activity, Decision, StoreStats, summarize

if TYPE_CHECKING:
    from chatledger.adapters.store.surface import Store
    from chatledger.domain.timeline import TimelineEntry

__all__ = ["DEFAULT_DAYS", "MAX_DAYS", "StatsCache", "StatsProgress", "gather", "read_stats"]

DEFAULT_DAYS = 30
"""Days of series by default."""
MAX_DAYS = 366
"""The longest series a caller may ask for."""

StatsProgress = Callable[[int, int], None]
"""Called with (conversations read, conversations in all) after each conversation."""

_KINDS = ("stream-opened", "approval-responded", "chunks")


class StatsCache:
    """Each tenant's activity as of a log head: read again only when events were recorded since.

    Thread-safe; one per store (the log head it compares is that store's).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kept: dict[str, tuple[int, Activity]] = {}

    def activity(self, store: Store, tenant: str, progress: StatsProgress | None) -> Activity:
        """The tenant's activity, from the cache while the log's head has not moved."""
        head = store.operations.head()  # before reading: a write meanwhile reads again next time
        with self._lock:
            kept = self._kept.get(tenant)
        if kept is not None and kept[0] == head:
            return kept[1]
        activity = gather(store, tenant, progress)
        with self._lock:
            self._kept[tenant] = (head, activity)
        return activity


def read_stats(
    store: Store,
    *,
    tenant: str | None = None,
    days: int = DEFAULT_DAYS,
    now: datetime | None = None,
    progress: StatsProgress | None = None,
    cache: StatsCache | None = None,
) -> StoreStats:
    """The figures of ``tenant`` (default: the store's) as of ``now``, with ``days`` of daily series.

    With a ``cache``, conversations are read again only after new events.
    Raises InvalidInputError for ``days`` outside 1..``MAX_DAYS``.
    """
    if isinstance(days, bool) or not isinstance(days, int) or not 1 <= days <= MAX_DAYS:
        raise InvalidInputError(f"days must be a whole number from 1 to {MAX_DAYS}, not {days!r}")
    tenant = tenant or store.tenant
    activity = (
        gather(store, tenant, progress)
        if cache is None
        else cache.activity(store, tenant, progress)
    )
    moment = now or datetime.now(UTC)
    return summarize(
        tenant,
        activity,
        approvals_waiting=[a.requested_at for a in store.inbox.pending_approvals(tenant=tenant)],
        continuations_waiting=[
            c.requested_at for c in store.inbox.pending_continuations(tenant=tenant)
        ],
        now=moment,
        days=days,
    )


def gather(store: Store, tenant: str, progress: StatsProgress | None = None) -> Activity:
    """What happened in every conversation of ``tenant`` (``progress``: after each)."""
    summaries = _every_conversation(store, tenant)
    activity = Activity()
    for done, summary in enumerate(summaries, start=1):
        _gather(store, tenant, summary, activity)
        if progress is not None:
            progress(done, len(summaries))
    return activity


def _every_conversation(store: Store, tenant: str) -> list[ConversationSummary]:
    found: list[ConversationSummary] = []
    cursor: str | None = None
    while True:
        page = store.inbox.list_conversations(tenant=tenant, limit=MAX_LIMIT, cursor=cursor)
        found.extend(page.conversations)
        cursor = page.next_cursor
        if cursor is None:
            return found


def _gather(store: Store, tenant: str, summary: ConversationSummary, into: Activity) -> None:
    """Add one conversation's streams, answers and chunk verdicts to ``into``."""
    try:
        entries = store.reads.history(summary.chat_id, tenant=tenant, kinds=_KINDS)
    except (ConversationErasedError, ConversationNotFoundError):
        return  # erased (or gone) since the list was read
    into.conversations.append(summary.created_at)
    answers: list[TimelineEntry] = []
    for entry in entries:
        if entry.kind == "stream-opened":
            into.streams.append(entry.time)
        elif entry.kind == "chunks":
            into.refused_chunks += _count(entry.details.get("refused"))
            into.replays += _count(entry.details.get("replays"))
        elif not entry.details.get("late"):  # a late answer changed nothing: not a decision
            answers.append(entry)
    if not answers:
        return
    state = store.reads.stored_state(summary.chat_id, tenant=tenant)
    asked = state.approval_times if state is not None else {}
    for entry in answers:
        requested = asked.get(str(entry.details.get("toolCallId")))
        into.decisions.append(
            Decision(
                tool=str(entry.details.get("toolName") or "(unknown tool)"),
                actor=entry.actor,
                approved=bool(entry.details.get("approved")),
                decided_at=entry.time,
                requested_at=datetime.fromisoformat(requested) if requested else None,
            )
        )


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
