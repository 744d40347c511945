"""Writing one model response into the store: chunks folded at once, committed in batches."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import Any

from chatledger.domain.aggregate import Conversation, ReceivedChunk, is_boundary
from chatledger.domain.errors import ConcurrentWriteError, NoOpenStreamError
from chatledger.domain.limits import Limits

__all__ = ["BatchPolicy", "StreamWriter"]


class BatchPolicy:
    """When buffered chunks are committed: by count, by age, and at boundary chunks (SPEC §7)."""

    def __init__(self, max_chunks: int = 64, max_delay: float = 0.05) -> None:
        if max_chunks < 1 or max_delay < 0:
            raise ValueError("batching needs max_chunks >= 1 and max_delay >= 0")
        self.max_chunks = max_chunks
        self.max_delay = max_delay


class StreamWriter:
    """An open stream on a conversation. Use it as a context manager, or call ``close()``.

    ``append()`` folds the chunk immediately (a bad chunk is refused right
    there) and commits when the batch is full, when its oldest chunk is
    ``max_delay`` old (a timer also fires when the model goes quiet), and at
    once after a boundary chunk. The writer takes ownership of the chunk
    objects given to it. It is safe to use from several threads.
    """

    def __init__(
        self,
        conversation: Conversation,
        stream_id: str,
        *,
        actor: str,
        limits: Limits,
        policy: BatchPolicy,
        commit: Callable[[Conversation], None],
        reload: Callable[[], Conversation],
    ) -> None:
        self.stream_id = stream_id
        self.message_id: str = conversation.state.messages[-1]["id"]
        self.actor = actor
        self._conversation = conversation
        self._limits = limits
        self._policy = policy
        self._commit = commit
        self._reload = reload
        self._lock = threading.RLock()
        self._unsaved: list[Any] = []
        self._oldest: float = 0.0
        self._timer: threading.Timer | None = None
        self.closed = False

    @property
    def conversation(self) -> Conversation:
        """The in-memory conversation this stream writes to."""
        return self._conversation

    def append(self, chunk: Any) -> ReceivedChunk:
        """Receive one chunk; returns its position and verdict (refusals are not raised)."""
        with self._lock:
            if self.closed:
                raise NoOpenStreamError(self._conversation.state.chat_id, self.stream_id)
            received = self._conversation.receive(self.stream_id, chunk, limits=self._limits)
            self._unsaved.append(chunk)
            now = time.monotonic()
            if len(self._unsaved) == 1:
                self._oldest = now
                self._arm_timer()
            if (
                len(self._unsaved) >= self._policy.max_chunks
                or now - self._oldest >= self._policy.max_delay
                or is_boundary(chunk)
            ):
                self.flush()
            return received

    def flush(self) -> None:
        """Commit the buffered chunks now (one event, one transaction)."""
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            if not self._unsaved:
                return
            self._save(lambda conversation: conversation.flush())
            self._unsaved = []

    def close(self, outcome: str = "finished", reason: str | None = None) -> None:
        """Commit what is left and record how the stream ended."""
        with self._lock:
            if self.closed:
                return
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            self._save(
                lambda conversation: conversation.close_stream(
                    self.stream_id, outcome, reason, actor=self.actor
                )
            )
            self._unsaved = []
            self.closed = True

    def _save(self, record: Callable[[Conversation], None]) -> None:
        """Record and commit; if another writer got in first, reload and re-apply the batch."""
        for _attempt in range(5):
            record(self._conversation)
            try:
                self._commit(self._conversation)
                return
            except ConcurrentWriteError:
                self._conversation = self._reload()
                for chunk in self._unsaved:
                    self._conversation.receive(self.stream_id, chunk, limits=self._limits)
        raise ConcurrentWriteError(self._conversation.state.chat_id)

    def _arm_timer(self) -> None:
        if self._policy.max_delay <= 0:
            return
        timer = threading.Timer(self._policy.max_delay, self._flush_quietly)
        timer.daemon = True
        self._timer = timer
        timer.start()

    def _flush_quietly(self) -> None:
        """Timer: the model went quiet, commit what arrived. Errors surface on the next call."""
        try:
            self.flush()
        except Exception:  # noqa: BLE001, S110 - the writer's next call reports the problem
            pass

    def __enter__(self) -> StreamWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if exc is None:
            self.close("finished")
        elif isinstance(exc, (KeyboardInterrupt, GeneratorExit)):
            self.close("aborted", f"{type(exc).__name__}")
        else:
            self.close("errored", f"{type(exc).__name__}: {exc}")
