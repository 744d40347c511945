"""The flusher's group commit, over fake members and fake units of work (no database, no thread).

Each flusher here is stopped before its first ``watch``, so it starts no
thread: a tick happens only when a test calls ``commit_due``.
"""

from __future__ import annotations

import uuid
from typing import Any

from chatledger.adapters.store.streams.flusher import RECHECK, Flusher, GroupMember, Taken
from chatledger.domain.errors import ConcurrentWriteError


class FakeUnitOfWork:
    """Records every ``commit_many``; raises ConcurrentWriteError when told to fail."""

    def __init__(self, *, fails: bool = False) -> None:
        self.fails = fails
        self.commits: list[tuple[list[Any], list[Any]]] = []

    def commit_many(self, events: list[Any], snapshots: list[Any] | None = None, /) -> None:
        self.commits.append((list(events), list(snapshots or [])))
        if self.fails:
            raise ConcurrentWriteError("chat")


class FakeMember:
    """A ``GroupMember`` that says what it is asked; due (one event) unless told otherwise."""

    def __init__(
        self,
        name: str,
        unit_of_work: FakeUnitOfWork,
        *,
        due: bool = True,
        busy: bool = False,
        join_raises: bool = False,
        settles_at: float | None = None,
        snapshot: Any = None,
        due_at: float | None = None,
    ) -> None:
        self.name = name
        self.key = uuid.uuid4()
        self.unit_of_work = unit_of_work
        self.due = due
        self.busy = busy
        self.join_raises = join_raises
        self.settles_at = settles_at
        self.snapshot = snapshot
        self.due_at = due_at
        """When its buffered batch is due (then ``due`` is ignored): it joins a group due at
        ``now`` if ``now + ahead`` reaches it, as ``StreamWriter.join_group`` decides."""
        self.held = False
        self.calls: list[str] = []

    def try_hold(self) -> bool:
        self.calls.append("try_hold")
        if self.busy:
            return False
        assert not self.held
        self.held = True
        return True

    def release(self) -> None:
        assert self.held
        self.held = False
        self.calls.append("release")

    def join_group(self, now: float, ahead: float) -> tuple[Taken | None, float | None]:
        assert self.held, "joined without holding the member"
        self.calls.append("join_group")
        if self.join_raises:
            raise RuntimeError("the fold failed")
        if self.due_at is not None:
            if now + ahead < self.due_at:
                return None, self.due_at
            self.due_at = None
            return Taken([f"{self.name}-event"], self.snapshot), None
        if not self.due:
            return None, self.settles_at
        return Taken([f"{self.name}-event"], self.snapshot), None

    def mark_stale(self) -> None:
        assert self.held, "marked without holding the member"
        self.calls.append("mark_stale")

    def group_committed(self) -> None:
        self.calls.append("group_committed")

    def group_failed(self) -> None:
        self.calls.append("group_failed")

    def flush_if_due(self, now: float | None = None) -> float | None:
        self.calls.append("flush_if_due")
        return self.settles_at

    def settle(self) -> None:
        self.calls.append("settle")


def _flusher(*members: GroupMember) -> Flusher:
    """A flusher without its thread, watching ``members``."""
    flusher = Flusher(max_delay=600.0)
    flusher.stop()  # before the first watch: no thread is started
    for member in members:
        flusher.watch(member)
    return flusher


def _events(commit: tuple[list[Any], list[Any]]) -> set[Any]:
    return set(commit[0])


def test_due_members_are_committed_together_in_one_commit_many() -> None:
    """One tick: every due member's events (and snapshots) in ONE commit, each member told so;
    a member with nothing due is neither committed nor told."""
    uow = FakeUnitOfWork()
    a, b = FakeMember("a", uow), FakeMember("b", uow, snapshot="b-snapshot")
    idle = FakeMember("idle", uow, due=False)
    _flusher(a, b, idle).commit_due()
    assert len(uow.commits) == 1
    assert _events(uow.commits[0]) == {"a-event", "b-event"}
    assert uow.commits[0][1] == ["b-snapshot"]
    assert a.calls == b.calls == ["try_hold", "join_group", "release", "group_committed"]
    assert idle.calls == ["try_hold", "join_group", "release"]


def test_a_member_busy_in_a_call_of_its_own_is_skipped_not_waited_for() -> None:
    """A member whose lock is taken is left to its own call: not joined, not committed; the
    others are committed without it."""
    uow = FakeUnitOfWork()
    busy, free = FakeMember("busy", uow, busy=True), FakeMember("free", uow)
    _flusher(busy, free).commit_due()
    assert busy.calls == ["try_hold"]
    assert [_events(commit) for commit in uow.commits] == [{"free-event"}]
    assert free.calls[-1] == "group_committed"


