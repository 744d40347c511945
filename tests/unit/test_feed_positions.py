"""The feed's delivery rule: consecutive positions after the reader's, or any up to a final bound."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from chatledger.adapters.persistence.feed import consecutive


def test_a_missing_position_stops_delivery_unless_final() -> None:
    assert consecutive([4, 5, 7, 8], after=3) == 2
    assert consecutive([4, 5, 7, 8], after=3, final_up_to=8) == 4
    assert consecutive([4, 5, 7, 9], after=3, final_up_to=7) == 3
    assert consecutive([4, 5, 7, 9], after=3, final_up_to=6) == 3
    assert consecutive([5], after=3) == 0
    assert consecutive([], after=3) == 0


@given(
    st.sets(st.integers(1, 60)),
    st.integers(0, 30),
    st.integers(0, 70),
)
def test_what_is_delivered_is_every_visible_position_up_to_the_first_unsettled_hole(
    visible: set[int], after: int, final_up_to: int
) -> None:
    """Delivered: a prefix; no missing position above ``final_up_to`` lies below a delivered one."""
    ids = sorted(p for p in visible if p > after)
    count = consecutive(ids, after, final_up_to)
    delivered = ids[:count]
    holes = set(range(after + 1, (delivered[-1] if delivered else after) + 1)) - visible
    assert all(hole <= final_up_to for hole in holes)
    if count < len(ids):  # stopped: the next one has an unsettled hole before it
        missing = set(range(after + 1, ids[count])) - visible
        assert any(hole > final_up_to for hole in missing)
