"""The pages in headless Chromium against a real ``chatledger serve`` (SQLite and PostgreSQL).

One server per backend, seeded through the store before it starts: tenant
acme has a demo turn awaiting approval (``ci-disk``), a chat holding a
stored-XSS attempt (``evil``) and a few others; tenant globex has ``theirs``.
The tests run in order against that server, as a reviewer would click.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from chatledger import ConversationStore
from chatledger.adapters.responders.demo import (
    approved_continuation_chunks,
    continuation_chunks,
    first_turn_chunks,
)
from chatledger.domain.seal import SealKey
from tests.browser.conftest import Served, serving, signed_in, start_server
from tests.support.demo_words import demo_words

pytestmark = [pytest.mark.browser, pytest.mark.timeout(60)]

SEAL_SECRET = "the operator's seal secret, 32 bytes+"
SEAL_KEY = SealKey.from_text(SEAL_SECRET)
XSS = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'
DEMO_QUESTION = "The CI runner's disk is almost full. Can you delete the old build logs?"
# The demo's continuation after an approval (the tool ran) and after a denial.
FIRST_WORDS, LAST_WORDS = demo_words(approved_continuation_chunks())
DENIED_FIRST_WORDS, _ = demo_words(continuation_chunks())


def _user(message_id: str, text: str) -> dict[str, Any]:
    return {"id": message_id, "role": "user", "parts": [{"type": "text", "text": text}]}


def _seed(url: str) -> None:
    with ConversationStore.open(url, tenant="acme") as store:
        store.start_conversation("ci-disk", actor="user:alice")
        store.append_message("ci-disk", _user("u1", DEMO_QUESTION), actor="user:alice")
        store.ingest("ci-disk", first_turn_chunks(), actor="agent:ops-assistant")
        store.start_conversation("evil", actor="user:mallory")
        store.append_message("evil", _user("u1", XSS), actor="user:mallory")
        for n, text in enumerate(["Hello there, General Kenobi", "Quarterly report numbers"]):
            store.start_conversation(f"chat-{n}")
            store.append_message(f"chat-{n}", _user("u1", text))
        store.set_title("chat-1", "Q3 report")
        store.start_conversation("theirs", tenant="globex")
        store.append_message("theirs", _user("u1", "globex secret"), tenant="globex")


@pytest.fixture(scope="module")
def served(
    backend_url: tuple[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Served]:
    name, url = backend_url
    _seed(url)
    with serving(name, url, tmp_path_factory.mktemp(f"serve-{name}")) as server:
        yield server


@pytest.fixture(scope="module")
def page(chromium: Any, served: Served) -> Iterator[Any]:
    """One tab, signed in once as acme (the token stays in the tab's session)."""
    with signed_in(chromium, served.base + "/", "tr.chat-row") as tab:  # the token: asked once
        yield tab


def _settled(page: Any, selector: str) -> None:
    """Wait for ``selector``, then for htmx to finish swapping it in (its controls are live then)."""
    page.wait_for_selector(selector, state="attached")
    page.wait_for_function(
        "() => !document.querySelector('.htmx-request, .htmx-swapping, .htmx-settling')"
    )


def _rendered(page: Any) -> list[dict[str, Any]]:
    return page.evaluate(
        """() => [...document.querySelectorAll('#messages article.message')].map(a => ({
            id: a.dataset.messageId, role: a.dataset.role,
            texts: [...a.querySelectorAll('.part.text')].map(p => p.textContent),
            tools: [...a.querySelectorAll('.part.tool')].map(t =>
                [t.dataset.toolCallId, t.querySelector('.tool-state').textContent]),
        }))"""
    )


def _expected(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "id": m["id"],
            "role": m["role"],
            "texts": [p["text"] for p in m["parts"] if p["type"] == "text"],
            "tools": [[p["toolCallId"], p["state"]] for p in m["parts"] if "toolCallId" in p],
        }
        for m in messages
    ]


