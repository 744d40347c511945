"""The usage ledger: usage from AI SDK stream metadata and recorded events, rolled up and priced."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import date
from decimal import Decimal
from pathlib import Path

import pytest

from chatledger import ConversationStore
from chatledger.adapters.store.usage import conversation_usage, read_usage
from chatledger.domain.errors import InvalidInputError
from chatledger.domain.usage import Tokens
from chatledger.projections.usage import PriceTable
from tests.integration.conftest import Backend

PRICES = PriceTable.from_json(
    {
        "gpt-4o": {"input": 2.5, "output": 10, "cachedInput": 1.25},
        "claude-*": {"input": 3, "output": 15},
    }
)


def _answer(
    store: ConversationStore, chat: str, message_id: str, metadata: list[dict[str, object]]
) -> None:
    """An answer whose start, message-metadata and finish chunks carry ``metadata`` (in order)."""
    chunks: list[dict[str, object]] = [
        {"type": "start", "messageId": message_id, "messageMetadata": metadata[0]},
        {"type": "start-step"},
        {"type": "text-start", "id": "t"},
        {"type": "text-delta", "id": "t", "delta": "ok"},
        {"type": "text-end", "id": "t"},
        {"type": "finish-step"},
    ]
    chunks += [{"type": "message-metadata", "messageMetadata": m} for m in metadata[1:-1]]
    chunks.append({"type": "finish", "finishReason": "stop", "messageMetadata": metadata[-1]})
    store.ingest(chat, chunks)


def _ask(store: ConversationStore, chat: str, message_id: str, who: str) -> None:
    message = {"id": message_id, "role": "user", "parts": [{"type": "text", "text": "hi"}]}
    store.append_message(chat, message, actor=who)


@pytest.mark.parametrize("ai_sdk", [6, 7])
def test_stream_metadata_usage_is_in_the_ledger(store: ConversationStore, ai_sdk: int) -> None:
    """``totalUsage`` wins over ``usage``; the model from ``model``; each stream counted once."""
    store.start_conversation("c", ai_sdk=ai_sdk, actor="user:alice")
    _ask(store, "c", "u1", "user:alice")
    _answer(store, "c", "a1", [
        {"model": "gpt-4o"},
        {"usage": {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15}},
        {"totalUsage": {"inputTokens": 100, "outputTokens": 20, "totalTokens": 120,
                        "cachedInputTokens": 40}},
    ])  # fmt: skip
    _ask(store, "c", "u2", "user:bob")
    _answer(store, "c", "a2", [
        {"createdAt": 1},
        {"usage": {"inputTokens": 7, "outputTokens": 3,
                   "outputTokenDetails": {"reasoningTokens": 2}}, "modelId": "claude-x"},
    ])  # fmt: skip
    _ask(store, "c", "u3", "user:bob")
    _answer(store, "c", "a3", [{"createdAt": 2}, {"note": "no usage"}])
    entries = conversation_usage(store, "c")
    assert [(e.message_id, e.user, e.model, e.tokens) for e in entries] == [
        ("a1", "user:alice", "gpt-4o", Tokens(100, 20, 120, None, 40)),
        ("a2", "user:bob", "claude-x", Tokens(7, 3, None, 2, None)),
    ]
    report = read_usage(store, by=["model", "user", "conversation", "day"], prices=PRICES)
    assert report.total.total == 130 and report.total.calls == 2
    # gpt-4o: 60 input at 2.5, 40 cached at 1.25, 20 output at 10 (per million)
    gpt = Decimal(60 * 2.5 + 40 * 1.25 + 20 * 10) / 1_000_000
    claude = Decimal(7 * 3 + 3 * 15) / 1_000_000
    assert report.total.cost == gpt + claude and report.total.unpriced == 0
    by_user = {row.key: row for row in report.groups["user"]}
    assert by_user["user:alice"].total == 120 and by_user["user:bob"].total == 10
    assert [row.key for row in report.groups["day"]] == [date.today().isoformat()]
    assert report.groups["conversation"][0].key == "c"


def test_recorded_usage_counts_steps_only_without_a_turn(store: ConversationStore) -> None:
    """Steps of a message add up unless the message also has a turn-level usage."""
    store.start_conversation("c", actor="user:alice")
    _ask(store, "c", "u1", "user:alice")
    for step in (1, 2):
        store.record_usage(
            "c", {"inputTokens": 10, "outputTokens": 1}, model="m1", message_id="a1",
            step=step, source="openai-agents",
        )  # fmt: skip
    store.record_usage("c", Tokens(input=5, output=5), model="m1", message_id="a2", step=1)
    store.record_usage("c", Tokens(total=30), model="m1", message_id="a2")  # the turn of a2
    report = read_usage(store, by=["model"], prices=PRICES)
    assert report.total.total == 22 + 30 and report.total.calls == 3
    assert report.total.cost is None and report.total.unpriced == 3  # m1 has no price
    [entry] = store.history("c", kinds=["usage-recorded"], limit=1)
    assert entry.details["source"] == "openai-agents" and entry.details["step"] == 1


def test_bad_usage_and_prices_are_refused(store: ConversationStore) -> None:
    """Negative or missing counts, a bad step or source, a price table without output."""
    store.start_conversation("c")
    version = store.version("c")
    with pytest.raises(InvalidInputError, match="must not be negative"):
        store.record_usage("c", Tokens(input=-1))
    with pytest.raises(InvalidInputError, match="at least one token count"):
        store.record_usage("c", Tokens())
    with pytest.raises(InvalidInputError, match="inputTokens must be a number"):
        store.record_usage("c", {"inputTokens": "many"})
    with pytest.raises(InvalidInputError, match="step must be a positive integer"):
        store.record_usage("c", Tokens(input=1), step=0)
    with pytest.raises(InvalidInputError, match="unknown usage source"):
        store.record_usage("c", Tokens(input=1), source="bank")
    assert store.version("c") == version
    with pytest.raises(InvalidInputError, match="needs input and output"):
        PriceTable.from_json({"gpt-4o": {"input": 1}})
    with pytest.raises(InvalidInputError, match="cannot be rolled up by"):
        read_usage(store, by=["planet"])


def test_erased_conversations_are_not_counted(durable_backend: Backend) -> None:
    """Erasure destroys the metadata: the ledger skips the conversation."""
    store = durable_backend.open()
    store.start_conversation("gone")
    store.record_usage("gone", Tokens(input=5, output=5), model="gpt-4o")
    store.start_conversation("kept")
    store.record_usage("kept", Tokens(input=1, output=1), model="gpt-4o")
    store.operations.erase("gone", reason="asked", actor="operator:x")
    assert read_usage(store).total.total == 2


def test_chatledger_stats_shows_the_usage_priced(tmp_path: Path) -> None:
    """``chatledger stats --usage-by model --prices FILE`` as a real process, lines and JSON."""
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    with ConversationStore.open(url) as store:
        store.start_conversation("c", actor="user:alice")
        _ask(store, "c", "u1", "user:alice")
        _answer(store, "c", "a1", [{"model": "gpt-4o"},
                                   {"totalUsage": {"inputTokens": 1000, "outputTokens": 100}}])  # fmt: skip
        store.record_usage("c", Tokens(input=50, output=5), model="o-mini", message_id="a0")
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"gpt-4o": {"input": 2.5, "output": 10}}))
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHATLEDGER_")}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "chatledger", "stats", "--url", url, *args],
            capture_output=True, text=True, cwd=tmp_path, env=env, timeout=60,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip

    result = run("--usage-by", "model", "--usage-by", "user", "--prices", str(prices))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert (
        "token usage: 1,155 tokens (input 1,050, output 105) in 2 usages, cost 0.0035 (1 unpriced)"
        in lines
    )
    at = lines.index("usage per model:")
    assert lines[at + 1].split()[:2] == ["gpt-4o", "1,100"]
    assert lines[at + 2].split()[:2] == ["o-mini", "55"] and lines[at + 2].endswith(
        "cost - (1 unpriced)"
    )
    assert "usage per user:" in lines
    data = json.loads(run("--usage", "--json").stdout)
    assert data["usage"]["total"]["totalTokens"] == 1155 and data["usage"]["priced"] is False
    assert [row["key"] for row in data["usage"]["groups"]["model"]] == ["gpt-4o", "o-mini"]
    plain = run()
    assert plain.returncode == 0 and "token usage" not in plain.stdout
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"gpt-4o": {"input": 1}}))
    refused = run("--prices", str(bad))
    assert refused.returncode != 0 and "needs input and output" in refused.stderr
