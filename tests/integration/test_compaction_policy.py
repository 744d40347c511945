"""Compacting by size: a pluggable tokenizer, the app's summarizer (a callable or a responder), off by default."""

from __future__ import annotations

from typing import Any

import pytest

from chatledger import ConversationStore
from chatledger.adapters.responders.scripted import ScriptedResponder
from chatledger.adapters.store.compaction_policy import (
    SUMMARY_REQUEST,
    compact_if_needed,
    summarizer_of,
)
from chatledger.domain.compaction_policy import CompactionPolicy, estimate_tokens
from chatledger.domain.errors import InvalidInputError
from tests.integration.test_compaction import _talk


def test_no_policy_compacts_nothing(store: ConversationStore) -> None:
    """The default (no policy) leaves even a long conversation as it is."""
    _talk(store, "c", 7)
    version = store.version("c")
    assert compact_if_needed(store, "c", None) is None
    assert store.version("c") == version and store.compactions("c") == []


@pytest.mark.parametrize("ai_sdk", [6, 7])
def test_a_conversation_over_the_limit_is_summarized_once(
    store: ConversationStore, ai_sdk: int
) -> None:
    """Over ``max_tokens``: all but the last two messages summarized; under it: nothing."""
    _talk(store, "c", ai_sdk)
    seen: list[list[dict[str, Any]]] = []
    counted: list[str] = []

    def summarize(messages: list[dict[str, Any]]) -> str:
        seen.append(messages)
        return f"summary of {len(messages)} messages"

    def tokenizer(text: str) -> int:  # a "real" tokenizer: one token a word
        counted.append(text)
        return len(text.split())

    size = tokenizer(repr(store.model_messages("c")))
    relaxed = CompactionPolicy(max_tokens=10_000, summarize=summarize, tokenizer=tokenizer)
    assert compact_if_needed(store, "c", relaxed) is None and seen == []
    strict = CompactionPolicy(
        max_tokens=max(size // 4, 1), summarize=summarize, tokenizer=tokenizer
    )
    record = compact_if_needed(store, "c", strict)
    assert record is not None
    assert record["messageIds"] == ["u1", "a1", "u2", "a2"]
    assert record["actor"] == "system:compaction" and record["reason"].startswith(
        "auto: model input of"
    )
    assert [m["id"] for m in seen[0]] == ["u1", "a1", "u2", "a2"]
    assert store.model_messages("c", "openai-chat")[0]["content"] == "summary of 4 messages"
    assert compact_if_needed(store, "c", strict) is None  # the same range again: nothing new
    assert len(store.compactions("c")) == 1


def test_a_later_compaction_summarizes_the_earlier_summary(store: ConversationStore) -> None:
    """The summarizer reads the earlier summary in place of its range (a summary of summaries)."""
    _talk(store, "c", 7)
    seen: list[list[dict[str, Any]]] = []

    def summarize(messages: list[dict[str, Any]]) -> str:
        seen.append(messages)
        return "S" * 5 if len(seen) == 1 else "S2"

    policy = CompactionPolicy(max_tokens=1, summarize=summarize, keep_last=4)
    assert compact_if_needed(store, "c", policy)["messageIds"] == ["u1", "a1"]
    store.append_message(
        "c", {"id": "u4", "role": "user", "parts": [{"type": "text", "text": "x"}]}, actor="u"
    )
    policy = CompactionPolicy(max_tokens=1, summarize=summarize, keep_last=1)
    record = compact_if_needed(store, "c", policy)
    assert record["messageIds"] == ["u1", "a1", "u2", "a2", "u3", "a3"]
    assert seen[1][0] == {"id": f"compaction-{store.compactions('c')[0]['version']}",
                          "role": "system", "parts": [{"type": "text", "text": "SSSSS"}]}  # fmt: skip
    assert [m["role"] for m in store.model_messages("c", "openai-chat")] == ["system", "user"]


def test_a_responder_is_a_summarizer(store: ConversationStore) -> None:
    """``summarizer_of(responder)``: the responder is asked with the summary request; its text is kept."""
    _talk(store, "c", 7)
    responder = ScriptedResponder([[
        {"type": "start"}, {"type": "text-start", "id": "t"},
        {"type": "text-delta", "id": "t", "delta": "They talked "},
        {"type": "text-delta", "id": "t", "delta": "about museums."},
        {"type": "text-end", "id": "t"}, {"type": "finish"},
    ]])  # fmt: skip
    policy = CompactionPolicy(max_tokens=1, summarize=summarizer_of(responder))
    compact_if_needed(store, "c", policy)
    assert store.compactions("c")[0]["summary"] == "They talked about museums."
    [request] = responder.requests
    assert request.messages[-1]["parts"][0]["text"] == SUMMARY_REQUEST
    assert [m["id"] for m in request.messages[:-1]] == ["u1", "a1", "u2", "a2"]


def test_bad_policies_are_refused() -> None:
    """A policy names what is wrong with it."""
    with pytest.raises(InvalidInputError, match="max_tokens"):
        CompactionPolicy(max_tokens=0, summarize=str)
    with pytest.raises(InvalidInputError, match="keep_last"):
        CompactionPolicy(max_tokens=5, summarize=str, keep_last=0)
    with pytest.raises(InvalidInputError, match="unknown model message format"):
        CompactionPolicy(max_tokens=5, summarize=str, format="xml")  # type: ignore[arg-type]
    assert estimate_tokens("a" * 9) == 3
