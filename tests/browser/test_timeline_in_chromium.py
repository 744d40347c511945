"""The grouped audit timeline in headless Chromium against a real ``chatledger serve`` (SQLite and PostgreSQL).

A long conversation, its answers streamed a batch per chunk: the page leads with
the decisions, shows each stream's batches as one row that opens on a click,
and pages the rows. Screenshots go to ``tests/artifacts/screenshots/``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from chatledger import ConversationStore
from chatledger.adapters.http.conversation_page import PAGE_ROWS
from tests.browser.conftest import Served, serving, signed_in
from tests.integration.test_timeline_grouped import seed_long_chat

pytestmark = [pytest.mark.browser, pytest.mark.timeout(90)]


@pytest.fixture(scope="module")
def served(
    backend_url: tuple[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Served]:
    name, url = backend_url
    with ConversationStore.open(url, tenant="acme") as store:
        seed_long_chat(store, "long", turns=PAGE_ROWS // 4 + 1)  # 4 rows a turn: two pages
    with serving(name, url, tmp_path_factory.mktemp(f"serve-timeline-{name}")) as server:
        yield server


@pytest.fixture(scope="module")
def page(chromium: Any, served: Served) -> Iterator[Any]:
    """One tab signed in as acme."""
    with signed_in(chromium, served.base + "/conversation?id=long", "#conversation-view") as tab:
        yield tab


def _settled(page: Any, selector: str) -> None:
    """Wait for ``selector``, then for htmx to finish swapping it in."""
    page.wait_for_selector(selector, state="attached")
    page.wait_for_function(
        "() => !document.querySelector('.htmx-request, .htmx-swapping, .htmx-settling')"
    )


def _rows(page: Any) -> list[list[str]]:
    return page.eval_on_selector_all(
        ".timeline > .entry",
        "rows => rows.map(r => [r.dataset.position, r.dataset.lastPosition,"
        " r.querySelector('.kind').textContent])",
    )


def test_decisions_lead_and_each_stream_is_one_row(page: Any, served: Served) -> None:
    """The denial heads the pane; the last page holds the newest rows, each stream one row."""
    _settled(page, "#conversation-view")
    with ConversationStore.open(served.url, tenant="acme") as store:
        grouped = store.timeline("long").rows
        latest = store.version("long")
    decision = page.locator(".decisions .decision")
    assert decision.count() == 1
    assert "denied" in decision.inner_text() and "not on Fridays" in decision.inner_text()
    assert decision.locator(".actor").inner_text() == "user:alice"
    assert page.inner_text("#timeline-pages .page-of") == "Page 2 of 2"
    rows = _rows(page)
    assert rows == [
        [str(row.position), str(row.last_position), row.kind] for row in grouped[PAGE_ROWS:]
    ]
    assert int(rows[-1][1]) == latest
    served.screenshot(page, "timeline-grouped")


def test_a_streams_row_opens_to_its_batches_and_pages_turn(page: Any, served: Served) -> None:
    """Earlier shows page 1; a click opens a stream's row; a batch's button shows its version."""
    page.click("#timeline-pages .page-earlier")
    _settled(page, "#timeline-pages .page-of >> text=Page 1 of 2")
    assert len(_rows(page)) == PAGE_ROWS
    stream = page.locator('.timeline > .entry.grouped[data-position="4"]')
    batches = stream.locator(".batch")
    assert batches.count() > 40 and not batches.first.is_visible()  # closed: one row
    assert "free up space" in stream.locator("summary").inner_text()
    stream.locator("summary").click()
    batches.first.wait_for(state="visible")
    served.screenshot(page, "timeline-expanded")
    stream.locator('.batch[data-position="10"] button.goto').click()
    _settled(page, '#conversation-view[data-version="10"]')
    current = page.locator(".timeline > .entry.current")
    assert current.get_attribute("data-position") == "4"
    assert page.locator('.batch.current[data-position="10"]').is_visible()  # opened for it
    assert page.inner_text("#timeline-pages .page-of") == "Page 1 of 2"
    served.screenshot(page, "timeline-batch-selected")
    page.click("#timeline-pages-top .page-later")
    _settled(page, "#timeline-pages .page-of >> text=Page 2 of 2")
    assert page.get_attribute("#conversation-view", "data-version") == "10"  # still version 10
