"""A tenant's figures at a glance (``chatledger stats``, ``GET /api/stats``, the overview page): pure aggregation.

The application layer (``chatledger.adapters.store.stats``) reads what
happened from the timeline and the conversations (``Activity``) and what waits
from the inbox; ``summarize`` turns them into ``StoreStats``: conversations
and streams per day, approvals per tool and per actor, approval and denial
rates, the time from an approval's request to its decision (median and p90),
the oldest call still waiting, the continuation queue, refused chunks and
replays caught. Nothing here reads a clock or a database.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

__all__ = [
    "Activity",
    "Day",
    "Decision",
    "Decisions",
    "StoreStats",
    "Waiting",
    "duration",
    "quantile",
    "summarize",
]


@dataclass(frozen=True)
class Decision:
    """One approval answered: which tool, by whom, how, and when it was asked and answered."""

    tool: str
    actor: str | None
    """Who answered (the event's actor), or None when it names nobody."""
    approved: bool
    decided_at: datetime
    requested_at: datetime | None = None
    """When the approval was requested (None when the conversation does not say)."""

    @property
    def seconds(self) -> float | None:
        """From the request to the decision (None without a request time)."""
        if self.requested_at is None:
            return None
        return max((self.decided_at - self.requested_at).total_seconds(), 0.0)


@dataclass
class Activity:
    """What happened in a tenant's conversations, as the application layer gathered it."""

    conversations: list[datetime] = field(default_factory=list)
    """When each conversation started."""
    streams: list[datetime] = field(default_factory=list)
    """When each stream (a model's answer) opened."""
    decisions: list[Decision] = field(default_factory=list)
    refused_chunks: int = 0
    """Chunks refused (recorded with the reason, not applied)."""
    replays: int = 0
    """Chunks caught as replays of ones already stored (a client retrying)."""


@dataclass(frozen=True)
class Waiting:
    """A queue now: how many wait and for how long the oldest has."""

    count: int
    oldest_seconds: float | None
    """Age of the oldest (None when nothing waits)."""

    def to_json(self) -> dict[str, Any]:
        """camelCase, as the HTTP API shows it."""
        return {"count": self.count, "oldestSeconds": self.oldest_seconds}


@dataclass(frozen=True)
class Day:
    """One day (UTC) of the series: conversations started and streams opened."""

    day: date
    conversations: int
    streams: int

    def to_json(self) -> dict[str, Any]:
        """camelCase, as the HTTP API shows it."""
        return {
            "day": self.day.isoformat(),
            "conversations": self.conversations,
            "streams": self.streams,
        }


@dataclass(frozen=True)
class Decisions:
    """Approvals answered, approved and denied (per tool, per actor, or all)."""

    approved: int = 0
    denied: int = 0

    @property
    def total(self) -> int:
        """Approved plus denied."""
        return self.approved + self.denied

    def to_json(self) -> dict[str, Any]:
        """camelCase, as the HTTP API shows it."""
        return {"approved": self.approved, "denied": self.denied}


@dataclass(frozen=True)
class StoreStats:
    """A tenant's figures, as ``summarize`` computed them at ``generated_at``."""

    tenant: str
    generated_at: datetime
    days: list[Day]
    """One entry per day of the window, oldest first (days with nothing show zeros)."""
    conversations: int
    """Conversations in the store (all time; erased ones are not counted)."""
    streams: int
    """Streams opened (all time)."""
    decisions: Decisions
    by_tool: dict[str, Decisions]
    """Per tool name, most answered first."""
    by_actor: dict[str, Decisions]
    """Per person (or service) answering, most answers first; ``(nobody)`` when unnamed."""
    decision_median_seconds: float | None
    """Median time from an approval's request to its decision (None without decisions)."""
    decision_p90_seconds: float | None
    """90th percentile of that time."""
    approvals_waiting: Waiting
    continuations_waiting: Waiting
    refused_chunks: int
    replays: int

    @property
    def approval_rate(self) -> float | None:
        """Share of answered approvals that were approved (None without any)."""
        total = self.decisions.total
        return self.decisions.approved / total if total else None

    @property
    def denial_rate(self) -> float | None:
        """Share of answered approvals that were denied (None without any)."""
        total = self.decisions.total
        return self.decisions.denied / total if total else None

    def to_json(self) -> dict[str, Any]:
        """The ``GET /api/stats`` body (and ``chatledger stats --json``)."""
        return {
            "tenant": self.tenant,
            "generatedAt": self.generated_at.isoformat(),
            "conversations": self.conversations,
            "streams": self.streams,
            "days": [day.to_json() for day in self.days],
            "approvals": {
                **self.decisions.to_json(),
                "approvalRate": self.approval_rate,
                "denialRate": self.denial_rate,
                "decisionSeconds": {
                    "median": self.decision_median_seconds,
                    "p90": self.decision_p90_seconds,
                },
                "byTool": {name: d.to_json() for name, d in self.by_tool.items()},
                "byActor": {name: d.to_json() for name, d in self.by_actor.items()},
                "waiting": self.approvals_waiting.to_json(),
            },
            "continuations": {"waiting": self.continuations_waiting.to_json()},
            "refusedChunks": self.refused_chunks,
            "replays": self.replays,
        }


NOBODY = "(nobody)"
"""How ``by_actor`` names decisions whose event names no actor."""


def quantile(values: Sequence[float], q: float) -> float | None:
    """The ``q`` quantile (0..1) of ``values``, interpolated linearly between ranks; None when empty."""
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"a quantile is between 0 and 1, not {q}")
    ordered = sorted(values)
    if not ordered:
        return None
    rank = q * (len(ordered) - 1)
    low, high = math.floor(rank), math.ceil(rank)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def summarize(
    tenant: str,
    activity: Activity,
    *,
    approvals_waiting: Iterable[datetime],
    continuations_waiting: Iterable[datetime],
    now: datetime,
    days: int = 30,
) -> StoreStats:
    """The figures of ``activity`` and of what waits (request times), as of ``now``, with ``days`` of series."""
    if days < 1:
        raise ValueError(f"days must be at least 1, not {days}")
    seconds = [s for s in (d.seconds for d in activity.decisions) if s is not None]
    return StoreStats(
        tenant=tenant,
        generated_at=now,
        days=_series(activity, now, days),
        conversations=len(activity.conversations),
        streams=len(activity.streams),
        decisions=_count(activity.decisions),
        by_tool=_grouped(activity.decisions, lambda d: d.tool),
        by_actor=_grouped(activity.decisions, lambda d: d.actor or NOBODY),
        decision_median_seconds=quantile(seconds, 0.5),
        decision_p90_seconds=quantile(seconds, 0.9),
        approvals_waiting=_waiting(approvals_waiting, now),
        continuations_waiting=_waiting(continuations_waiting, now),
        refused_chunks=activity.refused_chunks,
        replays=activity.replays,
    )


