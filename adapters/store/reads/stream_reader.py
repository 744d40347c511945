"""Reading one followed stream's chunks: from the log a page at a time, or as just committed.

``StreamReader`` is what every follower reads with (``follow``, ``follow_async``
and the shared catch-up): it knows which stream, from where, and which
redactions apply, and turns the conversation's events into the stream's
chunks as views show them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast
from uuid import UUID

from eventsourcing.persistence import StoredEvent
from eventsourcing.utils import TopicError, resolve_topic

from chatledger.domain.events import (
    ChunksReceived,
    Redacted,
    StreamClosed,
    StreamOpened,
    StreamRenewed,
)
from chatledger.domain.redaction import Masks

if TYPE_CHECKING:
    from chatledger.adapters.persistence.log import ConversationLog

__all__ = ["PAGE", "FollowedChunk", "Start", "StreamReader", "kind_of"]

PAGE = 256
"""Events read per query."""


@dataclass(frozen=True, slots=True)
class FollowedChunk:
    """One chunk of a followed stream, as recorded (JSON, unknown keys kept)."""

    cursor: str
    """Pass it back as ``follow(..., after=cursor)`` to resume right after this chunk."""
    chunk: dict[str, Any]
    """The AI SDK UI message chunk, exactly as received."""
    stream_id: str
    """The stream it arrived on."""
    position: int
    """Its position in the stream (from 0; replayed and refused chunks take positions too)."""


@dataclass(frozen=True)
class Start:
    """Where a follower starts: after event ``version``, skipping positions up to ``position``."""

    stream_id: str
    version: int
    position: int
    cursor: str | None
    message_id: str | None = None
    """The message the stream writes (None: not looked up yet)."""


class StreamReader:
    """Reads one stream's applied chunks from the log, a page at a time, from a start point on.

    No waiting and no connection of its own: ``read`` runs one query (in
    whatever thread the caller likes) and returns what is new. The blocking
    ``follow`` and the asynchronous ``follow_async`` wait in between.
    Redacted content (``redactions``, and redactions recorded meanwhile) is
    read as ``[redacted]``, as every view shows it.
    """

    def __init__(
        self, log: ConversationLog, key: UUID, start: Start, redactions: list[dict[str, Any]]
    ) -> None:
        self.log = log
        self.key = key
        self._start = start
        self.stream_id = start.stream_id
        self.version = start.version
        self.skip_to = start.position
        self.cursor = start.cursor
        """The cursor of the last chunk read (to resume from after a timeout)."""
        self.ended = False
        """The stream closed (or another began): nothing more will come."""
        self.news = False
        """Whether the last read found news: any event but a writer's lease renewal."""
        self._redactions = redactions
        self._masks, self._message_id, self._seen = Masks(redactions), start.message_id, set[Any]()

    def fresh(self) -> StreamReader:
        """A reader of the same stream from the same start point, as yet unread."""
        return StreamReader(self.log, self.key, self._start, self._redactions)

    @property
    def start_position(self) -> int:
        """The position it started after: it reads the stream's chunks past it."""
        return self._start.position

    @property
    def redaction_count(self) -> int:
        """How many redactions its masks apply (those known at its start and those read since)."""
        return len(self._redactions)

    def read(self) -> tuple[list[FollowedChunk], bool]:
        """The chunks recorded since the last read, and whether there is more to read right away."""
        log = self.log
        page = log.select_events(self.key, gt=self.version, limit=PAGE)
        found: list[FollowedChunk] = []
        self.news = False
        for stored in page:
            if self._take(stored.originator_version, kind_of(stored.topic), stored, found):
                return found, False
        return found, len(page) == PAGE

    def apply(self, events: Sequence[Any]) -> list[FollowedChunk] | None:
        """The chunks of ``events``, this conversation's events as this process just committed them.

        What ``read`` would return for them, without reading the log: events
        at or below the version read so far are left out (read already). None
        when they do not follow on from it (the log holds events in between:
        ``read`` it); nothing is taken then.
        """
        fresh = [event for event in events if event.originator_version > self.version]
        self.news = False
        if not fresh:
            return []
        if fresh[0].originator_version != self.version + 1:
            return None
        found: list[FollowedChunk] = []
        for event in fresh:
            if self._take(event.originator_version, type(event), event, found):
                break
        return found

    def _take(
        self, version: int, kind: type | None, event: Any, found: list[FollowedChunk]
    ) -> bool:
        """Take one event (stored, or as committed) at ``version`` into ``found``; True if the stream ended."""
        self.version = version
        stream_id = self.stream_id
        if kind is not StreamRenewed:  # a renewal is not news: keep-alives go on
            self.news = True
        if kind is ChunksReceived:
            batch = cast(ChunksReceived, self._decoded(event))
            if batch.stream_id != stream_id:
                return False
            skipped = batch.skipped()
            for index, chunk in enumerate(batch.chunks):
                position = batch.first_seq + index
                if index in skipped:
                    continue
                if chunk.get("type") == "start" and isinstance(chunk.get("messageId"), str):
                    self._message_id = chunk["messageId"]
                if position <= self.skip_to:
                    continue
                self.cursor = f"{stream_id}:{position}:{version}"
                shown = self._masks.chunk(chunk, self._message_id, self._seen)
                found.append(FollowedChunk(self.cursor, shown, stream_id, position))
        elif kind is Redacted:
            self._redactions = [*self._redactions, self._decoded(event).record()]
            self._masks = Masks(self._redactions)
        elif kind is StreamClosed:
            if cast(StreamClosed, self._decoded(event)).stream_id == stream_id:
                self.ended = True
                return True
        elif (
            kind is StreamOpened and cast(StreamOpened, self._decoded(event)).stream_id != stream_id
        ):
            self.ended = True  # cannot happen while ours is open (one stream at a time)
            return True
        return False

    def _decoded(self, event: Any) -> Any:
        """The domain event: ``event`` itself, or decoded if it is a stored one."""
        return self.log.decode(event) if isinstance(event, StoredEvent) else event


def kind_of(topic: str) -> type | None:
    """The event class a stored topic names (old, registered topics too), without decoding the event."""
    try:
        return cast(type, resolve_topic(topic))
    except TopicError:  # a topic this code does not know: not an event the follower needs
        return None
