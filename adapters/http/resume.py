"""``GET /api/chat/{id}/stream``: an open stream resumed from the log, live, as Server-Sent Events.

The log is followed with ``store.follow_async``: a resumed client costs a
coroutine, not a thread, and the follower reads a page of the log only when
the client has taken what came before (a slow client holds at most a page).
Each chunk is sent as the client must get it (``sse.resumed``) with its
cursor as the SSE ``id``, and an SSE comment keeps a quiet stream open.

204 means no stream is open. A resume asked while this process records the
request that opens one (``Resumes.opening``) waits for it rather than answer
204 for an answer about to stream; another server process of the same
database cannot know, and answers from the log as it stands.

An AI SDK 7 client expects a resume from the start to replay the *whole*
assistant message (``resumeStreamIsReplay``, the default of its
``DefaultChatTransport`` and fixed in its ``WebSocketChatTransport``): it
empties the message at the first ``start`` and rebuilds it from the chunks.
A continuation's stream holds only what it adds, so for a v7 conversation
the message as it stood when the continuation opened is sent first, as
chunks (``Reader.resume_prefix``; without SSE ids: a client resuming after a
cursor gets only the stream's chunks after it).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections import OrderedDict
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.responses import Response, StreamingResponse

from chatledger.adapters.http.sse import DONE, KEEP_ALIVE, SSE_HEADERS, sse_event
from chatledger.adapters.store import ConversationStore
from chatledger.adapters.store.reads import AsyncFollower, FollowedChunk
from chatledger.adapters.store.reads.coalesce import Coalesced
from chatledger.adapters.store.reads.live_stream import LiveStream
from chatledger.domain.continuation import ConversationStatus
from chatledger.domain.delivery import depends_on_message, resumed
from chatledger.domain.errors import ChatLedgerError, FollowTimeoutError

__all__ = ["Opening", "Resumes"]

log = logging.getLogger("chatledger.http")

_FRAMES = 4096
"""Encoded SSE events kept for the other followers of a stream (the most recent ones)."""


class Opening:
    """A request of this process recording a turn; ``stream_id`` once it opened the answer's stream."""

    def __init__(self) -> None:
        self.done = asyncio.Event()
        self.stream_id: str | None = None