def _day(moment: datetime) -> date:
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).astimezone(UTC).date()


def _series(activity: Activity, now: datetime, days: int) -> list[Day]:
    last = _day(now)
    first = last - timedelta(days=days - 1)
    started = Counter(_day(moment) for moment in activity.conversations)
    opened = Counter(_day(moment) for moment in activity.streams)
    span = (first + timedelta(days=n) for n in range(days))
    return [Day(day, started[day], opened[day]) for day in span]


def _count(decisions: Iterable[Decision]) -> Decisions:
    approved = denied = 0
    for decision in decisions:
        approved += decision.approved
        denied += not decision.approved
    return Decisions(approved, denied)


def _grouped(decisions: list[Decision], key: Any) -> dict[str, Decisions]:
    groups: dict[str, list[Decision]] = {}
    for decision in decisions:
        groups.setdefault(key(decision), []).append(decision)
    counted = {name: _count(group) for name, group in groups.items()}
    return dict(sorted(counted.items(), key=lambda item: (-item[1].total, item[0])))


def _waiting(requested: Iterable[datetime], now: datetime) -> Waiting:
    times = list(requested)
    oldest = min(times, default=None)
    age = None if oldest is None else max((now - oldest).total_seconds(), 0.0)
    return Waiting(len(times), age)


def duration(seconds: float | None) -> str:
    """``seconds`` for people: 45 s, 2 min 5 s, 3 h 10 min, 2 d 4 h (``-`` for None)."""
    if seconds is None:
        return "-"
    whole = round(seconds)
    if whole < 60:
        return f"{seconds:.3g} s" if seconds < 10 else f"{whole} s"
    for unit, size, smaller, small_size in (
        ("d", 86400, "h", 3600),
        ("h", 3600, "min", 60),
        ("min", 60, "s", 1),
    ):
        if whole >= size:
            return f"{whole // size} {unit} {whole % size // small_size} {smaller}"
    return f"{whole} s"  # pragma: no cover - every whole >= 60 matched above
