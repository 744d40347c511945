"""How a stream writer's commits reach the log, and what it does when one cannot.

``StreamCommitter`` holds a writer's state (its in-memory conversation, the
chunks folded but not committed, a pending open, the lease clock) and its one
commit path: record, commit through the unit of work, and on a version clash
reload the conversation, decide a pending open again (``PendingOpen.again``),
fold the buffered chunks again and retry. A stream closed elsewhere meanwhile
ends the writer. ``StreamWriter`` (``writer.py``) builds on it and decides
when to commit.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from functools import cached_property
from typing import Any

from chatledger.adapters.store.reads.live_stream import LiveStream
from chatledger.adapters.store.streams.flusher import Flusher, GroupMember
from chatledger.adapters.store.streams.pending_open import PendingOpen
from chatledger.adapters.store.streams.policy import BatchPolicy
from chatledger.adapters.store.unit_of_work import UnitOfWork, attempts
from chatledger.domain.aggregate import Conversation, conversation_id
from chatledger.domain.delivery import resumed
from chatledger.domain.errors import ConcurrentWriteError, NoOpenStreamError
from chatledger.domain.lease import DEFAULT_STREAM_LEASE_SECONDS, renew_every
from chatledger.domain.limits import Limits

__all__ = ["StreamCommitter"]


class StreamCommitter(GroupMember):
    """A stream writer's state and its commit path (see the module docstring).

    It is the ``GroupMember`` the flusher watches from the moment it is
    built; ``StreamWriter`` supplies the member's side of the group commit.
    Its private methods run under ``_lock``, which the caller holds.
    """

    def __init__(
        self,
        conversation: Conversation,
        stream_id: str,
        *,
        actor: str,
        limits: Limits,
        policy: BatchPolicy,
        flusher: Flusher,
        unit_of_work: UnitOfWork,
        lease_seconds: float = DEFAULT_STREAM_LEASE_SECONDS,
        open: PendingOpen | None = None,
    ) -> None:
        self.stream_id = stream_id
        assert conversation.state.stream is not None
        self.key = conversation_id(conversation.state.tenant, conversation.state.chat_id)
        """The conversation's id in the log."""
        self._message_index = conversation.state.stream.message_index
        self.actor = actor
        self._conversation = conversation
        self._limits = limits
        self._policy = policy
        self._uow = unit_of_work
        self._lock = threading.RLock()
        self._unsaved: list[Any] = []
        self._oldest: float = 0.0
        self._settles_at: float | None = None
        """Set while the buffered batch ends with a boundary chunk: when the timer commits it."""
        self._flusher = flusher
        self._stale = False
        self._renew_every = renew_every(lease_seconds)
        self._committed_at = time.monotonic()
        """When this writer last committed (the open just did): its lease runs from there."""
        self.closed = False
        self._unreported_end = False
        """The flusher found the stream closed elsewhere; the caller's next call must say so."""
        self._end: NoOpenStreamError | None = None
        """Why the writer ended without its own close (raised by its later calls)."""
        self._open = open
        """The stream's open while it is not committed (None once it is)."""
        self._open_due = 0.0
        """When the flusher commits the pending open (and what was buffered since)."""
        flusher.watch(self)
        if open is not None:
            self._open_due = time.monotonic() + policy.settle
            flusher.due_at(self._open_due)

    _inflight: list[Any] | None = None
    """The chunks of a batch the flusher is committing in a group (``[]``: a lease renewal), or None.

    While it is set, appends go on (they fold and buffer as usual) but any
    commit of this writer waits for the group's outcome, so versions are
    committed in order and a failed group's chunks are committed again first.
    """
    _inflight_oldest = 0.0

    @cached_property
    def _idle(self) -> threading.Condition:
        """Signalled when a group commit this writer was in has ended (made under ``_lock``)."""
        return threading.Condition(self._lock)

    def _wait_for_group(self) -> None:
        """Holding the lock: wait until a group commit of this writer's events has ended."""
        while self._inflight is not None:
            self._idle.wait()

    @property
    def unit_of_work(self) -> UnitOfWork:
        """What this writer commits through (the flusher groups writers by it)."""
        return self._uow

    def live_stream(self) -> LiveStream | None:
        """The open stream as this writer holds it, for a resume (no read of the log).

        None when it cannot tell without waiting (its lock is held), or when
        its memory may not be what the log says: it ended, its open is not
        committed yet, it is stale, or redactions apply.
        """
        if not self._lock.acquire(blocking=False):
            return None
        try:
            state = self._conversation.state
            stream = state.stream
            if (
                self.closed
                or self._open is not None
                or self._stale
                or stream is None
                or stream.stream_id != self.stream_id
                or state.redactions
            ):
                return None
            return LiveStream(
                self.key,
                self.stream_id,
                stream.continuation,
                state.dialect.replays_message_on_resume,
                self,
            )
        finally:
            self._lock.release()

    def writing(self, stream_id: str) -> bool:
        """Whether this writer still writes stream ``stream_id`` (then it keeps its lease)."""
        return not self.closed and self.stream_id == stream_id

    def resumed_chunk(self, chunk: Any) -> tuple[bool, Any]:
        """``(True, resumed(chunk, message))`` with the message this stream writes, as folded;
        ``(False, None)`` when it cannot tell without waiting or may be stale (ask the log)."""
        if not self._lock.acquire(blocking=False):
            return False, None
        try:
            if self._stale:
                return False, None
            return True, resumed(chunk, self._conversation.state.messages[self._message_index])
        finally:
            self._lock.release()

    def _save(self, record: Callable[[Conversation], None]) -> None:
        """Record and commit; if another writer got in first, reload and re-apply the batch.

        If the commit fails otherwise, nothing was written: the writer reloads
        the conversation, keeps the chunks buffered (a later flush or close
        commits them), and raises StoreUnavailableError. A batch of this
        writer in a group commit of the flusher is waited for first.
        """
        self._wait_for_group()
        self._resync_if_stale()
        for _ in attempts():
            try:
                record(self._conversation)
            except NoOpenStreamError:
                self._closed_elsewhere()
                raise
            try:
                self._uow.commit(self._conversation)
                self._committed()
                return
            except ConcurrentWriteError:
                self._resync()
            except Exception:
                # Reload lazily, at the next call: the database may still be unreachable now.
                self._stale = True
                raise
        raise ConcurrentWriteError(self._conversation.state.chat_id)

    def _resync(self) -> None:
        """Reload the conversation from the log and fold the unsaved chunks again.

        If the stream was closed elsewhere meanwhile (``close_stream`` from
        another process, e.g. a stop), this writer is done: it drops what it
        still buffered, stops being flushed, and raises NoOpenStreamError, as
        every later call does. Any other failure leaves it stale: the next
        call reloads again.
        """
        self._stale = True  # until the reload below has fully succeeded
        state = self._conversation.state
        conversation = self._uow.load(state.tenant, state.chat_id)
        try:
            if self._open is not None:
                self._open_again(conversation)
            for chunk in self._unsaved:
                conversation.receive(self.stream_id, chunk, limits=self._limits)
        except NoOpenStreamError as error:
            self._conversation = conversation
            self._stale = False
            self._closed_elsewhere(error)
            raise
        self._conversation = conversation
        self._stale = False

    def _open_again(self, conversation: Conversation) -> None:
        """The pending open on a reloaded ``conversation``: found stored, decided again, or lost
        (StreamOpenLostError; see ``PendingOpen.again``)."""
        assert self._open is not None
        since = self._uow.events_after(conversation, self._open.base)
        self._open = self._open.again(conversation, self.stream_id, since)

    def _committed(self) -> None:
        """A commit of this stream went through: its lease runs from now, its open is stored."""
        self._committed_at = time.monotonic()
        self._open = None

    def _ended(self) -> NoOpenStreamError:
        """What the writer's calls raise once it ended without its own close."""
        return self._end or NoOpenStreamError(self._conversation.state.chat_id, self.stream_id)

    def _closed_elsewhere(self, error: NoOpenStreamError | None = None) -> None:
        """The stream was closed by someone else (or its open lost): drop the buffer, stop
        flushing, refuse from now on (raising ``error``, if given)."""
        self._unsaved = []
        self._settles_at = None
        self._open = None
        self._end = error
        self.closed = True
        self._flusher.unwatch(self)

    def _resync_if_stale(self) -> None:
        """After a failed commit the in-memory conversation is ahead of the log: reload first."""
        if self._stale:
            self._resync()
