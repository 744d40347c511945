"""``POST /api/chats/{id}/answers``: an answer written by a server that runs the model elsewhere.

The request body is the UI-message stream as the AI SDK's
``toUIMessageStreamResponse()`` produces it (``data: <chunk JSON>`` frames,
ending with ``data: [DONE]``). It is read as it arrives: each chunk goes to
the stream's writer at once (a batch per piece of body, in a worker thread),
so followers (``GET /api/chat/{id}/stream``) see the answer while it is
written, and a refused chunk is recorded and reported without ending the
stream. The JSON answer, sent once the stream is closed, says what became of
every chunk (``AnswerReport``), the stream's position, how it ended, and the
conversation's status with the continuation request it holds.

How the stream ends: ``[DONE]`` closes it ``finished``; a body that ends
without it, a client that hangs up, or a body silent for ``idle_seconds``
closes it ``interrupted`` (what arrived before is kept); a process that dies
leaves it to its lease. A stop (``POST /api/chats/{id}/stop``) closes it
``aborted``: the answer then comes at once, saying so.

``Idempotency-Key`` (header) names the answer: a retry with the same key is
not written again; its answer reports the first write (``duplicate``).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response

from chatledger.adapters.http.auth import Identity
from chatledger.adapters.http.errors import HTTPProblem, invalid
from chatledger.adapters.http.requests import bool_param
from chatledger.adapters.http.sse_in import EventTooLargeError, SSEDecoder
from chatledger.adapters.store import ConversationStore
from chatledger.adapters.store.streams.writer import StreamWriter
from chatledger.domain.aggregate import ReceivedChunk
from chatledger.domain.conversation import Verdict
from chatledger.domain.errors import AnswerAlreadyWrittenError, NoOpenStreamError

__all__ = ["MAX_ANSWER_KEY", "MAX_REFUSALS_SHOWN", "AnswerEndpoints", "AnswerReport"]

MAX_ANSWER_KEY = 200
"""The longest ``Idempotency-Key`` taken (characters)."""
MAX_REFUSALS_SHOWN = 100
"""Refused chunks listed in an answer (all are counted, and all are in the audit)."""
_EVENT_SLACK = 64_000
"""Bytes an SSE event may take beyond the store's chunk limit (framing, escapes)."""


@dataclass
class AnswerReport:
    """What became of one answer's chunks: counts, refusals, the last position."""

    received: int = 0
    applied: int = 0
    replays: int = 0
    refused: list[dict[str, Any]] = field(default_factory=list)
    refused_count: int = 0
    position: int | None = None
    """The stream position of the last chunk received (None: none arrived)."""

    def take(self, chunk: Any, writer: StreamWriter) -> None:
        """Give ``chunk`` to the stream and count what became of it (call it in a worker thread)."""
        self.count(writer.append(chunk))

    def count(self, received: ReceivedChunk) -> None:
        """Count what became of a chunk the stream received."""
        self.received += 1
        self.position = received.position
        if received.verdict is Verdict.APPLIED:
            self.applied += 1
        elif received.verdict is Verdict.REPLAY:
            self.replays += 1
        else:
            self.refused_count += 1
            if received.error is not None and len(self.refused) < MAX_REFUSALS_SHOWN:
                error = received.error
                self.refused.append(
                    {
                        "position": received.position,
                        "chunkType": error.chunk_type,
                        "toolCallId": error.tool_call_id,
                        "error": type(error).__name__,
                        "reason": error.reason,
                    }
                )

    def take_all(self, chunks: list[Any], writer: StreamWriter) -> None:
        """Take each chunk, in order (one worker-thread hop for what waited)."""
        for chunk in chunks:
            self.take(chunk, writer)


def _parsed(data: str) -> Any:
    """An event's chunk; data that is not JSON is given as it is (the stream refuses and records it)."""
    try:
        return json.loads(data)
    except ValueError:
        return data


