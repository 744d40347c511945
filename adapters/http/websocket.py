"""``/api/chat/ws``: the AI SDK 7 ``WebSocketChatTransport`` protocol over the store.

One socket carries many requests, told apart by ``requestId``. Client frames:
``send`` (as ``POST /api/chat``: what the client added is recorded, an answer
starts; a user message sent mid-answer is steering, ``steering.py``),
``resume`` (follow the open answer), ``abort`` (stop sending that request's
chunks; the answer goes on, as when an HTTP client hangs up).
Server frames: ``start`` (a resume found an answer), ``chunk`` with
``sequence``, ``end``, ``error`` and ``no-active`` (nothing to resume).

A ``send`` takes the same path as ``POST /api/chat`` (``chat.ChatSends``) and
gets the chunks it would stream; a ``resume`` gets the open answer from the
log (``store.follow``), so any server process on the same database serves
it, and every connected client of a chat sees every applied chunk live. A
resume is a complete replay of the message, as the transport expects: a
continuation's stream is preceded by the message as it stood when the
continuation opened (``Reader.resume_prefix``). ``sequence``
counts the chunks sent for the request from the first (replays and refusals
are not sent), so ``resume`` with ``lastSequence`` continues right after the
last chunk a client saw. The bearer token travels in the frame's
``headers`` (browsers cannot set handshake headers).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.websockets import WebSocket, WebSocketDisconnect

from chatledger.adapters.http.chat import ChatSends
from chatledger.adapters.http.deadlines import DEFAULT_WEBSOCKET_IDLE_SECONDS, ConnectionCounts
from chatledger.adapters.http.errors import HTTPProblem
from chatledger.adapters.http.resume import Resumes
from chatledger.adapters.store.turns.outbox import Outbox
from chatledger.adapters.store.turns.service import Steered
from chatledger.domain.errors import ChatLedgerError

__all__ = ["ChatSocket"]

Frame = dict[str, Any]
Send = Callable[[Frame], Awaitable[None]]


def _forget(tasks: dict[str, asyncio.Task[None]], request_id: str, _: object) -> None:
    """A request's task ended: it is no longer abortable."""
    tasks.pop(request_id, None)


class _FrameHeaders:
    """A frame's ``headers`` where the app reads a request's (for the bearer token)."""

    def __init__(self, headers: Any) -> None:
        items = headers.items() if isinstance(headers, dict) else ()
        self.headers = {str(k).lower(): str(v) for k, v in items}


