"""Live streams (docs/behaviour.md §8): ``follow(chat, after=cursor)`` yields a stream's chunks from the durable log.

A follower reads the conversation's events straight from the log (no
separate buffer): the chunks of one stream, in stream order, then waits for
the next committed batch until the stream's ``StreamClosed`` event, and
returns. Replayed and refused chunks are recorded in the log but never
yielded. Because it only reads the log, a follower in one process sees the
chunks a writer in any other process commits: on PostgreSQL it sleeps on
``LISTEN`` (the channel ``eventsourcing`` NOTIFYs on every insert), on SQLite
and in memory it polls.

**Which stream.** ``after=None`` follows the stream that is open now from its
start, or, when none is open, replays the last stream (closed) and returns;
a conversation that never had a stream yields nothing. ``after=cursor``
follows the cursor's stream from just after that chunk, to its close; a
later stream is not followed (call ``follow`` again, with ``after=None``).

**Cursors** are opaque strings (each ``FollowedChunk.cursor``), safe in an SSE
``id:`` line. They read ``<stream id>:<position>:<version>``: the stream, the
chunk's position in it, and the version of the ``ChunksReceived`` event that
holds it (where reading resumes). They never expire: the log is append-only.

**Waiting.** ``timeout`` bounds how long the follower waits with nothing new
in the conversation's log (a writer's lease renewal is not news); then it
raises ``FollowTimeoutError``, which carries the cursor to resume from.
Without it the follower waits until the stream closes. A stream whose writer
died closes too: while it waits, a follower given ``expire`` (the store's
followers are) calls it at once and then every ``expire_every`` seconds, and
``expire`` closes the stream as ``interrupted`` once its lease has run out
(``chatledger.adapters.store.streams.leases``); the follower then reads that close
and returns.

**Resources.** The follower reads through the store's own connections. It
is woken by the store's ``News`` hub (``chatledger.adapters.store.reads.news``):
one thread and, on PostgreSQL, one LISTEN connection (application name
``chatledger-follow``) for all the store's followers, with at most one
pending wake-up per follower. It subscribes at the first ``next()`` and
unsubscribes when the generator finishes, raises, or is closed (``close()``,
or garbage collection); the hub's thread and connection end soon after its
last follower. Close a follower from the thread that iterates it. Without a
hub (``news=None``) a follower waits on its own: a LISTEN connection of its
own on PostgreSQL, polling on SQLite and memory.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, cast
from uuid import UUID

from chatledger.adapters.persistence.notify import listen, wait_for_notify
from chatledger.adapters.store.reads.news import News, Subscription
from chatledger.adapters.store.reads.stream_reader import (
    PAGE,
    FollowedChunk,
    Start,
    StreamReader,
    kind_of,
)
from chatledger.domain.aggregate import conversation_id
from chatledger.domain.errors import (
    ChatLedgerError,
    ConversationNotFoundError,
    FollowTimeoutError,
    InvalidInputError,
)
from chatledger.domain.events import (
    ChunksReceived,
    StreamOpened,
)

if TYPE_CHECKING:
    from chatledger.adapters.persistence.log import ConversationLog

__all__ = ["FollowTimeoutError", "FollowedChunk", "StreamReader", "follow", "stream_reader"]

POLL_SECONDS = 0.02
"""SQLite and memory: how often a waiting follower looks for new events."""
POSTGRES_RECHECK_SECONDS = 1.0
"""PostgreSQL: the longest wait without a NOTIFY before looking anyway (a safety net)."""
_APPLICATION_NAME = "chatledger-follow"


def follow(
    log: ConversationLog,
    tenant: str,
    chat_id: str,
    *,
    after: str | None = None,
    timeout: float | None = None,
    poll_seconds: float | None = None,
    news: News | None = None,
    expire: Callable[[str], bool] | None = None,
    expire_every: float = 10.0,
) -> Generator[FollowedChunk, None, None]:
    """Yield the chunks of the conversation's stream after ``after``, waiting for new ones until it closes.

    See the module docstring for which stream, the cursor, and waiting. The
    conversation, the cursor and the stream to follow are resolved now, so
    ``ConversationNotFoundError`` (unknown chat) and ``InvalidInputError``
    (a cursor not of this conversation) are raised by this call, before any
    iteration. ``poll_seconds`` is the polling period on SQLite and memory
    (default 20 ms) and the safety re-check period on PostgreSQL (default 1 s);
    with ``news`` (the store's hub) it is the follower's own re-check period
    on every backend (default 1 s). ``expire(stream_id)`` closes the stream if
    its writer's lease ran out (see "Waiting" above).
    """
    if timeout is not None and timeout <= 0:
        raise InvalidInputError(f"timeout must be positive seconds, not {timeout!r}")
    if poll_seconds is not None and poll_seconds <= 0:
        raise InvalidInputError(f"poll_seconds must be positive, not {poll_seconds!r}")
    reader = stream_reader(log, tenant, chat_id, after)
    if reader is None:
        return _nothing()
    postgres = log.config.backend == "postgres"
    if poll_seconds is None:
        poll_seconds = POSTGRES_RECHECK_SECONDS if postgres or news else POLL_SECONDS
    waiting = _Waiting(timeout, poll_seconds, postgres, news, expire, expire_every)
    return _follow(reader, chat_id, waiting)


# -- where to start -----------------------------------------------------------


def stream_reader(
    log: ConversationLog, tenant: str, chat_id: str, after: str | None
) -> StreamReader | None:
    """A reader of the stream to follow after ``after`` (None: the chat never had a stream).

    ConversationNotFoundError for an unknown chat, InvalidInputError for a
    cursor not of this conversation.
    """
    key = conversation_id(tenant, chat_id)
    if not log.select_events(key, limit=1):
        raise ConversationNotFoundError(tenant, chat_id)
    start = _last_stream(log, key) if after is None else _parse_cursor(log, key, after)
    if start is None:
        return None
    redactions = log.load(key, tenant, chat_id).state.redactions
    if redactions and start.message_id is None:
        start = _with_message(log, key, start)
    return StreamReader(log, key, start, redactions)


def _last_stream(log: ConversationLog, key: UUID) -> Start | None:
    """The last ``StreamOpened`` of the conversation (open or not), found by reading back by topic."""
    below: int | None = None
    while True:
        page = log.select_events(key, lte=below, desc=True, limit=PAGE)
        for stored in page:
            if kind_of(stored.topic) is StreamOpened:
                opened = cast(StreamOpened, log.decode(stored))
                return Start(
                    opened.stream_id, opened.originator_version, -1, None, opened.message_id
                )
        if len(page) < PAGE:
            return None
        below = page[-1].originator_version - 1


def _parse_cursor(log: ConversationLog, key: UUID, cursor: str) -> Start:
    """Check ``cursor`` names a chunk of this conversation's log; start right after it."""
    try:
        stream_id, position_text, version_text = cursor.rsplit(":", 2)
        position, version = int(position_text), int(version_text)
    except (AttributeError, ValueError):
        raise InvalidInputError(f"not a follow cursor: {cursor!r}") from None
    found = log.select_events(key, gt=version - 1, lte=version) if version > 0 else []
    if found and kind_of(found[0].topic) is ChunksReceived:
        batch = cast(ChunksReceived, log.decode(found[0]))
        if batch.stream_id == stream_id and 0 <= position - batch.first_seq < len(batch.chunks):
            return Start(stream_id, version - 1, position, cursor)
    raise InvalidInputError(f"cursor {cursor!r} names no chunk of this conversation")


def _with_message(log: ConversationLog, key: UUID, start: Start) -> Start:
    """``start`` with the message its stream writes (read back to the ``StreamOpened``)."""
    below: int | None = start.version
    while True:
        page = log.select_events(key, lte=below, desc=True, limit=PAGE)
        for stored in page:
            if kind_of(stored.topic) is StreamOpened:
                opened = cast(StreamOpened, log.decode(stored))
                if opened.stream_id == start.stream_id:
                    return replace(start, message_id=opened.message_id)
        if len(page) < PAGE:
            return start
        below = page[-1].originator_version - 1


def _nothing() -> Generator[FollowedChunk, None, None]:
    """A follower with no stream to follow."""
    yield from ()


# -- following -----------------------------------------------------------------


@dataclass(frozen=True)
class _Waiting:
    """How a follower waits: for how long at most, how it is woken, and how it ends a dead stream."""

    timeout: float | None
    poll_seconds: float
    postgres: bool
    news: News | None
    expire: Callable[[str], bool] | None
    expire_every: float


def _follow(
    reader: StreamReader, chat_id: str, waiting: _Waiting
) -> Generator[FollowedChunk, None, None]:
    """Read the stream's events, yield its applied chunks, wait, repeat, until it closes."""
    timeout, poll_seconds, news = waiting.timeout, waiting.poll_seconds, waiting.news
    checked_at = -math.inf  # when the lease was last checked: at the first wait, then periodically
    # Subscribe (or LISTEN) before reading: no event recorded after the read is missed.
    subscription: Subscription | None = news.subscribe(reader.key) if news is not None else None
    listener = listen(reader.log, _APPLICATION_NAME) if waiting.postgres and news is None else None
    try:
        news_at = time.monotonic()
        while True:
            found, more = reader.read()
            if reader.news:
                news_at = time.monotonic()
            yield from found
            if reader.ended:
                return
            if more:
                continue  # more to read now
            if waiting.expire is not None and time.monotonic() - checked_at >= waiting.expire_every:
                checked_at = time.monotonic()
                with contextlib.suppress(ChatLedgerError):  # e.g. unreachable: check again later
                    if waiting.expire(reader.stream_id):
                        continue  # closed as interrupted: read that close, and return
            wait = poll_seconds
            if waiting.expire is not None:
                wait = min(wait, max(checked_at + waiting.expire_every - time.monotonic(), 0.001))
            if timeout is not None:
                left = timeout - (time.monotonic() - news_at)
                if left <= 0:
                    raise FollowTimeoutError(chat_id, reader.stream_id, timeout, reader.cursor)
                wait = min(wait, left)
            if subscription is not None:
                subscription.wait(wait)
            elif listener is None:
                time.sleep(wait)
            else:
                wait_for_notify(listener, wait)
    finally:
        if subscription is not None and news is not None:
            news.unsubscribe(subscription)
        if listener is not None:
            listener.close()


# -- reading the log -------------------------------------------------------------
