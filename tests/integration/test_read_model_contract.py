"""The ``ReadModelView`` port's contract, run once per backend (in-memory SQLite, SQLite file, PostgreSQL).

The projector only relies on what these tests pin: a page and its tracking
position are written together or not at all, the position moves by
compare-and-set, a page replaces a conversation's approvals and continuation,
reads are tenant-scoped and ordered, and ``reset`` forgets everything.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from eventsourcing.persistence import IntegrityError, Tracking

from chatledger.domain.timeline import TimelineEntry
from chatledger.projections.read_models import (
    ContinuationRequest,
    ConversationRow,
    HistoryQuery,
    Page,
    PendingApproval,
    ReadModelView,
)
from tests.integration.conftest import Backend

APP = "chatledger"
T0 = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.fixture
def view(backend: Backend) -> ReadModelView:
    """The read models of a fresh store on each backend."""
    return backend.open().read_models


def _row(key: uuid.UUID, tenant: str, chat: str, version: int, text: str) -> ConversationRow:
    message = {"id": "u1", "role": "user", "parts": [{"type": "text", "text": text}]}
    return ConversationRow(key, tenant, chat, version, [message], "idle", T0)


def _entry(position: int, actor: str, kind: str) -> TimelineEntry:
    return TimelineEntry(
        position, T0 + timedelta(seconds=position), actor, kind, f"#{position}", {}
    )


def _approval(tenant: str, chat: str, call: str, minutes: int) -> PendingApproval:
    at = T0 + timedelta(minutes=minutes)
    return PendingApproval(tenant, chat, "a1", call, "rm", {"path": "/"}, f"ap-{call}", at)


def _page(**parts: Any) -> Page:
    page = Page(**parts)
    page.events = 1
    return page


def test_a_page_and_its_position_are_written_together(view: ReadModelView) -> None:
    key = uuid.uuid4()
    view.apply_page(
        _page(conversations={key: _row(key, "acme", "c1", 3, "hello")}), Tracking(APP, 5), after=0
    )
    row = view.conversation(key)
    assert row is not None and row.version == 3 and "hello" in row.messages_json
    assert view.max_tracking_id(APP) == 5
    assert view.conversation(uuid.uuid4()) is None


def test_a_stale_position_writes_nothing(view: ReadModelView) -> None:
    """Compare-and-set: a projector that lost a race applies nothing of its page."""
    key = uuid.uuid4()
    view.apply_page(
        _page(conversations={key: _row(key, "acme", "c1", 1, "one")}), Tracking(APP, 1), after=0
    )
    with pytest.raises(IntegrityError):
        view.apply_page(
            _page(conversations={key: _row(key, "acme", "c1", 2, "two")}), Tracking(APP, 2), after=0
        )
    row = view.conversation(key)
    assert row is not None and row.version == 1 and "two" not in row.messages_json
    assert view.max_tracking_id(APP) == 1


def test_history_filters_and_keeps_order(view: ReadModelView) -> None:
    key = uuid.uuid4()
    entries = [
        _entry(1, "user:alice", "conversation-started"),
        _entry(2, "user:alice", "message-appended"),
        _entry(3, "agent:bot", "stream-opened"),
        _entry(4, "user:bob", "message-appended"),
    ]
    view.apply_page(_page(timeline={key: entries}), Tracking(APP, 4), after=0)
    assert [e.position for e in view.history(key, HistoryQuery())] == [1, 2, 3, 4]
    kinds = HistoryQuery(kinds=["message-appended"])
    assert [e.position for e in view.history(key, kinds)] == [2, 4]
    assert [e.position for e in view.history(key, HistoryQuery(actor="user:alice"))] == [1, 2]
    assert [e.position for e in view.history(key, HistoryQuery(after=2, limit=1))] == [3]
    assert view.history(uuid.uuid4(), HistoryQuery()) == []


def test_approvals_are_per_tenant_oldest_first_and_replaced_by_a_later_page(
    view: ReadModelView,
) -> None:
    one, two, other = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
    view.apply_page(
        _page(
            approvals={
                one: [_approval("acme", "c1", "late", 5)],
                two: [_approval("acme", "c2", "early", 1)],
                other: [_approval("globex", "c3", "theirs", 0)],
            }
        ),
        Tracking(APP, 3),
        after=0,
    )
    assert [a.tool_call_id for a in view.pending_approvals("acme")] == ["early", "late"]
    assert [a.tool_call_id for a in view.pending_approvals("globex")] == ["theirs"]
    view.apply_page(_page(approvals={two: []}), Tracking(APP, 4), after=3)
    assert [a.tool_call_id for a in view.pending_approvals("acme")] == ["late"]


def test_a_page_replaces_or_removes_a_continuation(view: ReadModelView) -> None:
    key = uuid.uuid4()
    request = ContinuationRequest("acme", "c1", "cont-1", "a1", "denial of call_1", T0)
    view.apply_page(_page(continuations={key: request}), Tracking(APP, 1), after=0)
    assert [r.request_id for r in view.pending_continuations("acme")] == ["cont-1"]
    assert view.pending_continuations("globex") == []
    claimed = ContinuationRequest(
        "acme", "c1", "cont-1", "a1", "denial of call_1", T0, "w1", T0 + timedelta(minutes=1)
    )
    view.apply_page(_page(continuations={key: claimed}), Tracking(APP, 2), after=1)
    assert [r.claimed_by for r in view.pending_continuations("acme")] == ["w1"]
    view.apply_page(_page(continuations={key: None}), Tracking(APP, 3), after=2)
    assert view.pending_continuations("acme") == []


def test_reset_empties_every_read_model_and_forgets_the_position(view: ReadModelView) -> None:
    key = uuid.uuid4()
    view.apply_page(
        _page(
            conversations={key: _row(key, "acme", "c1", 1, "x")},
            timeline={key: [_entry(1, "a", "conversation-started")]},
            approvals={key: [_approval("acme", "c1", "call", 0)]},
        ),
        Tracking(APP, 1),
        after=0,
    )
    assert view.counts()["conversations"] == 1
    view.reset(APP)
    assert set(view.counts().values()) == {0}
    assert view.conversation(key) is None
    assert (view.max_tracking_id(APP) or 0) == 0
