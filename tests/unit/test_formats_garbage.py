"""Any JSON given to a format's reader is read or refused with a chatledger error, never a crash."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatledger.adapters.formats import NAMES, read_format
from chatledger.domain.errors import InvalidInputError

_keys = st.sampled_from(
    ["type", "role", "content", "parts", "id", "data", "mapping", "current_node", "message",
     "author", "call_id", "output", "name", "arguments", "parent", "tool_call_id", "kind"]
)  # fmt: skip
_scalars = st.none() | st.booleans() | st.integers(-5, 5) | st.sampled_from(
    ["", "user", "assistant", "tool", "human", "ai", "text", "message", "function_call",
     "function_call_output", "request", "response", "a", "root"]
)  # fmt: skip
_json = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_keys, inner, max_size=5),
    max_leaves=20,
)


@pytest.mark.parametrize("name", NAMES)
@given(value=_json)
@settings(max_examples=150, deadline=None)
def test_garbage_is_refused_with_a_chatledger_error(name: str, value: Any) -> None:
    with contextlib.suppress(InvalidInputError):  # any other exception fails the test
        read_format(value, name)
