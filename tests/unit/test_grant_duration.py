"""A grant's duration: positive and at most 100 years (a longer one cannot be written as a date)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from chatledger.domain.errors import InvalidInputError
from chatledger.domain.grants import expires_at

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def test_a_grant_for_a_time_ends_then() -> None:
    assert expires_at(NOW, 3600) == NOW + timedelta(hours=1)
    assert expires_at(NOW, None) is None


@pytest.mark.parametrize("seconds", [251_606_461_365.0, float("inf"), float("nan"), 0, -1, True])
def test_a_time_no_date_can_hold_is_refused_saying_so(seconds: float) -> None:
    with pytest.raises(InvalidInputError, match=r"positive number of seconds \(at most 3153600000"):
        expires_at(NOW, seconds)
