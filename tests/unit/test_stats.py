"""The overview's arithmetic (``chatledger.projections.stats``): quantiles, rates, series, queues."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from chatledger.projections.stats import Activity, Decision, quantile, summarize

NOW = datetime(2026, 11, 4, 12, tzinfo=UTC)


def test_quantiles_interpolate_between_ranks() -> None:
    """Median of an even count is the mean of the middle two; p90 lies between the top two."""
    assert quantile([], 0.5) is None
    assert quantile([7.0], 0.9) == 7.0
    assert quantile([4.0, 1.0, 3.0, 2.0], 0.5) == pytest.approx(2.5)
    assert quantile([60.0, 120.0, 300.0], 0.9) == pytest.approx(264.0)
    with pytest.raises(ValueError, match="between 0 and 1"):
        quantile([1.0], 1.5)


def test_decisions_without_a_request_time_count_but_are_not_timed() -> None:
    """A decision whose request time is unknown adds to the rates, not to the times."""
    asked = NOW - timedelta(seconds=10)
    activity = Activity(
        decisions=[
            Decision("t", "user:a", True, NOW, asked),
            Decision("t", None, False, NOW, None),
        ]
    )

    stats = summarize("x", activity, approvals_waiting=[], continuations_waiting=[], now=NOW)

    assert (stats.approval_rate, stats.denial_rate) == (0.5, 0.5)
    assert stats.decision_median_seconds == 10.0
    assert list(stats.by_actor) == ["(nobody)", "user:a"]  # ties by name


def test_the_series_covers_the_window_and_waiting_is_aged_from_now() -> None:
    """Days with nothing show zeros; events before the window count in the totals only."""
    activity = Activity(
        conversations=[NOW - timedelta(days=10), NOW - timedelta(days=1)],
        streams=[NOW, NOW, NOW - timedelta(days=1)],
    )

    stats = summarize(
        "x",
        activity,
        approvals_waiting=[NOW - timedelta(minutes=5), NOW - timedelta(minutes=1)],
        continuations_waiting=[],
        now=NOW,
        days=3,
    )

    assert [(d.conversations, d.streams) for d in stats.days] == [(0, 0), (1, 1), (0, 2)]
    assert (stats.conversations, stats.streams) == (2, 3)
    assert stats.approvals_waiting.to_json() == {"count": 2, "oldestSeconds": 300.0}
    assert stats.continuations_waiting.to_json() == {"count": 0, "oldestSeconds": None}
