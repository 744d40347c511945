"""Running a responder into a stream: the answers the HTTP app is writing.

``TurnRunner.run`` takes a ``Turn`` (an open ``StreamWriter`` and the
``ResponderRequest``) and runs the responder as a task of its own, which
outlives the HTTP response: every chunk is stored (a batch at a time, in a
worker thread) and the applied ones are queued as SSE events for whoever
streams them (``response``). The answer ends by closing the stream:
``finished``; ``errored`` when the responder raised (the client gets a masked
``error`` chunk); ``aborted`` when ``stop`` ended it (an ``abort`` chunk says
who and why) or the server shut down. A stream closed elsewhere (a stop
through another server) ends the run quietly.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import logging
from collections.abc import AsyncIterator, Coroutine
from dataclasses import dataclass
from typing import Any

from starlette.responses import Response, StreamingResponse

from chatledger.adapters.http.sse import (
    DONE,
    KEEP_ALIVE,
    SSE_HEADERS,
    deliver,
    deliver_all,
    sse_event,
)
from chatledger.adapters.responders.scripted import Responder, ResponderRequest
from chatledger.adapters.store import ConversationStore
from chatledger.adapters.store.writer import StreamWriter
from chatledger.domain.errors import ChatLedgerError, NoOpenStreamError

__all__ = ["Turn", "TurnRunner", "open_turn"]

log = logging.getLogger("chatledger.http")


@dataclass
class Turn:
    """A stream opened for a responder: the writer, and what the responder is asked."""

    writer: StreamWriter
    request: ResponderRequest
    stopped_by: tuple[str, str | None] | None = None
    """(actor, reason) once ``POST /api/chats/{id}/stop`` stopped it."""


def open_turn(
    store: ConversationStore,
    chat_id: str,
    *,
    tenant: str,
    actor: str,
    trigger: str,
    continuation: bool,
    request_id: str | None,
    body: dict[str, Any] | None = None,
) -> Turn:
    """Open the stream a responder will write, and what it is asked (call it in a worker thread).

    The responder's messages come from the conversation just saved by the
    open (a copy: the writer goes on folding into it), not from the read
    models, so a write never waits for the projection to catch up.
    """
    writer = store.open_stream(
        chat_id,
        tenant=tenant,
        actor=actor,
        continuation=continuation,
        trigger=trigger,
        request_id=request_id,
    )
    state = writer.conversation.state
    assert state.stream is not None  # just opened by this writer
    end = state.stream.message_index + (1 if state.stream.continuation else 0)
    context = copy.deepcopy(state.messages[:end])
    request = ResponderRequest(chat_id, tenant, context, trigger, writer.message_id, body or {})
    return Turn(writer, request)


class _Batches:
    """Stores a turn's chunks in a worker thread, one batch at a time, in order.

    The responder is never held up by the store: what it yields while a batch
    is being stored (and committed) waits in the next batch. One thread hop
    per batch instead of per chunk makes a fast responder about eight times
    cheaper to serve (bench/http_server.py).
    """

    def __init__(self, writer: StreamWriter, queue: asyncio.Queue[str | None]) -> None:
        self.writer = writer
        self.queue = queue
        self.pending: list[Any] = []
        self.job: asyncio.Future[tuple[list[str], Exception | None]] | None = None

    async def add(self, chunk: Any) -> None:
        """Take one chunk; starts storing it unless a batch is being stored (raises its error)."""
        self.pending.append(chunk)
        if self.job is not None and self.job.done():
            await self._collect()
        if self.job is None:
            self._submit()

    async def finish(self) -> None:
        """Store everything taken and queue its events (raises the first error)."""
        while self.job is not None or self.pending:
            if self.job is not None:
                await self._collect()
            if self.pending:
                self._submit()

    def _submit(self) -> None:
        chunks, self.pending = self.pending, []
        self.job = asyncio.ensure_future(asyncio.to_thread(deliver_all, self.writer, chunks))

    async def _collect(self) -> None:
        assert self.job is not None
        events, error = await asyncio.shield(self.job)  # a cancel must not lose the batch
        self.job = None
        for event in events:
            self.queue.put_nowait(event)
        if error is not None:
            raise error


class TurnRunner:
    """Runs responders into their streams; knows the answers this process is writing."""

    def __init__(self, responder: Responder, *, keepalive_seconds: float) -> None:
        self.responder = responder
        self.keepalive_seconds = keepalive_seconds
        self.tasks: set[asyncio.Task[None]] = set()
        """Every task of the app (answers and continuations); shutdown waits for them."""
        self.turns: dict[str, tuple[Turn, asyncio.Task[None]]] = {}
        """The answers being written, by stream id (to stop them)."""

    def response(self, turn: Turn) -> Response:
        """Start the responder (it runs to its end on its own) and stream what it writes."""
        queue: asyncio.Queue[str | None] = asyncio.Queue()
        self.run(turn, queue)
        return StreamingResponse(
            self._drain(queue), media_type="text/event-stream", headers=SSE_HEADERS
        )

    def spawn(self, work: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        """Run ``work`` as a task the app waits for at shutdown."""
        task = asyncio.create_task(work)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return task

    def run(self, turn: Turn, queue: asyncio.Queue[str | None]) -> None:
        """Run the responder on ``turn`` as a task of its own, known by its stream id."""
        stream_id = turn.writer.stream_id
        task = self.spawn(self._produce(turn, queue))
        self.turns[stream_id] = (turn, task)
        task.add_done_callback(lambda _: self.turns.pop(stream_id, None))

    async def _produce(self, turn: Turn, queue: asyncio.Queue[str | None]) -> None:
        """Store every chunk of the responder's answer; queue the applied ones as SSE events."""
        writer = turn.writer
        batches = _Batches(writer, queue)
        outcome, reason = "finished", None
        started = False
        try:
            async for chunk in _iterate(self.responder.respond(turn.request)):
                if not started:
                    started = True
                    if await self._start(turn, chunk, queue):
                        continue
                await batches.add(chunk)
            await batches.finish()
            if not started:  # an empty answer: the client must still learn the message's id
                await self._forward(writer, {"type": "start"}, queue)
        except asyncio.CancelledError:
            if turn.stopped_by is None:  # the server is shutting down
                outcome, reason = "aborted", "the server stopped the response"
                raise
            actor, reason = turn.stopped_by
            outcome = "aborted"
            reason = f"stopped by {actor}" + (f": {reason}" if reason else "")
            with contextlib.suppress(ChatLedgerError):
                await batches.finish()
                await self._forward(writer, {"type": "abort", "reason": reason}, queue)
        except NoOpenStreamError:  # closed elsewhere (stopped through another server)
            log.info("stream %s was closed elsewhere; the responder stops", writer.stream_id)
            queue.put_nowait(sse_event({"type": "abort", "reason": "the stream was closed"}))
            queue.put_nowait(None)
            return
        except Exception as error:
            log.exception("responder failed on chat %r", turn.request.chat_id)
            outcome, reason = "errored", f"{type(error).__name__}: {error}"
            with contextlib.suppress(Exception):
                await batches.finish()
            with contextlib.suppress(Exception):
                if not started:  # the client must still learn the message's id
                    await self._forward(writer, {"type": "start"}, queue)
                await self._forward(
                    writer, {"type": "error", "errorText": "The responder failed."}, queue
                )
        finally:
            try:
                await asyncio.to_thread(writer.close, outcome, reason)
            except Exception:
                log.exception("could not close stream %s", writer.stream_id)
            queue.put_nowait(None)

    async def _start(self, turn: Turn, chunk: Any, queue: asyncio.Queue[str | None]) -> bool:
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
                if await self._forward(writer, start, queue):
                    break
            return True
        await self._forward(writer, {"type": "start"}, queue)
        return False

    @staticmethod
    async def _forward(writer: StreamWriter, chunk: Any, queue: asyncio.Queue[str | None]) -> bool:
        """Store ``chunk``; queue the event the client gets for it. True if there was one."""
        event = await asyncio.to_thread(deliver, writer, chunk)
        if event is None:
            return False
        queue.put_nowait(event)
        return True

    async def _drain(self, queue: asyncio.Queue[str | None]) -> AsyncIterator[str]:
        """The SSE body: the queued events as they come (all that are waiting in one write)."""
        while True:
            try:
                event = await asyncio.wait_for(queue.get(), self.keepalive_seconds)
            except TimeoutError:
                yield KEEP_ALIVE
                continue
            waiting: list[str] = []
            while event is not None:
                waiting.append(event)
                if queue.empty():
                    break
                event = queue.get_nowait()
            if event is None:
                yield "".join(waiting) + DONE
                return
            yield "".join(waiting)

    async def stop(self, stream_id: str, actor: str, reason: str | None) -> bool:
        """Stop the answer this process writes on ``stream_id``; False if it writes none."""
        found = self.turns.get(stream_id)
        if found is None:
            return False
        turn, task = found
        turn.stopped_by = (actor, reason)
        task.cancel()
        await asyncio.wait([task], timeout=30)
        return True

    async def shutdown(self, timeout: float = 10.0) -> None:
        """Let the answers being written finish into the log, for ``timeout`` seconds; then stop them.

        A stopped answer closes its stream as ``aborted`` before this returns
        (within another ``timeout``), so the store can be closed after it.
        """
        if self.tasks:
            await asyncio.wait(set(self.tasks), timeout=timeout)
        if self.tasks:
            for task in list(self.tasks):
                task.cancel()
            await asyncio.wait(set(self.tasks), timeout=timeout)


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
