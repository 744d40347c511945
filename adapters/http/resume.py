"""``GET /api/chat/{id}/stream``: an open stream resumed from the log, live, as Server-Sent Events.

The log is followed (``store.follow``) in a thread of its own, as ``follow``
asks; each chunk is sent as the client must get it (``sse.resumed``) with its
cursor as the SSE ``id``, and an SSE comment keeps a quiet stream open.

An AI SDK 7 client expects a resume from the start to replay the *whole*
assistant message (``resumeStreamIsReplay``, the default of its
``DefaultChatTransport`` and fixed in its ``WebSocketChatTransport``): it
empties the message at the first ``start`` and rebuilds it from the chunks.
A continuation's stream holds only what it adds, so for a v7 conversation
``message_replay`` first sends the message as it stood when the continuation
opened, as chunks (``domain.message_replay``; without SSE ids: a client
resuming after a cursor gets only the stream's chunks after it).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import threading
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.responses import Response, StreamingResponse

from chatledger.adapters.http.sse import (
    DONE,
    KEEP_ALIVE,
    SSE_HEADERS,
    depends_on_message,
    resumed,
    sse_event,
)
from chatledger.adapters.store import ConversationStore
from chatledger.adapters.store.follow import FollowedChunk
from chatledger.domain.errors import ChatLedgerError, FollowTimeoutError
from chatledger.domain.message_replay import replay_chunks

__all__ = ["Resumes", "message_replay"]

log = logging.getLogger("chatledger.http")


class Resumes:
    """Answers resume requests on one store."""

    def __init__(self, store: ConversationStore, *, keepalive_seconds: float) -> None:
        self.store = store
        self.keepalive_seconds = keepalive_seconds

    async def response(self, chat_id: str, tenant: str, after: str | None) -> Response:
        """Replay the open stream from its start (or after a cursor), live; 204 when none is open."""
        status = await run_in_threadpool(self.store.status, chat_id, tenant=tenant)
        if status.stream_id is None and after is None:
            return Response(status_code=204)
        prefix = (
            []
            if after is not None
            else await run_in_threadpool(message_replay, self.store, chat_id, tenant)
        )
        follower = await run_in_threadpool(
            self.store.follow, chat_id, after=after, tenant=tenant, timeout=self.keepalive_seconds
        )
        return StreamingResponse(
            self._follow_events(follower, chat_id, tenant, prefix),
            media_type="text/event-stream",
            headers=SSE_HEADERS,
        )

    async def _follow_events(
        self,
        follower: Iterator[FollowedChunk],
        chat_id: str,
        tenant: str,
        prefix: Sequence[dict[str, Any]] = (),
    ) -> AsyncIterator[str]:
        if prefix:
            yield "".join(sse_event(chunk) for chunk in prefix)
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[Any] = asyncio.Queue()
        stop = threading.Event()
        thread = threading.Thread(
            target=self._pump,
            args=(follower, chat_id, tenant, loop, queue, stop),
            name="chatledger-resume",
            daemon=True,
        )
        thread.start()
        try:
            while True:
                item = await queue.get()
                if item is None:
                    yield DONE
                    return
                if item is KEEP_ALIVE:
                    yield KEEP_ALIVE
                elif isinstance(item, FollowedChunk):
                    yield sse_event(item.chunk, item.cursor)
                else:
                    yield sse_event({"type": "error", "errorText": str(item)})
        finally:
            stop.set()

    def _pump(
        self,
        follower: Iterator[FollowedChunk],
        chat_id: str,
        tenant: str,
        loop: asyncio.AbstractEventLoop,
        queue: asyncio.Queue[Any],
        stop: threading.Event,
    ) -> None:
        """Follow the log in one thread (as ``follow`` asks), handing chunks to the event loop."""

        def put(item: Any) -> None:
            with contextlib.suppress(RuntimeError):  # the loop is gone: nobody listens
                loop.call_soon_threadsafe(queue.put_nowait, item)

        try:
            while not stop.is_set():
                try:
                    for item in follower:
                        sent = self._as_sent(item, chat_id, tenant)
                        if sent is not None:
                            put(sent)
                        if stop.is_set():
                            return
                    return
                except FollowTimeoutError as idle:
                    put(KEEP_ALIVE)
                    follower = self.store.follow(
                        chat_id, after=idle.cursor, tenant=tenant, timeout=self.keepalive_seconds
                    )
        except ChatLedgerError as error:
            log.warning("resume of chat %r stopped: %s", chat_id, error)
            put(error)
        finally:
            close = getattr(follower, "close", None)
            if close is not None:
                with contextlib.suppress(Exception):
                    close()
            put(None)

    def _as_sent(self, item: FollowedChunk, chat_id: str, tenant: str) -> FollowedChunk | None:
        """A followed chunk as the client must get it (``http_sse.resumed``), or None to leave it out."""
        if not depends_on_message(item.chunk):
            return item  # the common case needs no read of the messages
        stored = self.store.messages(chat_id, tenant=tenant)
        message = next((m for m in reversed(stored) if m["role"] == "assistant"), None)
        sent = resumed(item.chunk, message)
        return None if sent is None else dataclasses.replace(item, chunk=sent)


def message_replay(store: ConversationStore, chat_id: str, tenant: str) -> list[dict[str, Any]]:
    """What an AI SDK 7 resume sends before the open stream: the message as its continuation found it.

    Empty unless the conversation is v7 and its open stream continues a
    message (then the first stream's own chunks are the whole message), and
    when the message cannot be expressed as chunks (logged; the client then
    gets the stream alone, as before). Call it in a worker thread.
    """
    state = store.conversation(chat_id, tenant=tenant).state
    stream = state.stream
    if state.ai_sdk != 7 or stream is None or not stream.continuation:
        return []
    opened = store.history(chat_id, tenant=tenant, kinds=["stream-opened"])
    if not opened or opened[-1].details.get("streamId") != stream.stream_id:
        return []
    before = store.messages(chat_id, tenant=tenant, at_version=opened[-1].position - 1)
    if stream.message_index >= len(before):
        return []
    chunks = replay_chunks(before[stream.message_index])
    if chunks is None:
        log.warning(
            "chat %r: message %r cannot be replayed as chunks; resuming its stream alone",
            chat_id,
            before[stream.message_index].get("id"),
        )
        return []
    return chunks
