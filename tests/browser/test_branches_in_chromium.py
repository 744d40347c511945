"""The conversation page's ``< 2/3 >`` branch navigation in headless Chromium against a real ``chatledger serve``.

A conversation whose answer was regenerated twice shows ``3/3`` on the answer;
``<`` switches the active path (an audited switch by the token's user), the
page redraws on the other branch, and past versions show the counts without
letting anyone switch. SQLite and PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from chatledger import ConversationStore
from tests.browser.conftest import Served, serving, signed_in

pytestmark = [pytest.mark.browser, pytest.mark.timeout(90)]

CHAT = "branched"
CHAT_UI = "branched-chat"
"""Seeded alike: one for the conversation page, one for the chat page (the real useChat)."""
FORK = "branched-fork"
QUESTION = {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Name a colour"}]}


def _answer(store: ConversationStore, chat: str, message_id: str, text: str) -> None:
    store.ingest(
        chat,
        [
            {"type": "start", "messageId": message_id},
            {"type": "text-start", "id": "t"},
            {"type": "text-delta", "id": "t", "delta": text},
            {"type": "text-end", "id": "t"},
            {"type": "finish"},
        ],
        actor="agent:bot",
    )


@pytest.fixture(scope="module")
def served(
    backend_url: tuple[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Served]:
    name, url = backend_url
    with ConversationStore.open(url, tenant="acme") as store:
        for chat in (CHAT, CHAT_UI):
            store.start_conversation(chat, actor="user:alice", ai_sdk=7)
            store.append_message(chat, QUESTION, actor="user:alice")
            for n, colour in enumerate(["Red", "Green", "Blue"], start=1):
                if n > 1:
                    store.regenerate(chat, actor="user:alice")
                _answer(store, chat, f"a{n}", colour)
        store.fork(CHAT, FORK, leaf="a1", actor="user:alice", reason="try red")
    with serving(name, url, tmp_path_factory.mktemp(f"serve-branches-{name}")) as server:
        yield server


@pytest.fixture(scope="module")
def page(chromium: Any, served: Served) -> Iterator[Any]:
    with signed_in(chromium, served.base + f"/conversation?id={CHAT}") as tab:
        yield tab


def _answer_shown(page: Any) -> dict[str, Any]:
    return page.evaluate(
        """() => { const a = document.querySelector('#messages article.role-assistant');
            return { id: a.dataset.messageId, text: a.querySelector('.part.text').textContent,
                     of: a.querySelector('.branch-of').textContent,
                     prev: !a.querySelector('.branch-prev').disabled,
                     next: !a.querySelector('.branch-next').disabled }; }"""
    )


def test_the_arrows_switch_the_branch_and_the_audit_names_who(page: Any, served: Served) -> None:
    page.wait_for_selector("#messages article.role-assistant .branch-nav")
    assert _answer_shown(page) == {
        "id": "a3",
        "text": "Blue",
        "of": "3/3",
        "prev": True,
        "next": False,
    }
    assert (
        page.locator("#messages article.role-user .branch-nav").count() == 0
    )  # one branch: no nav
    served.screenshot(page, "branches-3-of-3")

    page.click("#messages article.role-assistant .branch-prev")
    page.wait_for_function(
        "() => document.querySelector('#messages article.role-assistant .branch-of')?.textContent === '2/3'"
    )
    assert _answer_shown(page) == {
        "id": "a2",
        "text": "Green",
        "of": "2/3",
        "prev": True,
        "next": True,
    }
    served.screenshot(page, "branches-2-of-3")
    with ConversationStore.open(served.url, tenant="acme") as store:
        assert [m["id"] for m in store.messages(CHAT)] == ["u1", "a2"]
        switched = store.history(CHAT, kinds=["branch-switched"])
        assert [(e.actor, e.details["leaf"]) for e in switched] == [("user:alice", "a2")]
    page.wait_for_selector("li.kind-branch-switched, .timeline :text('switched to the branch')")


def test_a_past_version_shows_the_counts_but_does_not_switch(page: Any, served: Served) -> None:
    with ConversationStore.open(served.url, tenant="acme") as store:
        latest = store.version(CHAT)
    page.goto(served.base + f"/conversation?id={CHAT}")
    page.wait_for_selector("#messages article.role-assistant .branch-nav")
    page.evaluate(
        """v => { const s = document.getElementById('at-slider'); s.value = v;
            s.dispatchEvent(new Event('input', {bubbles: true})); }""",
        latest - 1,
    )
    page.wait_for_selector("#follow-latest")
    page.wait_for_function(
        "() => document.querySelector('#messages article.role-assistant')?.dataset.messageId === 'a3'"
    )
    shown = _answer_shown(page)
    assert (shown["of"], shown["prev"], shown["next"]) == ("3/3", False, False)


def _chat_answer(page: Any) -> dict[str, Any]:
    page.wait_for_selector("#messages article.role-assistant .branch-nav")
    return page.evaluate(
        """() => { const a = document.querySelector('#messages article.role-assistant');
            return { id: a.dataset.messageId, text: a.querySelector('.part.text').textContent,
                     of: a.querySelector('.branch-of').textContent }; }"""
    )


def test_the_chat_page_switches_branches_through_use_chat(page: Any, served: Served) -> None:
    """The real useChat is given the new path's messages; a reload reads the same active path."""
    page.goto(served.base + f"/chat?id={CHAT_UI}")  # the tab keeps its token
    assert _chat_answer(page) == {"id": "a3", "text": "Blue", "of": "3/3"}
    served.screenshot(page, "chat-branches-3-of-3")
    page.click("#messages article.role-assistant .branch-prev")
    page.wait_for_function(
        "() => document.querySelector('#messages article.role-assistant .branch-of')?.textContent === '2/3'"
    )
    assert _chat_answer(page) == {"id": "a2", "text": "Green", "of": "2/3"}
    served.screenshot(page, "chat-branches-2-of-3")
    page.reload()
    assert _chat_answer(page) == {"id": "a2", "text": "Green", "of": "2/3"}
    with ConversationStore.open(served.url, tenant="acme") as store:
        switched = store.history(CHAT_UI, kinds=["branch-switched"])
        assert [(e.actor, e.details["leaf"]) for e in switched] == [("user:alice", "a2")]

    # The next turn: useChat posts the path it holds, the server answers on the active path.
    page.fill("#prompt", "The CI disk is full: delete the old build logs?")
    page.keyboard.press("Enter")
    page.wait_for_function(
        "t => document.querySelector('#messages').textContent.includes(t)",
        arg="I can free up space by removing the archived build logs.",
    )
    with ConversationStore.open(served.url, tenant="acme") as store:
        shown = store.messages(CHAT_UI)
        assert [m["id"] for m in shown[:2]] == ["u1", "a2"]
        assert [m["role"] for m in shown[2:]] == ["user", "assistant"]
        assert store.branches(CHAT_UI, "a2").total == 3
    served.screenshot(page, "chat-branches-next-turn")


def test_a_fork_shows_its_origin_and_the_shared_messages(page: Any, served: Served) -> None:
    page.goto(served.base + f"/conversation?id={FORK}")
    page.wait_for_selector("#forked-from")
    assert "Forked from branched at version 13, up to a1" in " ".join(
        page.inner_text("#forked-from").split()
    )
    page.wait_for_selector("#messages article.role-assistant")
    texts = page.eval_on_selector_all("#messages .part.text", "ps => ps.map(p => p.textContent)")
    assert texts == ["Name a colour", "Red"]
    assert "forked this conversation from" in page.inner_text(".timeline")
    served.screenshot(page, "fork-page")
    page.click("#forked-from a")
    page.wait_for_selector("#messages article.role-assistant .branch-nav")
    assert page.inner_text(".timeline").count("forked it into") == 1
