"""A grant covers exactly what it names: never another input, tool or conversation, never after it ends."""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from chatledger.domain.grants import Grant
from chatledger.domain.replay_diff import same_input

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=4),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=8,
)
T0 = datetime(2030, 1, 1, tzinfo=UTC)
TOOLS = st.sampled_from(["search", "delete_file", "fetch"])
CHATS = st.sampled_from(["a", "b"])


def _grant(scope: str, tool: str | None, input: Any, chat: str | None, **more: Any) -> Grant:
    return Grant("g1", "t", scope, tool, input, chat, "user:alice", None, T0, **more)


@given(JSON, JSON, TOOLS, TOOLS, CHATS, st.none() | CHATS)
def test_an_input_grant_covers_only_its_tool_with_the_same_input(
    named: Any, asked: Any, tool: str, asked_tool: str, chat: str, limited: str | None
) -> None:
    grant = _grant("input", tool, named, limited)
    covered = grant.covers(chat, asked_tool, asked, T0)
    assert covered == (same_input(named, asked) and tool == asked_tool and limited in (None, chat))


@given(JSON, TOOLS, TOOLS, CHATS)
def test_a_tool_grant_covers_its_tool_only(
    asked: Any, tool: str, asked_tool: str, chat: str
) -> None:
    assert _grant("tool", tool, None, None).covers(chat, asked_tool, asked, T0) == (
        tool == asked_tool
    )


@given(JSON, TOOLS, CHATS, CHATS)
def test_a_conversation_grant_covers_its_conversation_only(
    asked: Any, tool: str, chat: str, asked_chat: str
) -> None:
    assert _grant("conversation", None, None, chat).covers(asked_chat, tool, asked, T0) == (
        chat == asked_chat
    )


@given(st.integers(min_value=-5, max_value=5), JSON)
def test_nothing_is_covered_at_or_after_the_end(offset: int, value: Any) -> None:
    end = T0 + timedelta(seconds=10)
    now = end + timedelta(seconds=offset)
    timed = _grant("input", "search", value, None, expires_at=end)
    assert timed.covers("a", "search", value, now) == (now < end)
    revoked = _grant("tool", "search", None, None, revoked_at=T0)
    assert not revoked.covers("a", "search", value, T0 - timedelta(days=1))


def test_a_grant_that_keeps_only_the_digest_covers_exactly_the_same_input() -> None:
    """Key order aside, the same value; ``1`` and ``1.0``, ``1`` and ``true`` differ; never readable."""
    from chatledger.domain.grants import input_digest

    value = {"path": "/tmp/x", "n": 1, "deep": {"b": [1, "é"], "a": None}}
    grant = dataclasses.replace(_grant("input", "search", None, None),
                                input_digest=input_digest(value))  # fmt: skip
    now = grant.granted_at
    same = {"deep": {"a": None, "b": [1, "é"]}, "n": 1, "path": "/tmp/x"}
    assert grant.covers("any", "search", same, now)
    for other in ({**value, "n": 1.0}, {**value, "n": True}, {**value, "path": "/tmp/y"}, [value]):
        assert not grant.covers("any", "search", other, now)
    assert "/tmp/x" not in json.dumps(grant.to_json(now))
