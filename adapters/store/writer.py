"""Writing one model response into the store: chunks folded at once, committed in batches."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from types import TracebackType
from typing import Any
from uuid import UUID

from eventsourcing.persistence import StoredEvent

from chatledger.adapters.store.unit_of_work import UnitOfWork, attempts
from chatledger.domain.aggregate import Conversation, ReceivedChunk, conversation_id, is_boundary
from chatledger.domain.errors import (
    ConcurrentWriteError,
    NoOpenStreamError,
    StoreConfigurationError,
    StreamOpenLostError,
)
from chatledger.domain.lease import DEFAULT_STREAM_LEASE_SECONDS, renew_every
from chatledger.domain.limits import Limits
from chatledger.domain.pending_open import LOST, RECORDED, fate, opened_since

__all__ = [
    "AT_ONCE",
    "DEFAULT_BATCH_CHUNKS",
    "DEFAULT_BATCH_MS",
    "DEFAULT_SETTLE",
    "BatchPolicy",
    "Flusher",
    "PendingOpen",
    "StreamWriter",
]

DEFAULT_BATCH_MS = 50
"""Milliseconds the oldest buffered chunk may wait: the crash window (what ``kill -9`` may lose)."""

DEFAULT_BATCH_CHUNKS = 1024
"""Most chunks one batch holds. A cap on memory and event size, not the usual commit trigger:
batches are committed on age (``DEFAULT_BATCH_MS``), so a model streaming at any realistic
rate commits about every 50 ms, and a reply written faster than that (an import, a replay, a
fast model) is one commit instead of one per 64 chunks. The crash window is the age either way."""

DEFAULT_SETTLE = 0.005
"""Seconds a batch ended by a boundary chunk waits for the close or the next chunk."""

AT_ONCE = frozenset({"tool-input-available", "tool-approval-request", "steering-message"})
"""Boundary chunks that ask someone outside to act (run a client-side tool, answer an approval)
or that others read at once (an AI SDK 7 steering message taken off the queue): committed at
once, since the answer may reach another process before the writer's next call."""


class BatchPolicy:
    """When buffered chunks are committed: by age, by count (a cap), and after boundary chunks.

    A batch is committed when its oldest chunk is ``max_delay`` old, or when
    it holds ``max_chunks`` (by default 1,024: a cap, rarely reached, so a
    fast reply is one commit rather than one per few dozen chunks).

    A chunk that asks someone outside to act (``AT_ONCE``: tool input
    available, an approval request) is committed at once, with everything
    before it. Any other boundary chunk (tool output, finish-step, finish,
    error, abort) ends its batch: the batch is committed before the writer
    takes the next plain chunk, in the same transaction as the close if the
    stream closes next, by the timer ``settle`` seconds after the boundary if
    nothing follows, and before anything else in this process decides on or
    reads the conversation. A reply's end (finish-step, finish, close) is so
    one transaction instead of three; at most ``settle`` (<= ``max_delay``)
    of chunks is at risk meanwhile. ``settle=0`` commits at once after every
    boundary.
    """

    def __init__(
        self,
        max_chunks: int = DEFAULT_BATCH_CHUNKS,
        max_delay: float = DEFAULT_BATCH_MS / 1000,
        settle: float | None = None,
    ) -> None:
        if max_chunks < 1 or max_delay < 0:
            raise StoreConfigurationError(
                f"batching needs batch_chunks >= 1 and batch_ms >= 0, not {max_chunks!r} and "
                f"{max_delay * 1000!r} ms"
            )
        if settle is None:
            settle = min(DEFAULT_SETTLE, max_delay)
        if not 0 <= settle <= max_delay:
            raise StoreConfigurationError(
                f"batching needs 0 <= settle <= max_delay ({max_delay} s), not settle={settle}"
            )
        self.max_chunks = max_chunks
        self.max_delay = max_delay
        self.settle = settle


@dataclass(frozen=True)
class Taken:
    """What a writer gives its flusher's group commit: events taken off its conversation, a snapshot."""

    events: list[Any]
    snapshot: StoredEvent | None = None


