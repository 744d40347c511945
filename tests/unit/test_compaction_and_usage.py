"""The pure rules of compaction and usage: ranges, summaries in place, usage from metadata, prices."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from chatledger.domain.compaction import compacted_messages, compaction_marks
from chatledger.domain.compaction_policy import range_to_compact
from chatledger.domain.conversation import ConversationState
from chatledger.domain.errors import InvalidInputError
from chatledger.domain.usage import Tokens, pydantic_ai_usage, stream_usage, tokens_of
from chatledger.projections.usage import PriceTable


def _messages(*ids: str) -> list[dict[str, Any]]:
    return [{"id": i, "role": "user", "parts": [{"type": "text", "text": i}]} for i in ids]


def _record(first: str, last: str, version: int, summary: str = "S") -> dict[str, Any]:
    return {"from": first, "to": last, "summary": summary, "version": version}


def test_a_summary_replaces_its_range_and_a_covering_one_wins() -> None:
    messages = _messages("a", "b", "c", "d", "e")
    one, both = _record("a", "b", 7, "one"), _record("a", "d", 9, "both")
    shown = compacted_messages(messages, [one])
    assert [m["id"] for m in shown] == ["compaction-7", "c", "d", "e"]
    assert shown[0] == {
        "id": "compaction-7",
        "role": "system",
        "parts": [{"type": "text", "text": "one"}],
    }
    assert [m["id"] for m in compacted_messages(messages, [one, both])] == ["compaction-9", "e"]
    assert set(compaction_marks(messages, [one, both])) == {"a", "b", "c", "d"}
    # an end no longer in the view (cut since): the compaction does not apply
    assert compacted_messages(messages[:1], [one]) == messages[:1]


def test_the_policy_range_leaves_the_kept_messages_and_earlier_ranges_whole() -> None:
    messages = _messages("a", "b", "c", "d", "e", "f")
    assert range_to_compact(messages, [], keep_last=2) == (0, 3)
    assert range_to_compact(messages, [], keep_last=6) is None
    assert range_to_compact(messages, [_record("a", "d", 3)], keep_last=2) is None  # done already
    assert range_to_compact(messages, [_record("c", "e", 3)], keep_last=2) == (
        0,
        1,
    )  # stops before it
    assert range_to_compact(messages, [_record("a", "b", 3)], keep_last=1) == (0, 4)  # covers it


def test_compactions_survive_a_snapshot_and_old_snapshots_have_none() -> None:
    state = ConversationState("t", "c", _messages("a"))
    assert "compactions" not in state.to_json()  # snapshots of other conversations unchanged
    state.compactions.append(_record("a", "a", 2))
    assert ConversationState.from_json(state.to_json()).compactions == state.compactions


def test_usage_is_read_as_the_ai_sdk_names_it() -> None:
    v6 = {"inputTokens": 10, "outputTokens": 4, "inputTokenDetails": {"cacheReadTokens": 3},
          "outputTokenDetails": {"reasoningTokens": 2}}  # fmt: skip
    assert tokens_of(v6) == Tokens(10, 4, None, 2, 3)
    assert tokens_of({"inputTokens": -1}) is None and tokens_of("lots") is None
    chunks = [
        {"type": "start", "messageMetadata": {"modelId": "m"}},
        {"type": "text-delta", "id": "t", "delta": "x", "messageMetadata": {"usage": {"inputTokens": 99}}},
        {"type": "message-metadata", "messageMetadata": {"usage": {"inputTokens": 1, "outputTokens": 2}}},
        {"type": "finish", "messageMetadata": {"totalUsage": {"inputTokens": 5, "outputTokens": 6}}},
    ]  # fmt: skip
    assert stream_usage(chunks) == (Tokens(5, 6), "m")  # totalUsage wins; only metadata chunks
    assert stream_usage(chunks[2:3]) == (Tokens(1, 2), None)
    assert stream_usage([{"type": "finish"}]) is None
    kept = {"pydanticAi": {"message": {"kind": "response", "model_name": "gpt",
                                       "usage": {"input_tokens": 8, "output_tokens": 1}}}}  # fmt: skip
    assert pydantic_ai_usage(kept) == (Tokens(8, 1), "gpt")
    assert pydantic_ai_usage({"pydanticAi": {"message": {"kind": "request"}}}) is None


def test_prices_by_name_then_pattern_with_cached_input() -> None:
    table = PriceTable.from_json(
        {
            "gpt-4o": {"input": "2.5", "output": 10, "cachedInput": 1.25},
            "gpt-*": {"input": 1, "output": 2},
        }
    )
    assert table.cost("gpt-4o", Tokens(1_000_000, 0, cached_input=400_000)) == Decimal("2.0")
    assert table.cost("gpt-5", Tokens(1_000_000, 1_000_000)) == Decimal(3)
    assert table.cost("claude", Tokens(1, 1)) is None and table.cost(None, Tokens(1)) is None
    for bad, says in (
        ([], "is a JSON object"),
        ({"m": {"input": 1, "output": -1}}, ">= 0"),
        ({"m": {"input": 1, "output": "x"}}, "not a number"),
        ({"m": {"input": 1, "output": 1, "bonus": 1}}, "unknown key"),
    ):
        with pytest.raises(InvalidInputError, match=says):
            PriceTable.from_json(bad)
