"""Ingest measurement: the whole workload written through ``ConversationStore`` at default batching.

Only the store calls are timed: each conversation is generated before its clock
starts, so the workload generator's cost is not counted.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass

from progress import log
from storeapi import AGENT_ACTOR, USER_ACTOR, Store, StoreOpener
from workload import Conversation, Turn


@dataclass(frozen=True)
class IngestResult:
    """How long writing ``chunks`` chunks (in ``turns`` turns) took."""

    chunks: int
    turns: int
    seconds: float
    open_seconds: float = 0.0
    commits: int = 0
    """Transactions committed (raw baselines only; the store does not say)."""

    @property
    def chunks_per_s(self) -> float:
        """Throughput: assistant stream chunks per second."""
        return self.chunks / self.seconds if self.seconds else 0.0


def write_turn(store: Store, chat_id: str, turn: Turn) -> None:
    """The user message, then the assistant reply streamed chunk by chunk."""
    store.append_message(chat_id, turn.user_message, actor=USER_ACTOR)
    stream = store.open_stream(chat_id, actor=AGENT_ACTOR)
    for chunk in turn.chunks:
        stream.append(chunk)
    stream.close(outcome="finished")


def write_conversation(store: Store, conv: Conversation) -> None:
    """Start the conversation and write all its turns."""
    store.start_conversation(conv.chat_id, actor=USER_ACTOR)
    for turn in conv.turns:
        write_turn(store, conv.chat_id, turn)


def ingest_store(opener: StoreOpener, url: str, convs: Iterable[Conversation]) -> IngestResult:
    """Open a store at ``url``, write every conversation, close it; time the writes and close."""
    started = time.perf_counter()
    store = opener(url)
    open_seconds = time.perf_counter() - started
    busy, chunks, turns = 0.0, 0, 0
    try:
        for n, conv in enumerate(convs, 1):
            t0 = time.perf_counter()
            write_conversation(store, conv)
            busy += time.perf_counter() - t0
            chunks += conv.chunk_count
            turns += len(conv.turns)
            if n % 25 == 0:
                log(f"  store: {n} conversations, {chunks / busy:,.0f} chunks/s so far")
    finally:
        t0 = time.perf_counter()
        store.close()
        busy += time.perf_counter() - t0
    return IngestResult(chunks, turns, busy, open_seconds)
