"""Load measurement: how long ``store.messages(chat_id)`` takes, on a fresh store and on a warm one.

*Fresh*: each call on a newly opened store (the open is timed apart and not
counted). *Warm*: one open store that has already loaded every sampled chat
once. Each result is checked against the workload (see verify.py), outside
the timed calls.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from storeapi import StoreOpener
from verify import problems
from workload import Conversation


@dataclass(frozen=True)
class LoadResult:
    """Timings in milliseconds for loading conversations of ``chunks`` chunk events each."""

    label: str
    chunks: int
    turns: int
    fresh_ms: list[float] = field(default_factory=list)
    warm_ms: list[float] = field(default_factory=list)
    open_ms: list[float] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def _ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000


def measure_load(
    opener: StoreOpener,
    url: str,
    convs: list[Conversation],
    *,
    label: str,
    fresh_calls: int,
    warm_calls: int,
) -> LoadResult:
    """Time ``messages()`` over ``convs`` (already written at ``url``), cycling through them."""
    result = LoadResult(label, convs[0].chunk_count, len(convs[0].turns))
    for i in range(fresh_calls):
        conv = convs[i % len(convs)]
        t0 = time.perf_counter()
        store = opener(url)
        result.open_ms.append(_ms(t0))
        try:
            t0 = time.perf_counter()
            messages = store.messages(conv.chat_id)
            result.fresh_ms.append(_ms(t0))
        finally:
            store.close()
        if i < len(convs):
            result.problems.extend(problems(messages, conv))
    store = opener(url)
    try:
        for conv in convs:
            result.problems.extend(problems(store.messages(conv.chat_id), conv))
        for i in range(warm_calls):
            chat_id = convs[i % len(convs)].chat_id
            t0 = time.perf_counter()
            store.messages(chat_id)
            result.warm_ms.append(_ms(t0))
    finally:
        store.close()
    result.problems[:] = list(dict.fromkeys(result.problems))[:5]
    return result
