"""A stream this process writes, seen from its writer's memory: a resume set up without a load.

A client resuming an answer must learn which stream is open, whether the
message it continues is replayed first, where the stream starts in the log,
which redactions apply, and the message id a ``start`` names. Read from the
log, that is a load of the whole conversation for each (under load the
resumes of a burst took seconds). When this process writes the stream, its
writer holds all of it in memory: ``LiveStream`` is what it tells, and
``live_stream_reader`` finds the stream's start by reading back from the
head of the log to the open (the few events since, not the conversation),
in the same query as the follower's first read.

The writer answers only when that is exactly what the log says: its open
is committed, it is not stale, and no redaction applies (one recorded
meanwhile by another process would not be in its memory: a ``Redacted``
event met while reading back is applied as a resolution from the log
applies it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, cast
from uuid import UUID

from chatledger.adapters.store.reads.stream_reader import (
    PAGE,
    FollowedChunk,
    Start,
    StreamReader,
    kind_of,
)
from chatledger.domain.events import Redacted, StreamOpened
from chatledger.domain.redaction import Masks

if TYPE_CHECKING:
    from chatledger.adapters.persistence.log import ConversationLog

__all__ = ["LiveStream", "LiveStreamReader", "LiveWriter"]


class LiveWriter(Protocol):
    """What a resume asks of the writer of the stream it follows (a ``StreamWriter``)."""

    def live_stream(self) -> LiveStream | None:
        """The open stream as the writer holds it, or None (busy, ended, or not as the log says)."""

    def writing(self, stream_id: str) -> bool:
        """Whether it still writes stream ``stream_id`` (it keeps the stream's lease renewed)."""

    def resumed_chunk(self, chunk: Any) -> tuple[bool, Any]:
        """``(True, resumed(chunk, message))`` with the message the writer folds; ``(False,
        None)`` when it cannot tell without waiting (ask the log)."""


@dataclass(frozen=True, slots=True)
class LiveStream:
    """An open stream this process writes, as its writer holds it (nothing read from the log)."""

    key: UUID
    """The conversation's id in the log."""
    stream_id: str
    continuation: bool
    """The stream continues a message (an AI SDK 7 resume replays that message first)."""
    replays_message_on_resume: bool
    """The conversation's dialect replays the whole message on a resume from the start."""
    writer: LiveWriter

    @property
    def needs_prefix(self) -> bool:
        """Whether a resume from the start sends the message as it stood before (``resume_prefix``)."""
        return self.continuation and self.replays_message_on_resume


class LiveStreamReader(StreamReader):
    """A reader of ``live``'s stream from its start, made without a read of the log.

    Its first ``read`` finds the start by reading back from the head of the
    log to the stream's open, and takes the events read on the way (one query
    for a stream begun a page ago: where ``stream_reader`` and a first read
    made three, and a load). A redaction met on the way is applied as
    ``stream_reader`` applies those it finds: to every chunk, from the start.
    """

    def __init__(self, log: ConversationLog, live: LiveStream, tenant: str, chat_id: str) -> None:
        super().__init__(log, live.key, Start(live.stream_id, -1, -1, None), [])
        self._live, self._tenant, self._chat_id = live, tenant, chat_id
        self._started = False

    def fresh(self) -> LiveStreamReader:
        """A reader of the same stream from its start, as yet unread."""
        return LiveStreamReader(self.log, self._live, self._tenant, self._chat_id)

    def read(self) -> tuple[list[FollowedChunk], bool]:
        """The chunks recorded since the last read (the first: since the stream's open)."""
        if self._started:
            return super().read()
        events = self._back_to_open()
        self._started = True
        found: list[FollowedChunk] = []
        self.news = False
        for stored in events:
            if self._take(stored.originator_version, kind_of(stored.topic), stored, found):
                break
        return found, False

    def _back_to_open(self) -> list[Any]:
        """The events after the stream's open, in order, read back from the head of the log.

        Sets where the stream starts; a stream whose open is not in the log
        (erased meanwhile) has ended.
        """
        since: list[Any] = []
        redacted = False
        below: int | None = None
        while True:
            page = self.log.select_events(self.key, lte=below, desc=True, limit=PAGE)
            for stored in page:
                kind = kind_of(stored.topic)
                if kind is StreamOpened:
                    opened = cast(StreamOpened, self.log.decode(stored))
                    if opened.stream_id == self.stream_id:
                        self.version = opened.originator_version
                        self._message_id = opened.message_id
                        if redacted:  # as ``stream_reader``: every redaction recorded so far
                            state = self.log.load(self.key, self._tenant, self._chat_id).state
                            self._redactions = list(state.redactions)
                            self._masks = Masks(self._redactions)
                        since.reverse()
                        return since
                redacted = redacted or kind is Redacted
                since.append(stored)
            if len(page) < PAGE:
                self.ended = True
                return []
            below = page[-1].originator_version - 1