def test_a_failing_group_makes_each_member_commit_on_its_own() -> None:
    """The group's transaction fails: every member is told (and commits through its own path),
    none is told it committed."""
    uow = FakeUnitOfWork(fails=True)
    a, b = FakeMember("a", uow), FakeMember("b", uow)
    _flusher(a, b).commit_due()
    assert len(uow.commits) == 1  # tried once, together
    for member in (a, b):
        assert member.calls == ["try_hold", "join_group", "release", "group_failed"]


def test_a_member_whose_join_raised_is_marked_for_reload() -> None:
    """A join that raises marks the member for reload while it is still held, releases it, and
    costs the other members nothing."""
    uow = FakeUnitOfWork()
    broken, fine = FakeMember("broken", uow, join_raises=True), FakeMember("fine", uow)
    _flusher(broken, fine).commit_due()
    assert broken.calls == ["try_hold", "join_group", "mark_stale", "release"]
    assert [_events(commit) for commit in uow.commits] == [{"fine-event"}]
    assert fine.calls[-1] == "group_committed"


def test_members_of_different_units_of_work_commit_separately() -> None:
    """One transaction per unit of work; one that fails fails only its own members."""
    good, bad = FakeUnitOfWork(), FakeUnitOfWork(fails=True)
    g1, g2 = FakeMember("g1", good), FakeMember("g2", good)
    b1, b2 = FakeMember("b1", bad), FakeMember("b2", bad)
    _flusher(g1, b1, g2, b2).commit_due()
    assert [_events(commit) for commit in good.commits] == [{"g1-event", "g2-event"}]
    assert [_events(commit) for commit in bad.commits] == [{"b1-event", "b2-event"}]
    assert {g1.calls[-1], g2.calls[-1]} == {"group_committed"}
    assert {b1.calls[-1], b2.calls[-1]} == {"group_failed"}


def test_a_tick_returns_when_the_earliest_boundary_still_settling_is_due() -> None:
    """Members not due yet say when their boundary settles; the tick returns the earliest."""
    uow = FakeUnitOfWork()
    later = FakeMember("later", uow, due=False, settles_at=20.0)
    sooner = FakeMember("sooner", uow, due=False, settles_at=10.0)
    assert _flusher(later, sooner).commit_due(now=5.0) == 10.0
    assert uow.commits == []


def test_without_group_commit_each_member_commits_alone() -> None:
    """``group = False``: every member flushes on its own; nothing is committed as a group."""
    uow = FakeUnitOfWork()
    a, b = FakeMember("a", uow), FakeMember("b", uow)
    flusher = _flusher(a, b)
    flusher.group = False
    flusher.commit_due()
    assert a.calls == b.calls == ["flush_if_due"]
    assert uow.commits == []


def test_settle_asks_only_the_members_of_that_conversation() -> None:
    """Read-your-writes: settling a conversation settles its writers, and no others."""
    uow = FakeUnitOfWork()
    mine, other = FakeMember("mine", uow), FakeMember("other", uow)
    flusher = _flusher(mine, other)
    flusher.settle(mine.key)
    assert (mine.calls, other.calls) == (["settle"], [])
    assert flusher.writes(mine.key)
    flusher.unwatch(mine)
    assert not flusher.writes(mine.key)


def test_a_tick_takes_no_batch_before_one_is_due_then_every_buffered_one() -> None:
    """A batch is taken when it is due, not a tick early (its chunks would wait less than the
    policy allows, one transaction more per stream); once one is due, every batch buffered
    joins it (one transaction, the streams due together next time); a tick returns when the
    first is due, for the thread to wake then."""
    uow = FakeUnitOfWork()
    first, later = FakeMember("first", uow, due_at=10.0), FakeMember("later", uow, due_at=30.0)
    idle = FakeMember("idle", uow, due=False)
    flusher = _flusher(first, later, idle)
    assert flusher.commit_due(now=9.0) == 10.0
    assert uow.commits == []
    assert flusher.commit_due(now=10.0) is None
    assert [_events(commit) for commit in uow.commits] == [{"first-event", "later-event"}]
    assert "group_committed" not in idle.calls


def test_a_busy_member_is_checked_again_soon() -> None:
    """A member busy at a tick may buffer a batch due before the next tick: the tick asks to
    be woken again ``RECHECK`` of ``max_delay`` later."""
    busy = FakeMember("busy", FakeUnitOfWork(), busy=True)
    assert _flusher(busy).commit_due(now=5.0) == 5.0 + 600.0 * RECHECK