class Flusher:
    """One background thread per store that commits the due batches of all its open streams, together.

    It ticks every ``max_delay / 2``. At each tick it takes every writer
    whose oldest buffered chunk would be ``max_delay`` old before the next
    tick, whose batch ended by a boundary chunk has settled (``due_at``
    wakes it at that moment), or whose lease needs renewing
    (``StreamWriter.renew_if_idle``), and records all their events in ONE
    transaction (*group commit*): at N live streams the process commits
    about 2 / ``max_delay`` times a second instead of N times that. A batch
    due a snapshot is committed on its own (with its snapshot). If the
    group's transaction fails (another process wrote one of the
    conversations meanwhile, or the database failed), each member is
    committed through its own path (reload, re-apply, commit), so one bad
    member costs the others one retry, never their chunks.

    ``append()`` still commits by itself when its oldest chunk reaches
    ``max_delay`` (the flusher fell behind, or the writer was busy at the
    tick), so at most ``max_delay`` of chunks is ever at risk, as before. A
    writer busy in a call of its own at the tick is left to that call.
    """

    def __init__(
        self, max_delay: float, lease_seconds: float = DEFAULT_STREAM_LEASE_SECONDS
    ) -> None:
        self._period = max(min(max_delay, renew_every(lease_seconds)) / 2, 0.001)
        self._next: float | None = None
        """The earliest moment a writer asked to be checked at (see ``due_at``)."""
        self._wakes_at = 0.0
        """When the thread wakes next by itself (it is woken for an earlier ``due_at`` only)."""
        self._watched: set[StreamWriter] = set()
        self._by_key: dict[UUID, set[StreamWriter]] = {}
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None
        self._stopped = False
        self.group = True
        """Commit the due batches of all writers in one transaction (False: one each, as before)."""

    def watch(self, writer: StreamWriter) -> None:
        """Check ``writer`` periodically until it closes."""
        with self._wake:
            idle = not self._watched
            self._watched.add(writer)
            self._by_key.setdefault(writer.key, set()).add(writer)
            if self._thread is None and not self._stopped:
                self._thread = threading.Thread(
                    target=self._run, name="chatledger-flusher", daemon=True
                )
                self._thread.start()
            if idle:
                # Only a thread that waits without a timeout needs waking: a running one
                # checks every writer within its period anyway. Waking it for every new
                # stream cost a thread switch per turn (a quarter of open_stream's time).
                self._wake.notify()

    def due_at(self, moment: float) -> None:
        """Check the writers at ``moment`` (``time.monotonic``) if not before (a boundary settles)."""
        with self._wake:
            if self._next is None or moment < self._next:
                self._next = moment
                if moment < self._wakes_at:
                    self._wake.notify()

    def unwatch(self, writer: StreamWriter) -> None:
        """Stop checking ``writer``."""
        with self._wake:
            self._watched.discard(writer)
            same = self._by_key.get(writer.key)
            if same is not None:
                same.discard(writer)
                if not same:
                    del self._by_key[writer.key]

    def settle(self, key: UUID) -> None:
        """Commit now what this process's writers of conversation ``key`` hold after a boundary.

        Called before anything else in this process reads or decides on that
        conversation, so it sees every boundary chunk appended before, as if
        each had been committed at once.
        """
        with self._wake:
            writers = list(self._by_key.get(key, ()))
        for writer in writers:
            writer.settle()

    def writes(self, key: UUID) -> bool:
        """Whether this process has an open writer of conversation ``key``."""
        with self._wake:
            return key in self._by_key

    def settle_all(self) -> None:
        """``settle`` every conversation this process writes (before reading across them)."""
        with self._wake:
            writers = list(self._watched)
        for writer in writers:
            writer.settle()

    def stop(self) -> None:
        """End the thread (the store is closing)."""
        with self._wake:
            self._stopped = True
            self._wake.notify()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _run(self) -> None:
        checked = 0.0
        while True:
            with self._wake:
                if self._stopped:
                    return
                if not self._watched:
                    self._wake.wait()
                    continue
                now = time.monotonic()
                due = checked + self._period
                if self._next is not None:
                    due = min(due, self._next)
                if now < due:
                    self._wakes_at = due
                    self._wake.wait(due - now)
                    continue
                if self._next is not None and self._next <= now:
                    self._next = None
                checked = now
                writers = list(self._watched)
            pending = self._commit_due(writers, now)
            if pending is not None:
                self.due_at(pending)  # a boundary that had not settled yet

    def commit_due(self, now: float | None = None) -> float | None:
        """One tick now: commit what is due of every watched writer (as of ``now``, a
        ``time.monotonic`` moment); returns when a boundary still waiting to settle is due."""
        with self._wake:
            writers = list(self._watched)
        return self._commit_due(writers, time.monotonic() if now is None else now)

    def _commit_due(self, writers: list[StreamWriter], now: float) -> float | None:
        if not self.group:
            pending = [moment for writer in writers if (moment := writer.flush_if_due(now))]
            return min(pending, default=None)
        members: list[tuple[StreamWriter, Taken]] = []
        pending = []
        for writer in writers:
            # Never wait for a writer: one busy in a call of its own commits what is due
            # itself. Not waiting also means no lock order to keep between writers.
            if not writer._lock.acquire(blocking=False):
                continue
            try:
                taken, moment = writer._join_group(now, self._period)
                if taken is not None:
                    members.append((writer, taken))
                if moment is not None:
                    pending.append(moment)
            except Exception:  # e.g. a fold that failed: reload at the writer's next call
                writer._stale = True
            finally:
                writer._lock.release()
        if members:
            commit_group(members)
        return min(pending, default=None)


