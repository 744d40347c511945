"""The chat page (the AI SDK's own ``useChat``, v7, bundled) in headless Chromium against ``chatledger serve``.

A full approval turn: send, the answer streams, approve with the page's
button, the continuation streams; reload while the continuation is half
written (held by the gated responder) and see it resume; stop an answer.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from chatledger import ConversationStore
from chatledger.adapters.responders.demo import approved_continuation_chunks, continuation_chunks
from tests.browser.conftest import Served, browsing, serving
from tests.support.demo_words import demo_words

pytestmark = [pytest.mark.browser, pytest.mark.timeout(60)]

FIRST_TURN = "I can free up space by removing the archived build logs."
# The demo's continuation after an approval (the tool ran) and after a denial.
FIRST_WORDS, LAST_WORDS = demo_words(approved_continuation_chunks())
DENIED_FIRST_WORDS, _ = demo_words(continuation_chunks())


@pytest.fixture(scope="module")
def served(
    backend_url: tuple[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Served]:
    name, url = backend_url
    with serving(name, url, tmp_path_factory.mktemp(f"chat-{name}")) as server:
        yield server


@pytest.fixture
def page(chromium: Any, served: Served) -> Iterator[Any]:
    with browsing(chromium, width=1100) as tab:
        yield tab


def _messages_text(page: Any) -> str:
    return page.inner_text("#messages")


def _wait_text(page: Any, text: str) -> None:
    page.wait_for_function(
        "t => (document.querySelector('#messages')?.textContent ?? '').includes(t)", arg=text
    )


def _open_chat(page: Any, served: Served, chat_id: str) -> None:
    page.goto(f"{served.base}/chat?id={chat_id}")
    page.fill("#token", "acme-token")  # asked once: the tab's session keeps it
    page.keyboard.press("Enter")
    page.wait_for_selector("#prompt")


def _send(page: Any, text: str) -> None:
    page.fill("#prompt", text)
    page.keyboard.press("Enter")


def test_a_full_approval_turn_with_a_reload_mid_answer(page: Any, served: Served) -> None:
    _open_chat(page, served, "ui-turn")
    _send(page, "The CI disk is full: delete the old build logs?")
    _wait_text(page, FIRST_TURN)  # streamed by the server, folded by the real useChat
    approve = page.locator('.part.tool[data-tool-call-id] button[value="approve"]')
    approve.wait_for()
    served.screenshot(page, "chat-approval")
    page.fill('.part.tool input[id^="reason-"]', "Archived already")
    approve.click()  # useChat sends the approval; the server continues the turn
    _wait_text(page, FIRST_WORDS)  # the gate holds the rest
    assert LAST_WORDS not in _messages_text(page)
    page.reload()  # mid-answer: the page resumes the open stream from the log
    _wait_text(page, FIRST_WORDS)
    assert FIRST_TURN in _messages_text(page)
    page.wait_for_selector('.chat[data-status="streaming"], .chat[data-status="submitted"]')
    served.screenshot(page, "chat-resumed")
    served.open_gate("ui-turn")
    _wait_text(page, LAST_WORDS)
    page.wait_for_selector('.chat[data-status="ready"]')
    served.screenshot(page, "chat-done")
    shown = page.eval_on_selector_all("#messages .part.text", "ps => ps.map(p => p.textContent)")
    with ConversationStore.open(served.url, tenant="acme") as store:
        stored = store.messages("ui-turn")
        decision = store.history("ui-turn", kinds=["approval-responded"])
    texts = [p["text"] for m in stored for p in m["parts"] if p["type"] == "text"]
    assert shown == texts
    assert [d.details["approved"] for d in decision] == [True]
    assert decision[0].details["reason"] == "Archived already"


def test_stop_ends_the_answer_on_the_server(page: Any, served: Served) -> None:
    _open_chat(page, served, "ui-stop")
    _send(page, "Free up some disk space")
    page.locator('button[value="deny"]').wait_for()
    page.locator('button[value="deny"]').click()
    _wait_text(page, DENIED_FIRST_WORDS)  # held by the gate, still streaming
    page.click("#stop")
    page.wait_for_selector('.chat[data-status="ready"]')
    with ConversationStore.open(served.url, tenant="acme") as store:
        for _ in range(100):
            if store.status("ui-stop").status != "streaming":
                break
            page.wait_for_timeout(100)  # the stop is recorded by the server's own task
        assert store.status("ui-stop").last_outcome == "aborted"
    served.open_gate("ui-stop")
