"""Known conversations for the overview's figures (``test_stats``, ``test_cli_stats``, ``test_http_stats``).

Event times are forced: every event is stamped by one clock the test moves
(``ConversationEvent.create_timestamp``), so the time from an approval's
request to its decision is exact.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from chatledger import ConversationStore
from chatledger.domain.events import ConversationEvent
from tests.integration.hitl_support import (
    ALICE,
    BOB,
    DELETE,
    WIRE,
    paused_turn,
    tool_input_chunks,
)

T0 = datetime(2026, 11, 1, 10, 0, tzinfo=UTC)
NOW = T0 + timedelta(days=3)


class Clock:
    """The time every new event is stamped with."""

    def __init__(self) -> None:
        self.now = T0

    def at(self, moment: datetime) -> None:
        self.now = moment


def stamp_events(monkeypatch: pytest.MonkeyPatch) -> Clock:
    """Stamp every new event with a clock the test sets (undone with ``monkeypatch``)."""
    moments = Clock()
    monkeypatch.setattr(ConversationEvent, "create_timestamp", staticmethod(lambda: moments.now))
    return moments


def seed(store: ConversationStore, clock: Clock, start: datetime = T0) -> None:
    """Tenant acme: three answered approvals, one waiting, one continuation queued, a replay
    and a refused chunk. Tenant globex: one denial (never counted for acme). Days from ``start``."""
    acme = {"tenant": "acme"}
    clock.at(start)
    paused_turn(store, "a", [DELETE], **acme)
    clock.at(start + timedelta(seconds=60))
    store.respond_to_approval(
        "a", approval_id=DELETE.approval_id, approved=True, actor=ALICE, auto_continue=False, **acme
    )
    # A provider replaying the call it already made (5 chunks caught), and a chunk refused.
    bad = {"type": "text-delta", "id": "nope", "delta": "x"}
    report = store.ingest(
        "a", [{"type": "start"}, *tool_input_chunks(DELETE), bad, {"type": "finish"}], **acme
    )
    assert (report.replays, len(report.refused)) == (5, 1)

    clock.at(start + timedelta(days=1))
    paused_turn(store, "b", [WIRE], **acme)
    paused_turn(store, "c", [DELETE], **acme)
    clock.at(start + timedelta(days=1, seconds=120))
    store.respond_to_approval("c", approval_id=DELETE.approval_id, approved=True, actor=BOB, **acme)
    clock.at(start + timedelta(days=1, seconds=300))
    store.respond_to_approval(
        "b", approval_id=WIRE.approval_id, approved=False, actor=BOB, auto_continue=False, **acme
    )

    clock.at(start + timedelta(days=2))
    paused_turn(store, "d", [WIRE], **acme)
    paused_turn(store, "theirs", [DELETE], tenant="globex")
    clock.at(start + timedelta(days=2, seconds=30))
    store.respond_to_approval(
        "theirs", approval_id=DELETE.approval_id, approved=False, actor=ALICE, tenant="globex"
    )
