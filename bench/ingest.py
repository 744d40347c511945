"""Ingest measurement: the whole workload written through ``ConversationStore`` at default batching.

Only the store calls are timed: each conversation is generated before its clock
starts, so the workload generator's cost is not counted.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

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
    """Transactions committed (the store's: counted from its log's ``record`` calls)."""
    points: list[list[int]] = field(default_factory=list)
    """The store's commit points, per turn in write order: how many of the turn's chunks had
    been appended at each commit (0: the user message with the stream open). The raw
    baseline "at the store's commit points" commits exactly there."""

    @property
    def chunks_per_s(self) -> float:
        """Throughput: assistant stream chunks per second."""
        return self.chunks / self.seconds if self.seconds else 0.0


class CommitPoints:
    """Counts the store's commits and notes where in each turn they fell (see ``IngestResult.points``).

    Wraps the store's ``log.record`` (one call per transaction); a store without
    one is written as usual and reports no points.
    """

    def __init__(self, store: Any) -> None:
        self.appended = 0
        """Chunks of the current turn appended so far (``write_turn`` keeps it)."""
        self.turns: list[list[int]] = []
        self.commits = 0
        self._in_turn = False
        log_ = getattr(store, "log", None)
        record = getattr(log_, "record", None)
        if record is None:
            return

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.commits += 1
            if self._in_turn:
                self.turns[-1].append(self.appended)
            return record(*args, **kwargs)

        log_.record = counted  # type: ignore[union-attr]

    def start_turn(self) -> None:
        self.appended = 0
        self.turns.append([])
        self._in_turn = True

    def end_turn(self) -> None:
        self._in_turn = False


def write_turn(store: Store, chat_id: str, turn: Turn, points: CommitPoints | None = None) -> None:
    """The user message with the stream open (one call), then the reply streamed chunk by chunk."""
    if points is not None:
        points.start_turn()
    stream = store.open_stream(
        chat_id, actor=AGENT_ACTOR, user_message=turn.user_message, user_actor=USER_ACTOR
    )
    for chunk in turn.chunks:
        stream.append(chunk)
        if points is not None:
            points.appended += 1
    stream.close(outcome="finished")
    if points is not None:
        points.end_turn()


def write_conversation(
    store: Store, conv: Conversation, points: CommitPoints | None = None
) -> None:
    """Start the conversation and write all its turns."""
    store.start_conversation(conv.chat_id, actor=USER_ACTOR)
    for turn in conv.turns:
        write_turn(store, conv.chat_id, turn, points)


def ingest_store(opener: StoreOpener, url: str, convs: Iterable[Conversation]) -> IngestResult:
    """Open a store at ``url``, write every conversation, close it; time the writes and close."""
    started = time.perf_counter()
    store = opener(url)
    open_seconds = time.perf_counter() - started
    points = CommitPoints(store)
    busy, chunks, turns = 0.0, 0, 0
    try:
        for n, conv in enumerate(convs, 1):
            t0 = time.perf_counter()
            write_conversation(store, conv, points)
            busy += time.perf_counter() - t0
            chunks += conv.chunk_count
            turns += len(conv.turns)
            if n % 25 == 0:
                log(f"  store: {n} conversations, {chunks / busy:,.0f} chunks/s so far")
    finally:
        t0 = time.perf_counter()
        store.close()
        busy += time.perf_counter() - t0
    return IngestResult(chunks, turns, busy, open_seconds, points.commits, points.turns)
