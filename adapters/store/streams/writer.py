"""Writing one model response into the store: chunks folded at once, committed in batches."""

from __future__ import annotations

import time
from collections.abc import Callable
from types import TracebackType
from typing import Any

from chatledger.adapters.store.streams.committer import StreamCommitter
from chatledger.adapters.store.streams.flusher import Taken
from chatledger.adapters.store.streams.pending_open import record_nothing
from chatledger.adapters.store.streams.policy import AT_ONCE
from chatledger.domain.aggregate import Conversation, ReceivedChunk
from chatledger.domain.errors import NoOpenStreamError
from chatledger.domain.stream_rules import is_boundary

__all__ = ["StreamWriter", "awaits_approval"]


def awaits_approval(state: Any) -> bool:
    """Whether the conversation's last message holds a call awaiting approval."""
    last = state.messages[-1] if state.messages else None
    return last is not None and any(
        part.get("state") == "approval-requested" for part in last.get("parts", ())
    )


class StreamWriter(StreamCommitter):
    """An open stream on a conversation. Use it as a context manager, or call ``close()``.

    ``append()`` folds the chunk immediately (a bad chunk is refused right
    there) and commits when the batch is full, when its oldest chunk is
    ``commit_age`` old (the store's flusher commits it then, also when the
    model went quiet; ``append`` itself once it is ``overdue_age`` old), and
    after a boundary chunk as ``BatchPolicy`` says (before the next plain
    chunk, with the close, or when the boundary has settled). The writer takes ownership of the chunk
    objects given to it. It is safe to use from several threads. To the store's
    flusher it is a ``GroupMember``: its due batches join the flusher's group commits.

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

    after_close: Callable[[str, str], None] | None = None
    """Called with (tenant, chat id) once this writer closed its stream on a call awaiting approval."""

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
                or now - self._oldest >= policy.overdue_age
                or (boundary and (policy.settle <= 0 or chunk.get("type") in AT_ONCE))
            ):
                self.flush()
            elif boundary and self._settles_at is None:
                self._settles_at = now + self._policy.settle
                self._flusher.due_at(self._settles_at)
            return received

    def append_unless_due(self, chunk: Any) -> tuple[ReceivedChunk, dict[str, Any]] | None:
        """``append`` when it cannot commit or wait: the chunk folded and buffered, with the
        message as folded; None, with nothing done, when it would (call ``append`` then).

        For an event loop: the fold is cheap, a commit or a wait for the lock is not. It
        does nothing for a boundary chunk, a batch that is due or settling, a stale or
        closed writer, or while the flusher holds the writer.
        """
        if is_boundary(chunk) or not self._lock.acquire(blocking=False):
            return None
        try:
            unsaved, policy, now = self._unsaved, self._policy, time.monotonic()
            if (
                self.closed
                or self._stale
                or self._settles_at is not None
                or len(unsaved) + 1 >= policy.max_chunks
                or (unsaved and now - self._oldest >= policy.overdue_age)
            ):
                return None
            received = self._conversation.receive(self.stream_id, chunk, limits=self._limits)
            unsaved.append(chunk)
            if len(unsaved) == 1:
                self._oldest = now
            return received, self._conversation.state.messages[self._message_index]
        finally:
            self._lock.release()

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
        """Commit alone if the oldest buffered chunk is ``commit_age`` old, or a boundary settled.

        Returns when what is buffered is due (a boundary settles, or the batch is
        ``commit_age`` old), None if nothing is buffered.
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
            if not settled and now - self._oldest < self._policy.commit_age:
                return self._due()
            # A failure here surfaces on the writer's next call (it reloads first).
            self._flush_quietly()
            return None

    def _due(self) -> float:
        """Holding the lock, chunks buffered: when they are due (their age, or a boundary settling)."""
        due = self._oldest + self._policy.commit_age
        return due if self._settles_at is None else min(due, self._settles_at)

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

    # -- group commit: the flusher's side (``GroupMember``) ----------------------------------

    def try_hold(self) -> bool:
        """For the flusher: take this writer's lock if it is free, never waiting (see ``release``)."""
        return self._lock.acquire(blocking=False)

    def release(self) -> None:
        """For the flusher: release the lock ``try_hold`` took."""
        self._lock.release()

    def mark_stale(self) -> None:
        """For the flusher (holding the writer): reload before the next commit (a join failed)."""
        self._stale = True

    def join_group(self, now: float, ahead: float) -> tuple[Taken | None, float | None]:
        """For the flusher (holding the writer): what to commit in its group transaction, or
        None; and when what it still buffers is due (the flusher wakes then), or None.

        A batch is due when its oldest chunk would be ``commit_age`` old within
        ``ahead`` (the flusher asks with 0, then, once a group is due, with
        ``math.inf``: every buffered batch joins it), or when its boundary settled; a
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
        if not settled and now + ahead - self._oldest < self._policy.commit_age:
            return None, self._due()
        if self._stale:
            self._flush_quietly()
            return None, None
        self._conversation.flush()
        snapshot = None
        if self._uow.snapshot_due(self._conversation):
            # Encoded now, under the lock: appends change the state once it is released.
            snapshot = self._uow.encoded_snapshot(self._conversation)
            if snapshot is None:  # in memory: commit alone, with the snapshot
                self._flush_quietly()  # records nothing more
                return None, None
        self._inflight, self._inflight_oldest = self._unsaved, self._oldest
        self._unsaved = []
        self._settles_at = None
        return Taken(list(self._conversation.collect_events()), snapshot), None

    def group_committed(self) -> None:
        """The group's transaction holds this writer's events."""
        with self._lock:
            self._inflight = None
            self._committed()
            self._idle.notify_all()

    def group_failed(self) -> None:
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
            self._save(record_nothing)
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
            state = self._conversation.state
            asks = awaits_approval(state)
            self._uow.give_back(self._conversation)  # saved: the store may reuse it
        if asks and self.after_close is not None:  # standing grants may answer it (adapters.grants)
            self.after_close(state.tenant, state.chat_id)

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
