"""The replay's pure parts: a recorded call is served only to the same tool with the same input."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from chatledger.domain.replay_diff import (
    CallBook,
    RecordedCall,
    TurnRecord,
    divergences,
    same_input,
)

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=8,
)


def _turn(*calls: tuple[str, Any]) -> TurnRecord:
    return TurnRecord(
        1,
        {"id": "u", "role": "user", "parts": []},
        calls=[RecordedCall(f"c{i}", name, value, output={"state": "output-available", "output": i})
               for i, (name, value) in enumerate(calls)],
    )  # fmt: skip


@given(JSON, JSON)
def test_a_recorded_call_never_matches_another_input(recorded: Any, asked: Any) -> None:
    book = CallBook([_turn(("search", recorded))])
    match = book.match(1, "new", "search", asked)
    assert (match is not None) == same_input(recorded, asked)


@given(JSON)
def test_a_recorded_call_matches_once_and_not_in_another_turn_or_tool(value: Any) -> None:
    book = CallBook([_turn(("search", value))])
    assert book.match(2, "a", "search", value) is None
    assert book.match(1, "a", "lookup", value) is None
    assert book.match(1, "a", "search", value) is not None
    assert book.match(1, "a", "search", value) is not None  # the same call keeps its match
    assert book.match(1, "b", "search", value) is None  # the recorded call is used up


def test_key_order_does_not_matter_but_number_types_do() -> None:
    assert same_input({"a": 1, "b": 2}, {"b": 2, "a": 1})
    assert not same_input(1, 1.0)
    assert not same_input(True, 1)


def test_divergences_compare_each_call_by_position() -> None:
    old = _turn(("search", {"q": "x"}), ("fetch", 1))
    new = _turn(("search", {"q": "y"}), ("delete", 1), ("fetch", 2))
    found = [(d.kind, d.recorded, d.replayed) for d in divergences([old], [new])]
    assert found == [
        ("tool-input", {"q": "x"}, {"q": "y"}),
        ("tool-call", {"toolName": "fetch", "input": 1}, {"toolName": "delete", "input": 1}),
        ("tool-call", None, {"toolName": "fetch", "input": 2}),
    ]
