"""``Coalesced``: reads asked together run once, and a read never answers with what was read before it was asked."""

from __future__ import annotations

import asyncio

import pytest

from chatledger.adapters.store.reads.coalesce import Coalesced


async def _burst() -> None:
    coalesced: Coalesced[str, int] = Coalesced()
    value = 1
    held = asyncio.Event()
    release = asyncio.Event()

    async def read() -> int:
        seen = value
        if not held.is_set():  # the first run is held until the others have asked
            held.set()
            await release.wait()
        return seen

    first = asyncio.create_task(coalesced("chat", read))
    await held.wait()  # the first run has read its value: asked later, the others get a later one
    value = 2
    others = [asyncio.create_task(coalesced("chat", read)) for _ in range(49)]
    await asyncio.sleep(0)  # every other asker has asked (each runs until it awaits)
    assert coalesced.runs == 1
    release.set()
    assert await first == 1
    assert await asyncio.gather(*others) == [2] * 49  # one more run for all, after they asked
    assert coalesced.runs == 2
    assert await coalesced("other", read) == 2
    assert coalesced.runs == 3


async def _failure() -> None:
    coalesced: Coalesced[str, int] = Coalesced()

    async def broken() -> int:
        raise ValueError("unreadable")

    asks = [asyncio.create_task(coalesced("chat", broken)) for _ in range(3)]
    results = await asyncio.gather(*asks, return_exceptions=True)
    assert all(isinstance(each, ValueError) for each in results)
    assert coalesced.runs == 1


def test_reads_asked_together_run_once_and_never_stale() -> None:
    asyncio.run(_burst())


def test_a_failed_read_fails_every_asker_of_its_run() -> None:
    asyncio.run(_failure())
    with pytest.raises(ValueError):
        asyncio.run(Coalesced[str, int]()("chat", _raise))


async def _raise() -> int:
    raise ValueError("unreadable")