class Resumes:
    """Answers resume requests on one store."""

    def __init__(self, store: ConversationStore, *, keepalive_seconds: float) -> None:
        self.store = store
        self.keepalive_seconds = keepalive_seconds
        self._opening: dict[tuple[str, str], list[Opening]] = {}
        """Requests of this process recording a turn (whose stream is about to open), by chat."""
        self._statuses: Coalesced[tuple[str, str], ConversationStatus] = Coalesced()
        self._prefixes: Coalesced[tuple[str, str], list[dict[str, Any]]] = Coalesced()
        self._stored_messages: Coalesced[tuple[str, str], list[dict[str, Any]]] = Coalesced()
        """Status, prefix and message reads of a chat, once for the resumes that ask them together."""
        self._frames: OrderedDict[str, tuple[dict[str, Any], str]] = OrderedDict()
        """Chunks encoded as SSE, by cursor: the followers of a stream share its chunks, and so
        their encoding (kept only for the very chunk encoded: a redacted reading is another)."""

    @contextlib.asynccontextmanager
    async def opening(self, tenant: str, chat_id: str) -> AsyncIterator[Opening]:
        """Around recording a request that opens an answer's stream (``take_turn``).

        A turn is recorded in steps: the client's message is committed, then
        the stream is opened. A resume asked in between would find the message
        and no stream, and answer 204 for an answer about to stream (under
        load, when the steps are far apart, a client resuming at once lost its
        answer). Resumes of this chat wait for the recording to end instead.
        Set ``stream_id`` on the ``Opening`` once the stream is open.
        """
        key = (tenant, chat_id)
        opening = Opening()
        self._opening.setdefault(key, []).append(opening)
        try:
            yield opening
        finally:
            opening.done.set()
            waiting = self._opening[key]
            waiting.remove(opening)
            if not waiting:
                del self._opening[key]

    async def open_stream_id(self, chat_id: str, tenant: str) -> str | None:
        """The stream open now, or the one a turn this process was opening on the chat opened.

        The latter may have closed by the time it is known (a short answer):
        it is still the answer the client asked for, replayed from the log.
        """
        opening = list(self._opening.get((tenant, chat_id), ()))  # taken before the status
        status = await self._status(chat_id, tenant)
        if status.stream_id is None and opening:  # begun before the status was read: wait
            await asyncio.gather(*(each.done.wait() for each in opening))
            opened = [each.stream_id for each in opening if each.stream_id is not None]
            if opened:
                return opened[-1]
            status = await self._status(chat_id, tenant)
        return status.stream_id

    async def _status(self, chat_id: str, tenant: str) -> ConversationStatus:
        """The chat's status, read once for the resumes asking it together (a burst)."""
        return await self._statuses(
            (tenant, chat_id),
            lambda: run_in_threadpool(self.store.reads.status, chat_id, tenant=tenant),
        )

    async def response(self, chat_id: str, tenant: str, after: str | None) -> Response:
        """Replay the open stream from its start (or after a cursor), live; 204 when none is open."""
        live = self._live(chat_id, tenant) if after is None else None
        if live is None and after is None and await self.open_stream_id(chat_id, tenant) is None:
            return Response(status_code=204)
        prefix = (
            []
            if after is not None or (live is not None and not live.needs_prefix)
            else await self._prefixes(
                (tenant, chat_id),
                lambda: run_in_threadpool(
                    lambda: self.store.reads.resume_prefix(chat_id, tenant=tenant)
                ),
            )
        )
        follower = await self.store.reads.follow_async(
            chat_id, after=after, tenant=tenant, timeout=self.keepalive_seconds,
            **({} if live is None else {"live": live}),
        )  # fmt: skip
        return StreamingResponse(
            self._follow_events(follower, chat_id, tenant, prefix, live),
            media_type="text/event-stream",
            headers=SSE_HEADERS,
        )

    def _live(self, chat_id: str, tenant: str) -> LiveStream | None:
        """The stream open now as this process's writer of it holds it (None: ask the log).

        A stream written here is known without a load of the conversation:
        which stream, whether a prefix is sent, the message a ``start`` names.
        """
        writer_of = getattr(getattr(self.store, "streams", None), "writer_of", None)
        writer = None if writer_of is None else writer_of(chat_id, tenant=tenant)
        return None if writer is None else writer.live_stream()

    async def _follow_events(
        self,
        follower: AsyncFollower,
        chat_id: str,
        tenant: str,
        prefix: Sequence[dict[str, Any]] = (),
        live: LiveStream | None = None,
    ) -> AsyncIterator[str]:
        if prefix:
            yield "".join(sse_event(chunk) for chunk in prefix)
        followed = self.followed(follower, chat_id, tenant, live)
        async with contextlib.aclosing(followed) as items:
            async for item in items:
                if item is KEEP_ALIVE:
                    yield KEEP_ALIVE
                elif isinstance(item, list):  # what one read of the log found: one write
                    yield "".join([self._frame(each) for each in item])
                else:
                    yield sse_event({"type": "error", "errorText": str(item)})
        yield DONE

    def _frame(self, item: FollowedChunk) -> str:
        """``item`` as an SSE event with its cursor, encoded once for all the followers given it."""
        kept = self._frames.get(item.cursor)
        if kept is not None and kept[0] is item.chunk:
            return kept[1]
        frame = sse_event(item.chunk, item.cursor)
        self._frames[item.cursor] = (item.chunk, frame)
        if len(self._frames) > _FRAMES:
            self._frames.popitem(last=False)
        return frame

    async def followed(
        self, follower: AsyncFollower, chat_id: str, tenant: str, live: LiveStream | None = None
    ) -> AsyncGenerator[list[FollowedChunk] | str | ChatLedgerError, None]:
        """The followed chunks as the client must get them, ``KEEP_ALIVE`` when quiet, then the end.

        ``live``: the followed stream's writer in this process, asked first
        for the message a chunk depends on (no load of the conversation).

        The chunks come in lists, each what one read of the log found (never
        empty): a client gets them in one write, not one write each. A
        ``ChatLedgerError`` that stops the follower is the last item. Close
        the iterator (``contextlib.aclosing``) to stop early.
        """
        try:
            while True:
                try:
                    async for first in follower:
                        sent = []
                        for item in (first, *follower.take_ready()):
                            if depends_on_message(item.chunk):
                                shown = await self._as_sent(item, chat_id, tenant, live)
                                if shown is not None:
                                    sent.append(shown)
                            else:  # the common case, sent as it is
                                sent.append(item)
                        if sent:
                            yield sent
                    return
                except FollowTimeoutError as idle:
                    yield KEEP_ALIVE
                    await follower.aclose()
                    follower = await self.store.reads.follow_async(
                        chat_id, after=idle.cursor, tenant=tenant, timeout=self.keepalive_seconds
                    )
        except ChatLedgerError as error:
            log.warning("resume of chat %r stopped: %s", chat_id, error)
            yield error
        finally:
            await follower.aclose()

    async def _as_sent(
        self, item: FollowedChunk, chat_id: str, tenant: str, live: LiveStream | None = None
    ) -> FollowedChunk | None:
        """A followed chunk that ``depends_on_message`` as the client must get it, or None to leave it out.

        The message it depends on comes from the conversation's aggregate
        (the log), not the read models: a resume never waits for (or does)
        the projection of every other conversation; or from the stream's
        writer in this process (``live``), which folds that very message.
        """
        if live is not None:
            told, sent = live.writer.resumed_chunk(item.chunk)
            if told:
                return None if sent is None else dataclasses.replace(item, chunk=sent)
        stored = await self._stored_messages(
            (tenant, chat_id), lambda: run_in_threadpool(self._messages, chat_id, tenant)
        )
        message = next((m for m in reversed(stored) if m["role"] == "assistant"), None)
        sent = resumed(item.chunk, message)
        return None if sent is None else dataclasses.replace(item, chunk=sent)

    def _messages(self, chat_id: str, tenant: str) -> list[dict[str, Any]]:
        state = self.store.reads.stored_state(chat_id, tenant=tenant)
        return [] if state is None else state.messages
