"""``Outbox.wait``: the keep-alive timeout of an answer's client, on a loop whose clock the test moves."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

import pytest

from chatledger.adapters.store.turns.outbox import Outbox

pytestmark = pytest.mark.timeout(30)


class _ClockedLoop(asyncio.SelectorEventLoop):
    """An event loop whose clock moves only when the test moves it; counts the timers set."""

    def __init__(self) -> None:
        super().__init__()
        self.now = 1000.0
        self.timers = 0

    def time(self) -> float:
        return self.now

    def call_at(self, when: float, callback: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        self.timers += 1
        return super().call_at(when, callback, *args, **kwargs)


def _run(test: Callable[[_ClockedLoop], Coroutine[Any, Any, None]]) -> None:
    loop = _ClockedLoop()
    try:
        loop.run_until_complete(test(loop))
    finally:
        loop.close()


async def _turns(n: int = 5) -> None:
    """Let the loop run what is ready (and the timers due now) a few times."""
    for _ in range(n):
        await asyncio.sleep(0)


def test_a_quiet_wait_gives_up_after_its_timeout() -> None:
    async def test(loop: _ClockedLoop) -> None:
        outbox = Outbox()
        waiting = asyncio.ensure_future(outbox.wait(10))
        await _turns()
        loop.now += 9.9
        await _turns()
        assert not waiting.done()
        loop.now += 0.1
        await _turns()
        assert waiting.done() and waiting.result() is False
        outbox.put({"type": "text-delta"})  # then a chunk: the next wait has it at once
        assert await outbox.wait(10) is True
        assert outbox.take() == [{"type": "text-delta"}]

    _run(test)


def test_chunks_meanwhile_push_the_timeout_back() -> None:
    """The timeout counts from the start of each wait, not from the first."""

    async def test(loop: _ClockedLoop) -> None:
        outbox = Outbox()
        waiting = asyncio.ensure_future(outbox.wait(10))
        await _turns()
        loop.now += 6
        outbox.put("a")
        await _turns()
        assert waiting.result() is True and outbox.take() == ["a"]
        waiting = asyncio.ensure_future(outbox.wait(10))  # due at +16
        await _turns()
        loop.now += 4  # +10: the first wait's moment
        await _turns()
        assert not waiting.done()
        loop.now += 5.9
        await _turns()
        assert not waiting.done()
        loop.now += 0.1
        await _turns()
        assert waiting.result() is False

    _run(test)


def test_the_end_and_a_late_chunk_still_wake_the_wait() -> None:
    async def test(loop: _ClockedLoop) -> None:
        outbox = Outbox()
        waiting = asyncio.ensure_future(outbox.wait(10))
        await _turns()
        loop.now += 10
        outbox.put("late")  # comes as the alarm rings: the wait has it
        await _turns()
        assert waiting.result() is True and outbox.take() == ["late"]
        waiting = asyncio.ensure_future(outbox.wait(10))
        await _turns()
        outbox.end()
        await _turns()
        assert waiting.result() is True and outbox.ended

    _run(test)


def test_a_chunk_at_a_time_sets_no_timer_per_wait() -> None:
    """A client waits once per chunk: one alarm serves them all (a timer each cost more than
    the wait)."""

    async def test(loop: _ClockedLoop) -> None:
        outbox = Outbox()
        loop.timers = 0
        for i in range(200):
            waiting = asyncio.ensure_future(outbox.wait(15))
            await _turns(2)
            loop.now += 0.02
            outbox.put(i)
            assert await waiting is True
            assert outbox.take() == [i]
        assert loop.timers <= 2

    _run(test)