def _chat_ids(page: Any) -> list[str]:
    return page.eval_on_selector_all("tr.chat-row", "rows => rows.map(r => r.dataset.chatId)")


def _wait_rows(page: Any, ids: set[str]) -> None:
    """Wait until the list shows exactly these chats."""
    page.wait_for_function(
        """ids => { const shown = [...document.querySelectorAll('tr.chat-row')]
                .map(r => r.dataset.chatId).sort();
            return JSON.stringify(shown) === JSON.stringify(ids); }""",
        arg=sorted(ids),
    )


def test_the_list_searches_filters_and_badges(page: Any, served: Served) -> None:
    assert set(_chat_ids(page)) == {"ci-disk", "evil", "chat-0", "chat-1"}  # never globex's
    badge = page.locator('tr[data-chat-id="ci-disk"] .badge')
    assert badge.inner_text() == "1 awaiting approval"
    served.screenshot(page, "list")
    page.fill("#q", "kenobi")
    _wait_rows(page, {"chat-0"})
    page.fill("#q", "")
    _wait_rows(page, {"ci-disk", "evil", "chat-0", "chat-1"})
    page.select_option("#status", "awaiting-approval")
    _wait_rows(page, {"ci-disk"})
    page.select_option("#status", "")
    _wait_rows(page, {"ci-disk", "evil", "chat-0", "chat-1"})
    assert page.locator('tr[data-chat-id="chat-1"] a').first.inner_text() == "Q3 report"


def test_the_slider_shows_each_version_as_stored(page: Any, served: Served) -> None:
    page.click('tr[data-chat-id="ci-disk"] a')
    _settled(page, "#conversation-view")
    latest = int(page.get_attribute("#conversation-view", "data-latest"))
    with ConversationStore.open(served.url, tenant="acme") as store:
        expected = {n: store.messages("ci-disk", at_version=n) for n in range(1, latest + 1)}
    assert _rendered(page) == _expected(expected[latest])
    served.screenshot(page, "conversation")
    page.focus("#at-slider")
    page.keyboard.press("Home")  # the keyboard moves the slider
    for version in range(1, latest + 1):
        if version > 1:
            page.focus("#at-slider")
            page.keyboard.press("ArrowRight")
        _settled(page, f'#conversation-view[data-version="{version}"]')
        assert _rendered(page) == _expected(expected[version]), f"at version {version}"
        current = page.locator(".timeline .entry.current")  # a stream's batches are one row
        first = int(current.get_attribute("data-position"))
        assert first <= version <= int(current.get_attribute("data-last-position"))
        if version == 2:
            assert page.locator('article.changed[data-message-id="u1"]').count() == 1
            served.screenshot(page, "point-in-time")
    page.select_option("#kind-filter", "chunks")
    _settled(page, "#kind-filter option[value=chunks][selected]")
    kinds = page.eval_on_selector_all(
        ".timeline .entry .kind", "els => els.map(e => e.textContent)"
    )
    assert kinds and set(kinds) == {"chunks"}


def test_approve_from_the_inbox_and_watch_the_continuation_stream_in(
    page: Any, served: Served
) -> None:
    page.goto(served.base + "/approvals")  # the token is kept: no form this time
    item = page.locator('li.pending[data-chat-id="ci-disk"]')
    item.wait_for()
    assert page.locator("#token-form").is_hidden()
    served.screenshot(page, "approvals")
    item.locator("input[name=reason]").fill("Fine: the logs are archived elsewhere")
    item.locator("button[value=approve]").click()
    page.wait_for_selector("#inbox-empty")
    page.goto(served.base + "/conversation?id=ci-disk")
    page.wait_for_selector(".live")  # streaming: the gate holds the answer half written
    page.wait_for_function(
        "t => document.querySelector('#messages').textContent.includes(t)", arg=FIRST_WORDS
    )
    assert LAST_WORDS not in page.inner_text("#messages")
    served.screenshot(page, "streaming")
    served.open_gate("ci-disk")  # let the answer finish
    page.wait_for_function(
        "t => document.querySelector('#messages').textContent.includes(t)", arg=LAST_WORDS
    )
    page.wait_for_selector(".live", state="detached")
    decision = page.locator(".timeline .entry.kind-approval-responded")
    assert decision.locator(".actor").inner_text() == "user:alice"  # the token's user
    assert "Fine: the logs are archived elsewhere" in decision.inner_text()
    approval = page.locator(".part.tool[data-tool-call-id] .approval").first
    assert "Approved by" in approval.inner_text()
    served.screenshot(page, "continued")