class AnswerEndpoints:
    """The stream-in route of one app, for the identity ``identify`` gives each request."""

    def __init__(
        self,
        store: ConversationStore,
        identify: Callable[[Request], Identity],
        *,
        idle_seconds: float,
    ) -> None:
        self.store = store
        self.identify = identify
        self.idle_seconds = idle_seconds
        """How long the body may stay silent before the answer is closed ``interrupted``."""
        self.max_event_bytes = store.limits.max_chunk_bytes + _EVENT_SLACK

    async def stream_in(self, request: Request) -> Response:
        """``POST /api/chats/{id}/answers[?continuation=true]``: store a UI-message stream as it arrives."""
        who = self.identify(request)
        chat_id = request.path_params["chat_id"]
        continuation = bool_param(request, "continuation")
        key = request.headers.get("idempotency-key")
        if key is not None and not 0 < len(key) <= MAX_ANSWER_KEY:
            raise invalid(f"'Idempotency-Key' must be 1 to {MAX_ANSWER_KEY} characters")
        media_type = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if media_type != "text/event-stream":
            raise HTTPProblem(
                415,
                "UnsupportedMediaTypeError",
                "the body must be the UI-message stream sent with "
                f"'Content-Type: text/event-stream', not {media_type or 'no content type'!r}",
            )
        open_answer = functools.partial(
            self.store.turns.open_answer, chat_id, tenant=who.tenant, actor=who.actor,
            continuation=continuation, answer_key=key,
        )  # fmt: skip
        try:
            writer = await run_in_threadpool(open_answer)
        except AnswerAlreadyWrittenError as written:
            return JSONResponse(_duplicate(written))
        report = AnswerReport()
        outcome, reason, closed_elsewhere = await self._write(request, writer, report)
        return JSONResponse(
            await self._answer(who, chat_id, writer, report, key, outcome, reason, closed_elsewhere)
        )

    async def _write(
        self, request: Request, writer: StreamWriter, report: AnswerReport
    ) -> tuple[str, str | None, bool]:
        """Read the body into the stream and close it: (outcome, reason, closed elsewhere)."""
        outcome: str = "errored"
        reason: str | None = "the server failed while storing the answer"
        try:
            outcome, reason = await self._read(request, writer, report)
        except NoOpenStreamError:
            return "aborted", None, True  # stopped (or expired) elsewhere: nothing left to close
        except EventTooLargeError as error:
            reason = f"{error}: the stream was closed"
            await _close(writer, "errored", reason)
            raise HTTPProblem(413, "RequestTooLargeError", reason) from None
        except BaseException as error:
            if isinstance(error, asyncio.CancelledError):
                outcome, reason = "interrupted", "the server stopped reading the answer"
            await asyncio.shield(_close(writer, outcome, reason))
            raise
        try:
            await run_in_threadpool(writer.close, outcome, reason)
        except NoOpenStreamError:
            return "aborted", None, True
        return outcome, reason, False

    async def _read(
        self, request: Request, writer: StreamWriter, report: AnswerReport
    ) -> tuple[str, str | None]:
        """Give each chunk of the body to the stream as it arrives; how the body ended.

        What arrived before the body ended (however it ended) is stored first.
        """
        decoder = SSEDecoder(self.max_event_bytes)
        storing = _Storing(report, writer)
        pieces = request.stream().__aiter__()
        ending: tuple[str, str | None] = ("finished", None)
        while not decoder.done:
            try:
                async with asyncio.timeout(self.idle_seconds):  # no task per piece (wait_for)
                    piece = await pieces.__anext__()
            except StopAsyncIteration:
                storing.add(decoder.end())
                ending = ("interrupted", "the request body ended without 'data: [DONE]'")
                break
            except TimeoutError:
                ending = ("interrupted", f"nothing arrived for {self.idle_seconds:g} s")
                break
            except ClientDisconnect:
                ending = ("interrupted", "the writer hung up mid-stream")
                break
            try:
                events = decoder.feed(piece)
            except EventTooLargeError as error:
                storing.add(error.events)
                await storing.finish()  # what came before it is kept
                raise
            storing.add(events)
        await storing.finish()
        return ending

    async def _answer(
        self,
        who: Identity,
        chat_id: str,
        writer: StreamWriter,
        report: AnswerReport,
        key: str | None,
        outcome: str,
        reason: str | None,
        closed_elsewhere: bool,
    ) -> dict[str, Any]:
        """The JSON answer: the stream, what became of its chunks, the conversation's status."""
        status = await run_in_threadpool(self.store.reads.status, chat_id, tenant=who.tenant)
        if closed_elsewhere:  # how it was closed is the conversation's last outcome
            outcome, reason = status.last_outcome or outcome, status.last_reason
        return {
            "chatId": chat_id,
            "streamId": writer.stream_id,
            "messageId": writer.message_id,
            "answerKey": key,
            "duplicate": False,
            "outcome": outcome,
            "reason": reason,
            "closedElsewhere": closed_elsewhere,
            "chunks": {
                "received": report.received,
                "applied": report.applied,
                "replays": report.replays,
                "refused": report.refused_count,
            },
            "position": report.position,
            "refused": report.refused,
            "continuationRequest": status.continuation_request,
            "status": status.to_json(),
        }


