"""The approvals page and standing grants, in headless Chromium against a real ``chatledger serve``.

A reviewer approves a call with "don't ask again for this exact input"; the
same call in another conversation is then approved without asking (the page
shows the grant used once), another input still asks; revoking the grant
from the page makes the same call ask again. Screenshots go to
``tests/artifacts/screenshots/<backend>-grants.png``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from chatledger import ConversationStore
from chatledger.adapters.responders.demo import USER_MESSAGE, first_turn_chunks
from tests.browser.conftest import Served, serving

pytestmark = [pytest.mark.browser, pytest.mark.timeout(90)]


def _ask(url: str, chat_id: str, path: str | None = None) -> None:
    """The demo's first turn (delete_file awaiting approval) in ``chat_id``, tenant acme."""
    chunks = first_turn_chunks()
    if path is not None:
        for chunk in chunks:
            if chunk["type"] == "tool-input-available":
                chunk["input"] = {"path": path, "recursive": True}
    with ConversationStore.open(url, tenant="acme") as store:
        store.start_conversation(chat_id, actor="user:alice")
        store.append_message(chat_id, USER_MESSAGE, actor="user:alice")
        store.ingest(chat_id, chunks, actor="agent:ops-assistant")


@pytest.fixture(scope="module")
def served(
    backend_url: tuple[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Served]:
    name, url = backend_url
    _ask(url, "disk-1")
    with serving(name, url, tmp_path_factory.mktemp(f"grants-{name}")) as server:
        yield server


def _pending(page: Any) -> list[str]:
    return page.eval_on_selector_all("li.pending", "items => items.map(i => i.dataset.chatId)")


def test_grant_from_the_page_approves_the_same_call_later_until_revoked(
    chromium: Any, served: Served
) -> None:
    context = chromium.new_context(viewport={"width": 1280, "height": 1000})
    context.set_default_timeout(15_000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(served.base + "/approvals")
    page.wait_for_selector("#token-form:not([hidden])")
    page.fill("#token", "acme-token")
    page.keyboard.press("Enter")
    item = page.wait_for_selector('li.pending[data-chat-id="disk-1"]')

    item.query_selector('select[name="grant"]').select_option("input")  # type: ignore[union-attr]
    item.query_selector('input[name="reason"]').fill("old CI logs go")  # type: ignore[union-attr]
    item.query_selector('button[value="approve"]').click()  # type: ignore[union-attr]
    page.wait_for_selector("li.grant")
    shown = page.text_content("li.grant") or ""
    assert "delete_file" in shown and "exactly this input" in shown and "alice" in shown
    assert "old CI logs go" in shown and "until revoked" in shown

    _ask(served.url, "disk-2")  # the same call: approved by the grant, never in the inbox
    _ask(served.url, "disk-3", path="/etc")  # another input: a person must answer
    page.wait_for_function(
        "() => document.querySelector('li.grant .grant-uses')?.textContent === '1'"
    )
    page.wait_for_selector('li.pending[data-chat-id="disk-3"]')
    page.wait_for_selector('ul.grant-recent li[data-chat-id="disk-2"]')  # named in the inbox
    assert _pending(page) == ["disk-3"]
    served.screenshot(page, "grants")

    page.click("form.revoke-grant button")
    page.wait_for_selector("li.grant", state="detached")
    _ask(served.url, "disk-4")  # the same call again: asks, now the grant is revoked
    page.wait_for_selector('li.pending[data-chat-id="disk-4"]')
    assert sorted(_pending(page)) == ["disk-3", "disk-4"]
    context.close()
    assert errors == [], errors
