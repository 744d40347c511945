"""Stream leases without a store: given a conversation's events and ``now``, is its stream's lease expired?

The lease runs from the stream's last event (its open, a chunk batch, a
renewal) for the length recorded when it opened; ``now`` is always given, so
every interleaving is decided here without waiting.
"""

from __future__ import annotations

import math
from datetime import timedelta

import pytest

from chatledger.domain.aggregate import Conversation
from chatledger.domain.conversation import ConversationState
from chatledger.domain.errors import NoOpenStreamError, StoreConfigurationError
from chatledger.domain.events import StreamClosed, StreamRenewed
from chatledger.domain.lease import (
    DEFAULT_STREAM_LEASE_SECONDS,
    check_lease_seconds,
    lease_deadline,
    lease_expired,
    renew_every,
)
from chatledger.domain.limits import Limits
from chatledger.domain.snapshot import ConversationSnapshot
from chatledger.domain.timeline import KINDS, describe

LIMITS = Limits()


def _opened(lease: float | None = 10.0) -> Conversation:
    """A conversation whose stream ``s1`` (by agent:bot) is open, with one committed batch."""
    conversation = Conversation.start("t", "c", actor="user:alice", ai_sdk=7)
    conversation.open_stream(
        "s1", "a1", continuation=False, trigger="submit-message", actor="agent:bot",
        lease_seconds=lease,
    )  # fmt: skip
    conversation.receive("s1", {"type": "start"}, limits=LIMITS)
    conversation.flush()
    return conversation


def _replayed(conversation: Conversation) -> Conversation:
    """The conversation as loading its events again rebuilds it."""
    events = conversation.collect_events()
    rebuilt = None
    for event in events:
        rebuilt = event.mutate(rebuilt)
    assert isinstance(rebuilt, Conversation)
    return rebuilt


def test_the_lease_runs_from_the_streams_last_event() -> None:
    conversation = _opened(lease=10.0)
    batch = conversation.pending_events[-1]
    stream = conversation.state.stream
    assert stream is not None
    assert stream.renewed_at == batch.timestamp  # the batch renewed it, not only the open
    assert lease_deadline(stream, 99.0) == batch.timestamp + timedelta(seconds=10)
    assert not lease_expired(stream, batch.timestamp + timedelta(seconds=10), 99.0)
    assert lease_expired(stream, batch.timestamp + timedelta(seconds=10, microseconds=1), 99.0)


def test_a_renewal_moves_the_lease_on_and_replays_the_same() -> None:
    conversation = _opened(lease=10.0)
    conversation.renew_stream("s1")
    renewal = conversation.pending_events[-1]
    assert isinstance(renewal, StreamRenewed)
    assert renewal.actor == "agent:bot"  # the writer renews its own stream
    later = renewal.timestamp + timedelta(seconds=9)
    rebuilt = _replayed(conversation)
    assert rebuilt.state.stream is not None
    assert rebuilt.state.stream.renewed_at == renewal.timestamp
    assert not lease_expired(rebuilt.state.stream, later, DEFAULT_STREAM_LEASE_SECONDS)
    with pytest.raises(NoOpenStreamError):
        conversation.renew_stream("another")


def test_an_expired_stream_is_closed_as_interrupted_with_who_and_why() -> None:
    conversation = _opened(lease=10.0)
    stream = conversation.state.stream
    assert stream is not None and stream.renewed_at is not None
    before = stream.renewed_at + timedelta(seconds=5)
    after = stream.renewed_at + timedelta(seconds=11)
    options = {"default_lease_seconds": 30.0, "actor": "chatledger:h:1", "noticed_by": "a test"}
    assert not conversation.expire_stream(now=before, **options)
    assert not conversation.expire_stream(now=after, stream_id="s-other", **options)
    assert conversation.expire_stream(now=after, **options)
    closed = conversation.pending_events[-1]
    assert isinstance(closed, StreamClosed)
    assert (closed.outcome, closed.actor) == ("interrupted", "chatledger:h:1")
    assert closed.reason is not None
    assert closed.reason.startswith("lease expired: its writer agent:bot wrote nothing for 11.0 s")
    assert "lease 10 s; noticed by a test" in closed.reason
    assert conversation.state.stream is None
    assert not conversation.expire_stream(now=after, **options)  # nothing left to close


def test_a_stream_opened_before_leases_has_the_judges_default() -> None:
    conversation = _opened(lease=None)
    stream = conversation.state.stream
    assert stream is not None and stream.renewed_at is not None
    moment = stream.renewed_at + timedelta(seconds=20)
    assert lease_expired(stream, moment, default_seconds=15.0)
    assert not lease_expired(stream, moment, default_seconds=30.0)


def test_snapshots_keep_the_lease() -> None:
    conversation = _opened(lease=7.5)
    state = conversation.state
    assert state.stream is not None
    restored = ConversationState.from_json(state.to_json())
    assert restored.stream is not None
    assert restored.stream.renewed_at == state.stream.renewed_at
    assert restored.stream.lease_seconds == 7.5


def test_a_snapshot_taken_before_leases_runs_the_lease_from_its_last_event() -> None:
    conversation = _opened(lease=None)
    snapshot = ConversationSnapshot.take(conversation)
    stream_json = snapshot.state["conversation"]["stream"]
    del stream_json["renewedAt"]  # as snapshots written before leases were
    loaded = snapshot.mutate(None)
    assert loaded.state.stream is not None
    assert loaded.state.stream.renewed_at == conversation.modified_on


def test_the_timeline_names_a_renewal() -> None:
    conversation = _opened()
    before = ConversationState.from_json(conversation.state.to_json())
    conversation.renew_stream("s1")
    entry = describe(conversation.pending_events[-1], before)
    assert entry.kind == "stream-renewed" and entry.kind in KINDS
    assert entry.actor == "agent:bot"
    assert "s1" in entry.summary


def test_an_idle_writer_renews_after_a_third_of_its_lease() -> None:
    assert renew_every(30.0) == 10.0


@pytest.mark.parametrize("bad", [0, -1, math.nan, math.inf, "30", True, None])
def test_a_lease_must_be_positive_seconds(bad: object) -> None:
    with pytest.raises(StoreConfigurationError, match="--lease"):
        check_lease_seconds(bad, "--lease")
    assert check_lease_seconds(0.5) == 0.5
