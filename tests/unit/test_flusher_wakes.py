"""When the flusher's thread is woken: not at every stream opened while it still ticks, always
when it sleeps (fake members, a real thread)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator

import pytest

from chatledger.adapters.store.streams import flusher as flusher_module
from chatledger.adapters.store.streams.flusher import Flusher
from tests.unit.test_flusher import FakeMember, FakeUnitOfWork


class CountingCondition(threading.Condition):
    """A condition that counts its ``notify`` calls (each wakes the flusher's thread)."""

    notified = 0

    def notify(self, n: int = 1) -> None:
        self.notified += 1
        super().notify(n)


def _until(done: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + 10
    while not done():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.001)


@pytest.fixture
def counted() -> Iterator[tuple[Flusher, CountingCondition]]:
    flusher = Flusher(max_delay=600.0)  # ticks every 300 s: only wakes or due_at move it
    wake = CountingCondition()
    flusher._wake = wake
    yield flusher, wake
    flusher.stop()


def test_streams_opened_one_after_another_do_not_wake_a_ticking_thread(
    counted: tuple[Flusher, CountingCondition], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(flusher_module, "LINGER", 60.0)
    flusher, wake = counted
    uow = FakeUnitOfWork()
    for turn in range(5):  # turn after turn: each stream closed before the next opens
        member = FakeMember(f"turn-{turn}", uow, due=False)
        flusher.watch(member)
        flusher.unwatch(member)
    assert wake.notified == 0


def test_a_sleeping_thread_is_woken_by_the_next_stream_and_commits_it(
    counted: tuple[Flusher, CountingCondition], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(flusher_module, "LINGER", 0.0)
    flusher, wake = counted
    uow = FakeUnitOfWork()
    first = FakeMember("first", uow, due=False)
    flusher.watch(first)
    flusher.unwatch(first)
    _until(lambda: flusher._asleep, "the idle thread to sleep")
    flusher.watch(FakeMember("second", uow))
    _until(lambda: bool(uow.commits), "the woken thread to commit the new stream")
    assert wake.notified == 1
    assert uow.commits == [(["second-event"], [])]
