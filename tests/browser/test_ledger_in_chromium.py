"""The conversation page in Chromium: compacted messages marked (who, when, why, the summary), and the usage.

One ``chatledger serve`` per backend (SQLite, PostgreSQL), seeded through the
store before it starts: a v7 and a v6 conversation whose answers state their
usage in message metadata, a recorded step, and a compaction of the first turns.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from chatledger import ConversationStore
from chatledger.domain.usage import Tokens
from tests.browser.conftest import Served, serving, signed_in
from tests.browser.test_pages_in_chromium import _settled

SUMMARY = "Alice asked about Paris and Rome; the assistant compared their museums."


def _user(message_id: str, text: str) -> dict[str, Any]:
    return {"id": message_id, "role": "user", "parts": [{"type": "text", "text": text}]}


def _answer(store: ConversationStore, chat: str, message_id: str, text: str, used: int) -> None:
    store.ingest(
        chat,
        [
            {"type": "start", "messageId": message_id, "messageMetadata": {"model": "gpt-4o"}},
            {"type": "start-step"},
            {"type": "text-start", "id": "t"},
            {"type": "text-delta", "id": "t", "delta": text},
            {"type": "text-end", "id": "t"},
            {"type": "finish-step"},
            {"type": "finish", "finishReason": "stop", "messageMetadata": {
                "totalUsage": {"inputTokens": used, "outputTokens": used // 10}}},
        ],
        actor="agent:assistant",
    )  # fmt: skip


def _seed(url: str) -> None:
    with ConversationStore.open(url, tenant="acme") as store:
        for chat, ai_sdk in (("trip", 7), ("trip-v6", 6)):
            store.start_conversation(chat, actor="user:alice", ai_sdk=ai_sdk)
            for n, (question, answer) in enumerate(
                [("Tell me about Paris", "Paris has the Louvre."),
                 ("And Rome?", "Rome has the Vatican museums."),
                 ("Which is bigger?", "The Louvre, by area.")], start=1,
            ):  # fmt: skip
                store.append_message(chat, _user(f"u{n}", question), actor="user:alice")
                _answer(store, chat, f"a{n}", answer, 1000 * n)
            store.record_usage(
                chat, Tokens(input=50, output=5), model="o3-mini", message_id="a3", step=1,
                source="openai-agents",
            )  # fmt: skip
            store.compact(
                chat, from_message_id="u1", to_message_id="a2", summary=SUMMARY,
                actor="user:alice", reason="the chat got long",
            )  # fmt: skip


@pytest.fixture(scope="module")
def served(
    backend_url: tuple[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Served]:
    name, url = backend_url
    _seed(url)
    with serving(name, url, tmp_path_factory.mktemp(f"serve-ledger-{name}")) as server:
        yield server


@pytest.fixture(scope="module")
def page(chromium: Any, served: Served) -> Iterator[Any]:
    with signed_in(chromium, served.base + "/", "tr.chat-row", height=1000) as tab:
        yield tab


@pytest.mark.parametrize("chat", ["trip", "trip-v6"])
def test_compacted_messages_are_marked_and_the_usage_shown(
    page: Any, served: Served, chat: str
) -> None:
    """Every original message is drawn; the compacted ones inside the mark; usage totals and rows."""
    page.goto(served.base + f"/conversation?id={chat}")
    _settled(page, "#usage")
    shown = page.eval_on_selector_all(
        "#messages article.message", "items => items.map(a => a.dataset.messageId)"
    )
    assert shown == ["u1", "a1", "u2", "a2", "u3", "a3"]  # the originals, all of them
    inside = page.eval_on_selector_all(
        "#messages .compacted article.message", "items => items.map(a => a.dataset.messageId)"
    )
    assert inside == ["u1", "a1", "u2", "a2"]
    mark = page.inner_text(".compaction-mark")
    assert "user:alice" in mark and "the chat got long" in mark and SUMMARY in mark
    assert "4 message(s)" in mark
    total = page.inner_text("#usage-total")
    # 1000+100, 2000+200, 3000+300 from the streams; a3's recorded step is listed, but a3's
    # stream already counts its turn, so the step is not counted twice
    assert total.startswith("6,600 tokens (input 6,000, output 600) in 3 usage(s)")
    rows = page.eval_on_selector_all(
        ".usage-row", "rows => rows.map(r => [...r.cells].map(c => c.textContent.trim()))"
    )
    assert [row[1:4] for row in rows] == [
        ["a1", "gpt-4o", "turn"], ["a2", "gpt-4o", "turn"], ["a3", "gpt-4o", "turn"],
        ["a3", "o3-mini", "1"],
    ]  # fmt: skip
    served.screenshot(page, f"compaction-usage-{chat}")


def test_a_version_before_the_compaction_shows_no_mark(page: Any, served: Served) -> None:
    """Point in time: one version back (before the compaction) there is no mark; usage up to a version."""
    with ConversationStore.open(served.url, tenant="acme") as store:
        before = store.compactions("trip")[0]["version"] - 1
    page.goto(served.base + "/conversation?id=trip")
    _settled(page, ".compaction-mark")
    page.focus("#at-slider")
    page.keyboard.press("ArrowLeft")
    _settled(page, f'#conversation-view[data-version="{before}"]')
    assert page.query_selector(".compaction-mark") is None
    assert page.query_selector(".compacted") is None
    assert page.locator("#messages article.message").count() == 6
    assert page.inner_text("#usage-total").startswith("6,600 tokens")
    served.screenshot(page, "compaction-usage-before")
    second = page.get_attribute(".usage-row:nth-child(2)", "data-position")
    page.click(".usage-row:nth-child(2) .goto")  # the version of the second answer's usage
    _settled(page, f'#conversation-view[data-version="{second}"]')
    assert page.inner_text("#usage-total").startswith("3,300 tokens (input 3,000, output 300)")
