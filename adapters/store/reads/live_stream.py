"""A stream this process writes, seen from its writer's memory: a resume set up without a load.

A client resuming an answer must learn which stream is open, whether the
message it continues is replayed first, where the stream starts in the log,
which redactions apply, and the message id a ``start`` names. Read from the
log, that is a load of the whole conversation for each (under load the
resumes of a burst took seconds). When this process writes the stream, its
writer holds all of it in memory: ``LiveStream`` is what it tells, and
``live_stream_reader`` finds the stream's start by reading back from the
head of the log to the open (the few events since, not the conversation).

The writer answers only when that is exactly what the log says: its open
is committed, it is not stale, and no redaction applies (one recorded
meanwhile by another process would not be in its memory: a ``Redacted``
event met while reading back sends the resume to the log instead).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, cast
from uuid import UUID

from chatledger.adapters.store.reads.stream_reader import PAGE, Start, StreamReader, kind_of
from chatledger.domain.events import Redacted, StreamOpened

if TYPE_CHECKING:
    from chatledger.adapters.persistence.log import ConversationLog

__all__ = ["LiveStream", "LiveWriter", "live_stream_reader"]


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


def live_stream_reader(log: ConversationLog, live: LiveStream) -> StreamReader | None:
    """A reader of ``live``'s stream from its start (what ``stream_reader`` resolves with no
    cursor), found by reading back from the head of the log to its open; None when the log
    says otherwise (its open is not there, or a redaction was recorded since): resolve it
    from the log then."""
    below: int | None = None
    while True:
        page = log.select_events(live.key, lte=below, desc=True, limit=PAGE)
        for stored in page:
            kind = kind_of(stored.topic)
            if kind is Redacted:
                return None
            if kind is StreamOpened:
                opened = cast(StreamOpened, log.decode(stored))
                if opened.stream_id != live.stream_id:
                    return None
                start = Start(opened.stream_id, opened.originator_version, -1, None, opened.message_id)
                return StreamReader(log, live.key, start, [])
        if len(page) < PAGE:
            return None
        below = page[-1].originator_version - 1