@dataclass
class PendingOpen:
    """A stream's open decided but not committed yet (see ``StreamWriter``)."""

    decide: Callable[[Conversation], None]
    """The open's decision (and the user message given with it), to run again on a reloaded
    conversation when only bookkeeping was committed meanwhile (``domain.pending_open``)."""
    base: int
    """The version the decision was made on."""
    own: list[Any]
    """The events the decision recorded."""


class StreamWriter:
    """An open stream on a conversation. Use it as a context manager, or call ``close()``.

    ``append()`` folds the chunk immediately (a bad chunk is refused right
    there) and commits when the batch is full, when its oldest chunk is
    ``max_delay`` old (a timer also fires when the model goes quiet), and
    after a boundary chunk as ``BatchPolicy`` says (before the next plain
    chunk, with the close, or when the boundary has settled). The writer takes ownership of the chunk
    objects given to it. It is safe to use from several threads.

    The open itself may still be pending (``open``, from
    ``open_stream(..., commit=False)``): it is then committed
    with the first commit of the stream, which comes at the latest
    ``policy.settle`` after the open (the flusher sees to it), with the
    close if the stream closes first (a fast reply is one transaction), and
    before anything else in this process decides on or reads the
    conversation (``settle``). If another writer committed to the
    conversation meanwhile, the open is decided again when only bookkeeping
    came in between, and otherwise lost: the writer ends and its calls raise
    ``StreamOpenLostError`` (a ``NoOpenStreamError``), nothing of it stored.

    Lease (docs/behaviour.md §7.1): every commit renews the stream's lease;
    a writer that has committed nothing for a third of ``lease_seconds``
    commits a small ``StreamRenewed`` (the flusher sees to it), so a writer
    that is alive but slow keeps its stream, and one whose process died
    loses it once the lease runs out.
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

    @property
    def message(self) -> dict[str, Any]:
        """The assistant message written, as folded so far (live: do not change it)."""
        with self._lock:
            message: dict[str, Any] = self._conversation.state.messages[self._message_index]
            return message

    @property
    def message_id(self) -> str:
        """The id of the assistant message written (a new stream's ``start`` chunk may set it)."""
        return str(self.message["id"])

    @property
    def conversation(self) -> Conversation:
        """The in-memory conversation this stream writes to."""
        return self._conversation

    def append(self, chunk: Any) -> ReceivedChunk:
        """Receive one chunk; returns its position and verdict (refusals are not raised)."""
        with self._lock:
            if self.closed:
                self._unreported_end = False  # the caller learns it now
                raise self._ended()
            if self._stale:
                self._resync()
            boundary = is_boundary(chunk)
            if self._settles_at is not None and not boundary:
                self.flush()  # a boundary's batch is committed before the next step goes on
            received = self._conversation.receive(self.stream_id, chunk, limits=self._limits)
            unsaved = self._unsaved
            unsaved.append(chunk)
            now = time.monotonic()
            policy = self._policy
            if len(unsaved) == 1:
                self._oldest = now
            if (
                len(unsaved) >= policy.max_chunks
                or now - self._oldest >= policy.max_delay
                or (boundary and (policy.settle <= 0 or chunk.get("type") in AT_ONCE))
            ):
                self.flush()
            elif boundary and self._settles_at is None:
                self._settles_at = now + self._policy.settle
                self._flusher.due_at(self._settles_at)
            return received

    def flush(self) -> None:
        """Commit the buffered chunks now (one event, one transaction)."""
        with self._lock:
            self._wait_for_group()
            if not self._unsaved and self._open is None:
                return
            self._save(lambda conversation: conversation.flush())
            self._unsaved = []
            self._settles_at = None

    def flush_if_due(self, now: float | None = None) -> float | None:
        """Commit alone if the oldest buffered chunk is ``max_delay`` old, or a boundary settled.

        Returns when a boundary still waiting to settle is due (None if none is).
        """
        with self._lock:
            now = time.monotonic() if now is None else now
            if self._open is not None and not self.closed:
                due = self._commit_open_if_due(now)
                if due is not None:
                    return due
            if not self._unsaved:
                self.renew_if_idle(now)
                return None
            if self.closed:
                return None
            settled = self._settles_at is not None and now >= self._settles_at
            if not settled and now - self._oldest < self._policy.max_delay:
                return self._settles_at
            # A failure here surfaces on the writer's next call (it reloads first).
            self._flush_quietly()
            return None

    def renew_if_idle(self, now: float | None = None) -> bool:
        """Renew the stream's lease if nothing was committed for a third of it; whether it did.

        A failure is not raised here (the flusher calls it): a stream closed
        elsewhere meanwhile ends this writer, as any commit would.
        """
        with self._lock:
            if self.closed or self._unsaved:
                return False
            if (time.monotonic() if now is None else now) - self._committed_at < self._renew_every:
                return False
            return self._renew_quietly()

    def _commit_open_if_due(self, now: float) -> float | None:
        """Holding the lock, the open pending: commit it alone if it is due by ``now`` (the
        buffered chunks wait for their batch); otherwise return when it is due."""
        if now < self._open_due:
            return self._open_due
        self._commit_open_quietly()
        return None

    def _renew_quietly(self) -> bool:
        """Commit a ``StreamRenewed`` alone; whether it did (failures wait for the next call)."""
        try:
            self._save(lambda conversation: conversation.renew_stream(self.stream_id))
        except NoOpenStreamError:
            self._unreported_end = True
            return False
        except Exception:
            # Try again in a while (a sixth of the lease), not at every tick of the flusher.
            self._committed_at = time.monotonic() - self._renew_every / 2
            return False
        return True

    # -- group commit -------------------------------------------------------------------

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

    def _join_group(self, now: float, ahead: float) -> tuple[Taken | None, float | None]:
        """For the flusher (holding the lock): what to commit in its group transaction, or None;
        and when a boundary still waiting to settle is due, or None.

        A batch is due when its oldest chunk would be ``max_delay`` old within
        ``ahead`` (the flusher's next tick), or when its boundary settled; a
        lease when nothing was committed for a third of it. A batch due a
        snapshot joins with its snapshot (encoded here; in memory it commits
        alone), and a writer left stale by a failed commit commits alone
        here instead (through ``flush``, which reloads first). The events are
        taken off the conversation and the batch is marked in flight: the
        lock is not held through the transaction, so appends do not wait for
        it (see ``_inflight``).
        """
        if self.closed or self._inflight is not None:
            return None, None
        if self._open is not None:
            # A pending open is not taken into a group: its clash handling (decided again or
            # lost) is the writer's own path, so it commits alone when due; the batches after
            # it join groups.
            due = self._commit_open_if_due(now)
            if due is not None or self._open is not None or self.closed:
                return None, due
        if not self._unsaved:
            if now - self._committed_at < self._renew_every:
                return None, None
            if self._stale:
                self._renew_quietly()
                return None, None
            try:
                self._conversation.renew_stream(self.stream_id)
            except NoOpenStreamError:
                self._renew_quietly()  # the usual path sees to it
                return None, None
            self._inflight = []
            return Taken(list(self._conversation.collect_events())), None
        settled = self._settles_at is not None and now >= self._settles_at
        if not settled and now + ahead - self._oldest < self._policy.max_delay:
            return None, self._settles_at
        if self._stale:
            self._flush_quietly()
            return None, None
        self._conversation.flush()
        snapshot = None
        if self._uow.snapshot_due(self._conversation):
            # Encoded now, under the lock: appends change the state once it is released.
            snapshot = self._uow.log.encoded_snapshot(self._conversation)
            if snapshot is None:  # in memory: commit alone, with the snapshot
                self._flush_quietly()  # records nothing more
                return None, None
        self._inflight, self._inflight_oldest = self._unsaved, self._oldest
        self._unsaved = []
        self._settles_at = None
        return Taken(list(self._conversation.collect_events()), snapshot), None

    def _group_committed(self) -> None:
        """The group's transaction holds this writer's events."""
        with self._lock:
            self._inflight = None
            self._committed()
            self._idle.notify_all()

    def _group_failed(self) -> None:
        """The group's transaction failed: commit through this writer's own path (reload, re-apply)."""
        with self._lock:
            chunks, self._inflight = self._inflight or [], None
            if chunks:
                self._unsaved = chunks + self._unsaved
                self._oldest = self._inflight_oldest
            self._stale = True  # the conversation is ahead of the log now
            self._idle.notify_all()
            if self._unsaved:
                self._flush_quietly()
            else:
                self._renew_quietly()

    def settle(self) -> None:
        """Commit now if the buffered batch ends with a boundary chunk, or the open is pending
        (see ``Flusher.settle``).

        A failure is not raised here: it surfaces on the writer's next call.
        """
        with self._lock:
            self._wait_for_group()  # a boundary's batch may be in it
            if self.closed:
                return
            if self._settles_at is not None:
                self._flush_quietly()
            elif self._open is not None:
                self._commit_open_quietly()

    def _flush_quietly(self) -> None:
        """Flush for the flusher thread: failures wait for the writer's next call to be raised."""
        try:
            self.flush()
        except NoOpenStreamError:
            self._unreported_end = True
        except Exception:  # the writer is stale now: its next call reloads and raises
            pass

    def _commit_open_quietly(self) -> None:
        """Commit the pending open alone (buffered chunks wait for their batch); failures wait
        for the writer's next call to be raised, as in ``_flush_quietly``."""
        try:
            self._save(_record_nothing)
        except NoOpenStreamError:
            self._unreported_end = True
        except Exception:  # the writer is stale now: its next call reloads and raises
            pass

    def close(self, outcome: str = "finished", reason: str | None = None) -> None:
        """Commit what is left and record how the stream ended.

        Closing again does nothing. If the stream was closed elsewhere (a stop
        through another process, an expired lease) this raises
        ``NoOpenStreamError``, also when the background flusher was the one to
        find out and the caller has not been told yet: the chunks it still held
        were not stored, and the caller must not report the answer as finished.
        """
        with self._lock:
            if self.closed:
                if self._unreported_end:
                    self._unreported_end = False
                    raise self._ended()
                return
            self._save(
                lambda conversation: conversation.close_stream(
                    self.stream_id, outcome, reason, actor=self.actor
                )
            )
            self._unsaved = []
            self._settles_at = None
            self.closed = True
            self._flusher.unwatch(self)
            self._uow.give_back(self._conversation)  # saved: the store may reuse it

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
        """The pending open on a reloaded ``conversation``: found stored, decided again, or lost.

        Raises StreamOpenLostError when another writer committed more than
        bookkeeping since the open was decided (``domain.pending_open``).
        """
        assert self._open is not None
        since = self._uow.events_after(conversation, self._open.base)
        found = fate(self.stream_id, self._open.own, since)
        if found == RECORDED:  # committed, though the commit's answer was lost
            self._open = None
            return
        lost = StreamOpenLostError(conversation.state.chat_id, self.stream_id, opened_since(since))
        if found == LOST:
            raise lost
        base = conversation.version
        try:
            self._open.decide(conversation)
        except Exception as refused:
            raise lost from refused
        self._open.base = base
        self._open.own = list(conversation.pending_events)

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
        elif isinstance(exc, NoOpenStreamError):
            return  # the stream was closed elsewhere: nothing to close, the error goes on
        elif isinstance(exc, (KeyboardInterrupt, GeneratorExit)):
            self.close("aborted", f"{type(exc).__name__}")
        else:
            self.close("errored", f"{type(exc).__name__}: {exc}")


def commit_group(members: list[tuple[StreamWriter, Taken]]) -> None:
    """Commit the members' events taken by ``_join_group``, one transaction per unit of work.

    On any failure of a group, each of its members commits on its own
    (``_group_failed``).
    """
    groups: dict[int, list[tuple[StreamWriter, Taken]]] = {}
    for member in members:
        groups.setdefault(id(member[0]._uow), []).append(member)
    for group in groups.values():
        events = [event for _, taken in group for event in taken.events]
        snapshots = [taken.snapshot for _, taken in group if taken.snapshot is not None]
        try:
            group[0][0]._uow.commit_many(events, snapshots)
        except Exception:
            for writer, _ in group:
                writer._group_failed()
        else:
            for writer, _ in group:
                writer._group_committed()


def _record_nothing(conversation: Conversation) -> None:
    """Commit only what is pending already (a stream's open)."""