class ChatSocket:
    """The WebSocket endpoint of one chat app: its sends and its resumes."""

    def __init__(
        self,
        sends: ChatSends,
        resumes: Resumes,
        idle_seconds: float = DEFAULT_WEBSOCKET_IDLE_SECONDS,
        counts: ConnectionCounts | None = None,
    ) -> None:
        self.sends = sends
        self.resumes = resumes
        self.keepalive_seconds = sends.keepalive_seconds
        self.idle_seconds = idle_seconds
        """A socket silent this long with no request in flight is closed (1001)."""
        self.counts = counts or ConnectionCounts()

    async def serve(self, websocket: WebSocket) -> None:
        """Serve one connection until the client closes it."""
        await websocket.accept()
        lock = asyncio.Lock()
        tasks: dict[str, asyncio.Task[None]] = {}

        async def send(frame: Frame) -> None:
            async with lock:
                await websocket.send_text(json.dumps(frame))

        try:
            while True:
                try:
                    async with asyncio.timeout(self.idle_seconds):
                        text = await websocket.receive_text()
                except TimeoutError:
                    if tasks:  # an answer in flight: not idle
                        continue
                    self.counts.idle_websockets_closed += 1
                    await websocket.close(1001, f"idle for {self.idle_seconds:g} s")
                    return
                try:
                    frame = json.loads(text)
                except ValueError:
                    await websocket.close(1003, "frames must be JSON")
                    return
                kind = frame.get("type") if isinstance(frame, dict) else None
                request_id = frame.get("requestId") if isinstance(frame, dict) else None
                if not isinstance(request_id, str) or kind not in ("send", "resume", "abort"):
                    await websocket.close(1003, "unknown frame")
                    return
                if kind == "abort":
                    task = tasks.pop(request_id, None)
                    if task is not None:
                        task.cancel()
                    continue
                task = asyncio.create_task(self._serve(frame, send))
                tasks[request_id] = task
                task.add_done_callback(functools.partial(_forget, tasks, request_id))
        except WebSocketDisconnect:
            return
        finally:
            for task in list(tasks.values()):
                task.cancel()

    async def _serve(self, frame: Frame, send: Send) -> None:
        request_id = frame["requestId"]
        try:
            await self._answer(frame, send)
        except asyncio.CancelledError:
            raise
        except HTTPProblem as problem:
            await send({"type": "error", "requestId": request_id, "errorText": problem.message})
        except ChatLedgerError as error:
            await send({"type": "error", "requestId": request_id, "errorText": str(error)})

    async def _answer(self, frame: Frame, send: Send) -> None:
        sends, request_id = self.sends, frame["requestId"]
        who = sends.identify(_FrameHeaders(frame.get("headers")))  # type: ignore[arg-type]
        tenant = who.tenant
        chat_id = frame.get("id")
        if not isinstance(chat_id, str) or not chat_id:
            raise HTTPProblem(400, "InvalidInputError", "'id' must be the chat id")
        skip = -1
        if frame["type"] == "send":
            given = frame.get("body")
            body: dict[str, Any] = given if isinstance(given, dict) else {}
            messages = frame.get("messages")
            if not isinstance(messages, list):
                raise HTTPProblem(400, "InvalidInputError", "'messages' must be a list")
            trigger = frame.get("trigger", "submit-message")
            message_id = frame.get("messageId")
            turn = await sends.take(who, chat_id, messages, trigger, message_id, body)
            if isinstance(turn, Steered):  # sent mid-answer: answered once that answer ends
                answer = await sends.answer_of(turn)
                if answer is None:  # the running answer took it
                    await send({"type": "end", "requestId": request_id})
                    return
                turn = answer
            # What POST /api/chat would send (replays the client still needs included).
            await self._relay(sends.runner.start(turn), request_id, send)
            await send({"type": "end", "requestId": request_id})
            return
        if await self.resumes.open_stream_id(chat_id, tenant) is None:
            await send({"type": "no-active", "requestId": request_id})
            return
        last = frame.get("lastSequence")
        skip = last if isinstance(last, int) and last >= 0 else -1
        await send({"type": "start", "requestId": request_id})
        # A complete replay of the message (v7: a continuation's stream after what came before it).
        prefix = await run_in_threadpool(
            lambda: sends.store.reads.resume_prefix(chat_id, tenant=tenant)
        )
        await self._stream(chat_id, tenant, request_id, skip, send, prefix)
        await send({"type": "end", "requestId": request_id})

    async def _relay(self, outbox: Outbox, request_id: str, send: Send) -> None:
        """Send what the answer's outbox holds as numbered chunk frames."""
        sequence = -1
        while True:
            await outbox.wait(self.keepalive_seconds)
            chunks = outbox.take()
            if outbox.overflowed:
                raise HTTPProblem(503, "FellBehindError", "the client fell behind: resume it")
            for chunk in chunks:
                sequence += 1
                frame = {"chunk": chunk, "sequence": sequence}
                await send({"type": "chunk", "requestId": request_id, **frame})
            if outbox.ended and not outbox.waiting:
                return

    async def _stream(
        self,
        chat_id: str,
        tenant: str,
        request_id: str,
        skip: int,
        send: Send,
        prefix: list[dict[str, Any]],
    ) -> None:
        """Send ``prefix``, then the open stream's chunks from the log, numbered from the first."""
        sequence = -1
        for chunk in prefix:
            sequence += 1
            if sequence > skip:
                await send(
                    {"type": "chunk", "requestId": request_id, "chunk": chunk, "sequence": sequence}
                )
        follower = await self.sends.store.reads.follow_async(
            chat_id, tenant=tenant, timeout=self.keepalive_seconds
        )
        async with contextlib.aclosing(self.resumes.followed(follower, chat_id, tenant)) as items:
            async for item in items:
                if isinstance(item, list):
                    for followed in item:
                        sequence += 1
                        if sequence > skip:
                            frame = {"chunk": followed.chunk, "sequence": sequence}
                            await send({"type": "chunk", "requestId": request_id, **frame})
                elif isinstance(item, ChatLedgerError):
                    raise item
