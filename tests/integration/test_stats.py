"""The overview's figures (``read_stats``): known conversations on SQLite and PostgreSQL give known numbers."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from chatledger import ConversationStore, InvalidInputError
from chatledger.adapters.store.stats import StatsCache, read_stats
from chatledger.adapters.store.store import ShardedStore
from tests.integration.conftest import Backend
from tests.integration.hitl_support import new_chat
from tests.integration.stats_support import NOW, Clock, seed, stamp_events
from tests.integration.test_shards import three_databases  # noqa: F401 (a fixture)


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    """Events stamped by a clock the test sets."""
    return stamp_events(monkeypatch)


def test_known_conversations_give_known_figures(durable_backend: Backend, clock: Clock) -> None:
    """Counts, rates, median and p90 decision times, queues, refusals and replays of one tenant."""
    store = durable_backend.open()
    seed(store, clock)
    calls: list[tuple[int, int]] = []

    stats = read_stats(
        store, tenant="acme", days=4, now=NOW, progress=lambda *call: calls.append(call)
    )

    assert (stats.tenant, stats.conversations, stats.streams) == ("acme", 4, 5)
    assert [(d.day, d.conversations, d.streams) for d in stats.days] == [
        (date(2026, 11, 1), 1, 2),
        (date(2026, 11, 2), 2, 2),
        (date(2026, 11, 3), 1, 1),
        (date(2026, 11, 4), 0, 0),
    ]
    assert (stats.decisions.approved, stats.decisions.denied) == (2, 1)
    assert stats.approval_rate == pytest.approx(2 / 3)
    assert stats.denial_rate == pytest.approx(1 / 3)
    assert {k: (v.approved, v.denied) for k, v in stats.by_tool.items()} == {
        "deleteFile": (2, 0),
        "sendPayment": (0, 1),
    }
    assert list(stats.by_actor) == ["user:bob", "user:alice"]  # most answers first
    assert {k: (v.approved, v.denied) for k, v in stats.by_actor.items()} == {
        "user:bob": (1, 1),
        "user:alice": (1, 0),
    }
    # Decisions took 60 s, 120 s and 300 s (a request's time is its batch's, less the chunk's
    # age in the batch: real milliseconds, so the figures are exact to within a second).
    assert stats.decision_median_seconds == pytest.approx(120, abs=1)
    assert stats.decision_p90_seconds == pytest.approx(264, abs=1)
    assert (stats.approvals_waiting.count, stats.approvals_waiting.oldest_seconds) == (1, 86400)
    # c's approval queued a continuation (a and b were answered with auto_continue=False).
    waiting = stats.continuations_waiting
    assert (waiting.count, waiting.oldest_seconds) == (1, 2 * 86400 - 120)
    assert (stats.refused_chunks, stats.replays) == (1, 5)
    assert calls[-1] == (4, 4) and len(calls) == 4


def test_each_tenant_sees_only_its_own(durable_backend: Backend, clock: Clock) -> None:
    """globex's figures hold its one denial; a tenant with nothing gets zeros and no rates."""
    store = durable_backend.open()
    seed(store, clock)

    theirs = read_stats(store, tenant="globex", now=NOW).to_json()
    empty = read_stats(store, tenant="initech", now=NOW)

    assert (theirs["conversations"], theirs["streams"]) == (1, 1)
    assert theirs["approvals"]["byActor"] == {"user:alice": {"approved": 0, "denied": 1}}
    assert theirs["approvals"][
        "decisionSeconds"
    ] == {  # within a second (a chunk's age in its batch)
        "median": pytest.approx(30, abs=1),
        "p90": pytest.approx(30, abs=1),
    }
    assert theirs["approvals"]["denialRate"] == 1.0
    assert theirs["continuations"]["waiting"]["count"] == 1
    assert (empty.conversations, empty.approval_rate, empty.decision_median_seconds) == (
        0,
        None,
        None,
    )
    assert len(empty.days) == 30 and empty.days[-1].day == NOW.date()


def test_a_window_outside_a_year_is_refused_naming_days(sqlite_store: ConversationStore) -> None:
    """``days`` is 1..366: a clear error, nothing read."""
    for days in (0, 367):
        with pytest.raises(InvalidInputError, match="days must be a whole number from 1 to 366"):
            read_stats(sqlite_store, days=days)


def test_a_cache_reads_the_conversations_again_only_after_new_events(
    durable_backend: Backend, clock: Clock
) -> None:
    """Unchanged log: no conversation is read, yet ages follow ``now``; a write by another store: read again."""
    store = durable_backend.open()
    seed(store, clock)
    cache = StatsCache()
    reads: list[tuple[int, int]] = []

    def count(*call: int) -> None:
        reads.append((call[0], call[1]))

    first = read_stats(store, tenant="acme", now=NOW, cache=cache, progress=count)
    assert reads[-1] == (4, 4)
    reads.clear()
    later = read_stats(
        store, tenant="acme", now=NOW + timedelta(hours=1), cache=cache, progress=count
    )
    assert reads == []  # nothing recorded since: the conversations were not read again
    assert later.approvals_waiting.oldest_seconds == first.approvals_waiting.oldest_seconds + 3600
    other = durable_backend.other_store(store)
    new_chat(other, "e", tenant="acme")

    after = read_stats(store, tenant="acme", now=NOW, cache=cache, progress=count)

    assert reads[-1] == (5, 5)
    assert after.conversations == first.conversations + 1


@pytest.mark.postgres
@pytest.mark.timeout(180)
def test_a_sharded_store_gives_the_same_figures(
    request: pytest.FixtureRequest, clock: Clock
) -> None:
    """Over three PostgreSQL databases the figures add up as over one."""
    store = ConversationStore.open(request.getfixturevalue("three_databases"))
    try:
        assert isinstance(store, ShardedStore)
        seed(store, clock)
        cache = StatsCache()

        stats = read_stats(store, tenant="acme", days=4, now=NOW, cache=cache).to_json()
        again = read_stats(store, tenant="acme", days=4, now=NOW, cache=cache).to_json()
    finally:
        store.close()

    assert (stats["conversations"], stats["streams"]) == (4, 5)
    # Exact within a second: a request's moment is its chunk's arrival (a real clock's ms
    # before the batch's stamped event), as the other stats tests allow.
    assert stats["approvals"]["decisionSeconds"] == {
        "median": pytest.approx(120, abs=1),
        "p90": pytest.approx(264, abs=1),
    }
    assert (stats["refusedChunks"], stats["replays"]) == (1, 5)
    assert stats["continuations"]["waiting"]["count"] == 1
    assert again == stats
