"""Running a responder into its stream: the answers this process is writing.

``TurnRunner.run`` takes a ``Turn`` (an open ``StreamWriter`` and the
``ResponderRequest``) and runs the responder as a task of its own, which
outlives any client: every chunk is stored (a batch at a time, in a worker
thread) and what the client is to get for it (``domain.delivery``) is put in
the turn's ``Outbox`` for whichever transport frames it (SSE, WebSocket). The
answer ends by closing the stream: ``finished``; ``errored`` when the
responder raised (the client gets a masked ``error`` chunk); ``aborted`` when
``stop`` ended it (an ``abort`` chunk says who and why) or the process shut
down. A stream closed elsewhere (a stop through another process) ends the run
quietly. Nothing here knows HTTP.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Coroutine
from typing import TYPE_CHECKING, Any

from chatledger.adapters.store.turns.outbox import MAX_WAITING, Outbox
from chatledger.adapters.store.turns.responder import Responder, actor_of
from chatledger.domain.delivery import sent_for
from chatledger.domain.errors import NoOpenStreamError
from chatledger.domain.owners import check_owner, responder_owner

if TYPE_CHECKING:
    from chatledger.adapters.store.streams.writer import StreamWriter
    from chatledger.adapters.store.turns.service import Turn

__all__ = ["TurnRunner", "deliver", "deliver_all"]

log = logging.getLogger("chatledger.turns")

CLOSED_ELSEWHERE = {"type": "abort", "reason": "the stream was closed"}
"""What a client gets when its answer's stream was closed by another process (a stop there)."""


def deliver(writer: StreamWriter, chunk: Any) -> Any | None:
    """Store one chunk; the chunk the client must get for it, if any (call it in a worker thread)."""
    received = writer.append(chunk)
    if received.error is not None:
        log.warning("chunk refused on stream %s: %s", writer.stream_id, received.error)
    return sent_for(chunk, received.verdict, writer.message)


def deliver_all(writer: StreamWriter, chunks: list[Any]) -> tuple[list[Any], Exception | None]:
    """``deliver`` each chunk in order: what the client gets, and the error that stopped it.

    What the chunks stored before an error give is kept, so the client gets
    everything the store took.
    """
    sent: list[Any] = []
    for chunk in chunks:
        try:
            shown = deliver(writer, chunk)
        except Exception as error:
            return sent, error
        if shown is not None:
            sent.append(shown)
    return sent, None


class _Batches:
    """Stores a turn's chunks in a worker thread, one batch at a time, in order.

    The responder is never held up by the store: what it yields while a batch
    is being stored (and committed) waits in the next batch. One thread hop
    per batch instead of per chunk makes a fast responder about eight times
    cheaper to serve (bench/http_server.py).
    """

    def __init__(self, writer: StreamWriter, outbox: Outbox) -> None:
        self.writer = writer
        self.outbox = outbox
        self.pending: list[Any] = []
        self.job: asyncio.Future[tuple[list[Any], Exception | None]] | None = None
        self.collecting = False

    async def add(self, chunk: Any) -> None:
        """Take one chunk; starts storing it unless a batch is being stored (raises its error).

        A chunk that commits nothing and waits for nothing (most text deltas) is folded
        right here on the loop, when no batch is ahead of it: no thread hop.
        """
        if self.job is None and not self.pending:
            folded = self.writer.append_unless_due(chunk)
            if folded is not None:
                received, message = folded
                if received.error is not None:
                    log.warning(
                        "chunk refused on stream %s: %s", self.writer.stream_id, received.error
                    )
                shown = sent_for(chunk, received.verdict, message)
                if shown is not None:
                    self.outbox.put(shown)
                return
        self.pending.append(chunk)
        if self.job is not None and self.job.done():
            await self._collect()
        if self.job is None:
            self._submit()

    async def finish(self) -> None:
        """Store everything taken and outbox what the client gets (raises the first error)."""
        while self.job is not None or self.pending:
            if self.job is not None:
                await self._collect()
            if self.pending:
                self._submit()

    def _submit(self) -> None:
        chunks, self.pending = self.pending, []
        self.job = asyncio.ensure_future(asyncio.to_thread(deliver_all, self.writer, chunks))
        self.job.add_done_callback(self._stored)

    def _stored(self, job: asyncio.Future[tuple[list[Any], Exception | None]]) -> None:
        """A batch is stored: send it, and store what arrived meanwhile, now.

        Not at the responder's next chunk: a responder that pauses (a model
        thinking) would otherwise hold its last chunks out of the log and out of
        the response until it goes on. Errors, and a batch the producer is
        waiting for, are left to ``_collect``.
        """
        if job is not self.job or self.collecting:
            return
        if job.cancelled() or job.exception() is not None or job.result()[1] is not None:
            return
        self.job = None
        for chunk in job.result()[0]:
            self.outbox.put(chunk)
        if self.pending:
            self._submit()

    async def _collect(self) -> None:
        assert self.job is not None
        self.collecting = True
        try:
            sent, error = await asyncio.shield(self.job)  # a cancel must not lose the batch
        finally:
            self.collecting = False
        self.job = None
        for chunk in sent:
            self.outbox.put(chunk)
        if error is not None:
            raise error


