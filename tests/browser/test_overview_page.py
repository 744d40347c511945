"""The overview page and the API reference page in headless Chromium against a real ``chatledger serve``.

One server per backend (SQLite, PostgreSQL), seeded through the store before
it starts with the known conversations of ``tests.integration.stats_support``
(tenant acme: three answered approvals, one waiting, one continuation queued,
a replay and a refused chunk; tenant globex: one denial), their events
stamped from three days ago. Screenshots: ``<backend>-overview.png`` and
``<backend>-api-docs.png``.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from chatledger import ConversationStore
from tests.browser.conftest import Served, serving, signed_in
from tests.integration.stats_support import seed, stamp_events

pytestmark = [pytest.mark.browser, pytest.mark.timeout(60)]


@pytest.fixture(scope="module")
def served(
    backend_url: tuple[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Served]:
    name, url = backend_url
    start = (datetime.now(UTC) - timedelta(days=3)).replace(hour=10, minute=0, second=0)
    with pytest.MonkeyPatch.context() as patch, ConversationStore.open(url) as store:
        seed(store, stamp_events(patch), start)
    # Continuations left to workers: the queue stays as seeded while the page is read.
    extra = ("--no-continuations",)
    with serving(name, url, tmp_path_factory.mktemp(f"overview-{name}"), extra) as server:
        yield server


@pytest.fixture(scope="module")
def page(chromium: Any, served: Served) -> Iterator[Any]:
    """One tab, signed in as acme on the overview page (the token is asked once)."""
    with signed_in(chromium, served.base + "/overview", "#fig-conversations") as tab:
        yield tab


def _text(page: Any, selector: str) -> str:
    return str(page.text_content(selector)).strip()


def test_the_overview_shows_the_figures_and_draws_them(page: Any, served: Served) -> None:
    """The cards hold acme's numbers; the charts have a column pair per day and a row per tool."""
    assert _text(page, "#fig-conversations") == "4"
    assert _text(page, "#fig-streams") == "5"
    assert _text(page, "#fig-answered") == "3"
    assert " ".join(_text(page, "#fig-rates").split()) == "67% approved, 33% denied"
    assert _text(page, "#fig-median") == "2 min 0 s"
    assert _text(page, "#fig-p90") == "median; 90% within 4 min 24 s"
    assert _text(page, "#fig-awaiting") == "1"
    assert _text(page, "#fig-queue") == "1"
    assert (_text(page, "#fig-refused"), _text(page, "#fig-replays")) == ("1", "5")
    assert page.locator("#chart-days rect.bar.conversations").count() == 30
    drawn = page.evaluate(
        """() => [...document.querySelectorAll('#chart-days rect.bar')]
                 .filter(r => r.getBBox().height > 0).map(r => r.querySelector('title').textContent)"""
    )
    assert sorted(t.split(": ", 1)[1] for t in drawn) == [
        "1 conversation(s) started", "1 conversation(s) started", "1 stream(s) opened",
        "2 conversation(s) started", "2 stream(s) opened", "2 stream(s) opened",
    ]  # fmt: skip
    tools = page.locator("#chart-tools rect.bar title").all_text_contents()
    assert sorted(tools) == ["deleteFile: 2 approved", "sendPayment: 1 denied"]
    actors = page.locator("#chart-actors rect.bar title").all_text_contents()
    assert sorted(actors) == [
        "user:alice: 1 approved",
        "user:bob: 1 approved",
        "user:bob: 1 denied",
    ]
    assert "globex" not in page.content()
    assert page.get_attribute('nav a[href="/overview"]', "aria-current") == "page"
    served.screenshot(page, "overview")


def test_a_shorter_window_redraws_the_days(page: Any) -> None:
    """Choosing 7 days asks the server again; the day chart then has seven column pairs."""
    page.select_option("#days", "7")
    page.wait_for_function(
        "() => document.querySelectorAll('#chart-days rect.bar.conversations').length === 7"
    )
    assert _text(page, "#fig-conversations") == "4"  # totals are all time


def test_the_api_reference_is_a_page_of_its_own(page: Any, served: Served) -> None:
    """/docs lists every route of /openapi.json, stats included, with no script from elsewhere."""
    page.goto(served.base + "/docs")
    paths = page.locator("article.operation h3 code").all_text_contents()
    document = page.request.get(served.base + "/openapi.json").json()
    expected = {path for path, item in document["paths"].items() for _ in item}
    assert set(paths) - {name for name in document["components"]["schemas"]} == expected
    assert page.locator("#get-api-stats td", has_text="integer (min 1, max 366)").count() == 1
    for name in (
        "approvals.decisionSeconds.median",
        "days[].streams",
        "approvals.byTool.NAME.denied",
    ):
        assert page.locator("#get-api-stats th code", has_text=name).count() == 1, name
    scripts = page.evaluate("() => [...document.scripts].map(s => s.getAttribute('src'))")
    assert all(src and src.startswith("/static/") for src in scripts), scripts
    served.screenshot(page, "api-docs")
