"""The conversation list's part of the ``ReadModelView`` contract, on each backend.

A page's summary replaces the conversation's row and its search text; lists
are tenant-scoped, newest change first (ties broken by id), paged without
repeats; ``reset`` empties the list and its search index.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from eventsourcing.persistence import Tracking

from chatledger.projections.listing import ConversationSummary, ListQuery
from chatledger.projections.read_models import Page, ReadModelView
from tests.integration.conftest import Backend

APP = "chatledger"
T0 = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.fixture
def view(backend: Backend) -> ReadModelView:
    return backend.open().read_models


def _summary(
    key: uuid.UUID, tenant: str, chat: str, minutes: int, text: str, *, status: str = "idle"
) -> ConversationSummary:
    at = T0 + timedelta(minutes=minutes)
    return ConversationSummary(
        key, tenant, chat, text[:20], False, T0, at, 2, 1, status, 0, None, text
    )


def _page(summaries: dict[uuid.UUID, ConversationSummary]) -> Page:
    page = Page(summaries=summaries)
    page.events = 1
    return page


def _ids(view: ReadModelView, **query: object) -> list[str]:
    found = view.list_conversations(ListQuery(**query))  # type: ignore[arg-type]
    return [row.chat_id for row in found.conversations]


def test_a_later_page_replaces_the_row_and_its_search_text(view: ReadModelView) -> None:
    key = uuid.uuid4()
    view.apply_page(
        _page({key: _summary(key, "acme", "c1", 0, "apples")}), Tracking(APP, 1), after=0
    )
    assert _ids(view, tenant="acme", query="apples") == ["c1"]
    view.apply_page(
        _page({key: _summary(key, "acme", "c1", 1, "bananas", status="streaming")}),
        Tracking(APP, 2),
        after=1,
    )
    assert _ids(view, tenant="acme", query="apples") == []
    assert _ids(view, tenant="acme", query="banana") == ["c1"]
    assert _ids(view, tenant="acme", status="streaming") == ["c1"]


def test_lists_are_per_tenant_newest_first_and_page_without_repeats(view: ReadModelView) -> None:
    keys = sorted((uuid.uuid4() for _ in range(5)), key=str)
    summaries = {
        k: _summary(k, "acme", f"c{i}", 0 if i < 3 else i, "same words") for i, k in enumerate(keys)
    }
    other = uuid.uuid4()
    summaries[other] = _summary(other, "globex", "theirs", 9, "same words")
    view.apply_page(_page(summaries), Tracking(APP, 1), after=0)
    everything = _ids(view, tenant="acme", limit=50)
    assert everything == ["c4", "c3", "c2", "c1", "c0"]  # time, then id, both descending
    paged: list[str] = []
    cursor = None
    while True:
        found = view.list_conversations(ListQuery("acme", limit=2, cursor=cursor))
        paged += [row.chat_id for row in found.conversations]
        cursor = found.next_cursor
        if cursor is None:
            break
    assert paged == everything
    assert _ids(view, tenant="globex", query="same") == ["theirs"]


def test_reset_empties_the_list_and_its_search(view: ReadModelView) -> None:
    key = uuid.uuid4()
    view.apply_page(
        _page({key: _summary(key, "acme", "c1", 0, "apples")}), Tracking(APP, 1), after=0
    )
    view.reset(APP)
    assert _ids(view, tenant="acme") == []
    assert _ids(view, tenant="acme", query="apples") == []
    view.apply_page(
        _page({key: _summary(key, "acme", "c1", 0, "pears")}), Tracking(APP, 1), after=0
    )
    assert _ids(view, tenant="acme", query="apples") == []
    assert _ids(view, tenant="acme", query="pears") == ["c1"]