class TurnRunner:
    """Runs a responder into the streams of turns; knows the answers this process is writing."""

    def __init__(
        self, responder: Responder, *, max_waiting: int = MAX_WAITING, owner: str | None = None
    ) -> None:
        self.responder = responder
        self.actor = actor_of(responder)
        """Who the responder is in the audit (the actor of the streams it writes)."""
        self.owner = check_owner(owner) if owner is not None else responder_owner(self.actor)
        """The owner name of the conversations it starts and continues (``responder:<actor>``)."""
        self.max_waiting = max_waiting
        """Chunks a client may leave unread before it is dropped to resume-from-log."""
        self.tasks: set[asyncio.Task[None]] = set()
        """Every task of the runner (answers and continuations); shutdown waits for them."""
        self.turns: dict[str, tuple[Turn, asyncio.Task[None], asyncio.Task[None]]] = {}
        """The answers being written, by stream id: the turn, its responder's task (to stop
        it) and the task that ends it."""

    def start(self, turn: Turn) -> Outbox:
        """Run the responder on ``turn`` (it runs to its end on its own); the client's outbox."""
        outbox = Outbox(self.max_waiting)
        self.run(turn, outbox)
        return outbox

    def spawn(self, work: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        """Run ``work`` as a task ``shutdown`` waits for."""
        task = asyncio.create_task(work)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return task

    def run(self, turn: Turn, outbox: Outbox | None = None) -> None:
        """Run the responder on ``turn`` as a task of its own, known by its stream id.

        Two tasks: the responder's (which ``stop`` and shutdown cancel) and the
        one that ends the answer, which is never cancelled by a stop: however
        the responder's task ends (even cancelled before it ever ran), the
        stream is closed and the outbox ended.
        """
        stream_id = turn.writer.stream_id
        outbox = outbox or Outbox(limit=0)  # nobody reads it: clients follow the log
        batches = _Batches(turn.writer, outbox)
        writing = asyncio.create_task(self._write(turn, batches, outbox))
        ending = self.spawn(self._end(turn, batches, outbox, writing))
        self.turns[stream_id] = (turn, writing, ending)
        ending.add_done_callback(lambda _: self.turns.pop(stream_id, None))

    async def _write(self, turn: Turn, batches: _Batches, outbox: Outbox) -> None:
        """Store every chunk of the responder's answer; outbox what the client gets."""
        async for chunk in _iterate(self.responder.respond(turn.request)):
            if not turn.started:
                turn.started = True
                if await self._start(turn, chunk, outbox):
                    continue
            await batches.add(chunk)
        await batches.finish()

    async def _end(
        self, turn: Turn, batches: _Batches, outbox: Outbox, writing: asyncio.Task[None]
    ) -> None:
        """Wait for the responder's task, then close the stream with how it ended; end the outbox."""
        writer = turn.writer
        try:
            await asyncio.wait([writing])
            outcome, reason, last = _outcome(turn, writing)
            if outcome is None:  # closed elsewhere (stopped through another process)
                log.info("stream %s was closed elsewhere; the responder stops", writer.stream_id)
                outbox.put(CLOSED_ELSEWHERE)
                return
            with contextlib.suppress(Exception):
                await batches.finish()
            with contextlib.suppress(Exception):
                if not turn.started:  # the client must still learn the message's id
                    turn.started = True
                    await self._forward(writer, {"type": "start"}, outbox)
                if last is not None:
                    await self._forward(writer, last, outbox)
            try:
                await asyncio.to_thread(writer.close, outcome, reason)
            except NoOpenStreamError:  # learnt at the close: the last chunks' batch waited for it
                log.info("stream %s was closed elsewhere", writer.stream_id)
                outbox.put(CLOSED_ELSEWHERE)
            except Exception:
                log.exception("could not close stream %s", writer.stream_id)
        finally:
            outbox.end()

    async def _start(self, turn: Turn, chunk: Any, outbox: Outbox) -> bool:
        """Begin the answer with a ``start`` the client gets; True if that used up ``chunk``.

        The client must learn the stored message id first (it names the message
        in its next request). A responder's ``start`` is used when it is one;
        if the store refuses it (e.g. its ``messageId`` is another message's:
        the refusal is in the audit), it is stored again without the id (its
        metadata kept), else a plain ``start``. A first chunk that is no
        ``start`` gets a plain ``start`` before it.
        """
        writer = turn.writer
        if isinstance(chunk, dict) and chunk.get("type") == "start":
            tries = [chunk, {"type": "start"}]
            if "messageId" in chunk:
                tries.insert(1, {key: value for key, value in chunk.items() if key != "messageId"})
            for start in tries:
                if await self._forward(writer, start, outbox):
                    break
            return True
        await self._forward(writer, {"type": "start"}, outbox)
        return False

    @staticmethod
    async def _forward(writer: StreamWriter, chunk: Any, outbox: Outbox) -> bool:
        """Store ``chunk``; outbox what the client gets for it. True if there was something."""
        sent = await asyncio.to_thread(deliver, writer, chunk)
        if sent is None:
            return False
        outbox.put(sent)
        return True

    async def stop(self, stream_id: str, actor: str, reason: str | None) -> bool:
        """Stop the answer this process writes on ``stream_id``; False if it writes none.

        Returns once its stream is closed (``aborted``) and its outbox ended.
        """
        found = self.turns.get(stream_id)
        if found is None:
            return False
        turn, writing, ending = found
        if not writing.done():
            turn.stopped_by = (actor, reason)
            writing.cancel()
        await asyncio.wait([ending], timeout=30)
        return True

    async def shutdown(self, timeout: float = 10.0) -> None:
        """Let the answers being written finish into the log, for ``timeout`` seconds; then stop them.

        A stopped answer closes its stream as ``aborted`` before this returns
        (within another ``timeout``), so the store can be closed after it.
        """
        if self.tasks:
            await asyncio.wait(set(self.tasks), timeout=timeout)
        for _, writing, _ in list(self.turns.values()):
            writing.cancel()  # each answer then closes as aborted
        if self.tasks:  # an answer still closing is not cancelled: that would leave it open
            await asyncio.wait(set(self.tasks), timeout=timeout)


def _outcome(
    turn: Turn, writing: asyncio.Task[None]
) -> tuple[str | None, str | None, dict[str, Any] | None]:
    """How the responder's task ended: (outcome, reason, the last chunk the client gets)."""
    if writing.cancelled():
        if turn.stopped_by is None:
            reason = "the server stopped the response"
        else:
            actor, why = turn.stopped_by
            reason = f"stopped by {actor}" + (f": {why}" if why else "")
        return "aborted", reason, {"type": "abort", "reason": reason}
    error = writing.exception()
    if error is None:
        return "finished", None, None
    if isinstance(error, NoOpenStreamError):
        return None, None, None
    log.error("responder failed on chat %r", turn.request.chat_id, exc_info=error)
    reason = f"{type(error).__name__}: {error}"
    return "errored", reason, {"type": "error", "errorText": "The responder failed."}


async def _iterate(answer: Any) -> AsyncIterator[Any]:
    """A responder's answer as an async iterator (a plain iterator is advanced in a worker thread)."""
    if hasattr(answer, "__aiter__"):
        async for chunk in answer:
            yield chunk
        return
    iterator = iter(answer)
    done = object()
    while True:
        chunk = await asyncio.to_thread(next, iterator, done)
        if chunk is done:
            return
        yield chunk