def _duplicate(written: AnswerAlreadyWrittenError) -> dict[str, Any]:
    """The answer to a retried write: what the first write with the key became."""
    return {
        "chatId": written.chat_id,
        "streamId": written.stream_id,
        "messageId": written.message_id,
        "answerKey": written.answer_key,
        "duplicate": True,
        "outcome": written.outcome,
        "reason": written.reason,
    }


class _Storing:
    """Stores a body's chunks in a worker thread, one batch at a time, while the body is read.

    What arrives while a batch is being stored waits for the next one (so a
    fast writer's chunks go in larger batches); a batch stored starts the next
    at once, not at the next piece of body. A failed batch is raised at the
    next ``add`` or at ``finish``.
    """

    def __init__(self, report: AnswerReport, writer: StreamWriter) -> None:
        self.report, self.writer = report, writer
        self.pending: list[Any] = []
        self.job: asyncio.Future[None] | None = None

    def add(self, events: list[str]) -> None:
        """Take the events' chunks: folded here on the loop while that commits nothing and
        waits for nothing (``StreamWriter.append_unless_due``) and no batch is ahead of them;
        the rest in a worker thread."""
        job = self.job
        if job is not None and job.done() and (job.cancelled() or job.exception()):
            job.result()  # raises its error
        chunks = [_parsed(data) for data in events]
        if self.job is None and not self.pending:
            report, writer = self.report, self.writer
            for index, chunk in enumerate(chunks):
                folded = writer.append_unless_due(chunk)
                if folded is None:
                    chunks = chunks[index:]
                    break
                report.count(folded[0])
            else:
                return
        self.pending += chunks
        if self.job is None and self.pending:
            self._submit()

    async def finish(self) -> None:
        """Store everything added (raises the first failure)."""
        while self.job is not None or self.pending:
            job = self.job
            if job is not None:
                await asyncio.shield(job)  # a cancel must not lose the batch
                if self.job is job:
                    self.job = None
            if self.pending and self.job is None:
                self._submit()

    def _submit(self) -> None:
        chunks, self.pending = self.pending, []
        self.job = asyncio.ensure_future(
            asyncio.to_thread(self.report.take_all, chunks, self.writer)
        )
        self.job.add_done_callback(self._stored)

    def _stored(self, job: asyncio.Future[None]) -> None:
        if job is not self.job or job.cancelled() or job.exception() is not None:
            return  # a failure is left for add() or finish() to raise
        self.job = None
        if self.pending:
            self._submit()


async def _close(writer: StreamWriter, outcome: str, reason: str | None) -> None:
    """Close the stream after a failure (what arrived is kept); a second failure is not raised."""
    with contextlib.suppress(Exception):
        await asyncio.to_thread(writer.close, outcome, reason)