def test_another_tenants_chat_is_not_found(page: Any, served: Served) -> None:
    page.goto(served.base + "/conversation?id=theirs")
    error = page.locator("#conversation .error")
    error.wait_for()
    assert error.inner_text().startswith("Not found")
    assert "globex secret" not in page.content()


def test_stored_xss_is_shown_not_run(page: Any, served: Served) -> None:
    page.goto(served.base + "/conversation?id=evil")
    page.wait_for_selector('article[data-message-id="u1"]')
    assert page.locator('article[data-message-id="u1"] .part.text').inner_text() == XSS
    page.goto(served.base + "/")
    page.wait_for_selector('tr[data-chat-id="evil"]')
    assert XSS[:30] in page.inner_text('tr[data-chat-id="evil"]')
    assert page.evaluate("window.__pwned") is None
    assert page.locator("img[src=x]").count() == 0
    served.screenshot(page, "xss-shown")


def test_verify_page(page: Any, served: Served) -> None:
    page.goto(served.base + "/verify?id=ci-disk")
    result = page.locator("#verify-result")
    result.wait_for()
    assert "Verified." in result.inner_text()
    if page.get_attribute("#seal-status", "data-status") == "none":  # before any test sealed
        assert "no seal yet" in page.inner_text("#seal-status")
    with ConversationStore.open(served.url) as store:
        seal = store.operations.seal(SEAL_KEY)
    page.goto(served.base + "/verify?id=ci-disk")
    page.locator("#seal-status").wait_for()
    status = page.inner_text("#seal-status")
    assert page.get_attribute("#seal-status", "data-status") == "unchecked"
    assert "no seal key given" in status
    assert f"#{seal.seq}" in status and seal.sealed_at in status
    assert f"over {seal.conversations} conversation head(s)" in status
    served.screenshot(page, "verify")


def test_the_verify_page_checks_the_seal_with_the_servers_key(
    chromium: Any, served: Served, tmp_path: Path
) -> None:
    key_file = tmp_path / "seal.key"
    key_file.write_text(SEAL_SECRET)
    with ConversationStore.open(served.url) as store:
        store.operations.seal(SEAL_KEY)
    other = start_server(
        served.name, served.url, tmp_path / "serve.log", tmp_path / "gates",
        ("--seal-key-file", str(key_file)),
    )  # fmt: skip
    context = chromium.new_context()
    context.set_default_timeout(10_000)
    tab = context.new_page()
    try:
        tab.goto(other.base + "/verify?id=ci-disk")
        tab.wait_for_selector("#token-form:not([hidden])")
        tab.fill("#token", "acme-token")
        tab.keyboard.press("Enter")
        tab.locator("#seal-status").wait_for()
        assert tab.get_attribute("#seal-status", "data-status") == "verified"
        assert "signature verified" in tab.inner_text("#seal-status")
        other.screenshot(tab, "verify-sealed")
        with ConversationStore.open(served.url) as store:
            store.operations.seal(SealKey.from_text("not the operator's key, but long enough"))
        tab.reload()
        tab.locator("#seal-status").wait_for()
        assert tab.get_attribute("#seal-status", "data-status") == "failed"
        assert "do not check out" in tab.inner_text("#seal-status")
        assert "problem(s) found" in tab.inner_text("#verify-result")
        other.screenshot(tab, "verify-forged")
    finally:
        context.close()
        other.process.terminate()
        other.process.wait(timeout=20)
