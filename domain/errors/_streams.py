"""Errors about a conversation's stream: a second open, no open stream, an open lost, a follow timeout."""

from __future__ import annotations

from chatledger.domain.errors._base import ChatLedgerError

__all__ = [
    "AnswerAlreadyWrittenError",
    "FollowTimeoutError",
    "NoOpenStreamError",
    "StreamAlreadyOpenError",
    "StreamOpenLostError",
]


class StreamAlreadyOpenError(ChatLedgerError):
    """A conversation has at most one open stream; another one is still open."""

    def __init__(self, chat_id: str, stream_id: str) -> None:
        self.chat_id = chat_id
        self.stream_id = stream_id
        super().__init__(
            f"conversation {chat_id!r} already has an open stream {stream_id!r}; "
            "close it first (a stream left open by a crashed process can be closed "
            "with outcome 'interrupted')"
        )


class NoOpenStreamError(ChatLedgerError):
    """The stream named is not the conversation's open stream (closed, or never opened)."""

    def __init__(self, chat_id: str, stream_id: str | None) -> None:
        self.chat_id = chat_id
        self.stream_id = stream_id
        what = f"stream {stream_id!r} is not open" if stream_id else "no stream is open"
        super().__init__(f"conversation {chat_id!r}: {what}")


class StreamOpenLostError(NoOpenStreamError):
    """A stream's open, not yet committed, lost to another writer of the conversation.

    ``open_stream`` decides the open at once and commits it with the
    stream's first batch (or a few milliseconds later). If another writer
    changed the conversation in between (another process opened its own
    stream, or added a message the answer did not see), the open is not
    recorded: the writer ends, with nothing of it stored. ``other_stream_id``
    names the stream opened meanwhile, if one was.
    """

    def __init__(self, chat_id: str, stream_id: str, other_stream_id: str | None) -> None:
        super().__init__(chat_id, stream_id)
        self.other_stream_id = other_stream_id
        why = (
            f"stream {other_stream_id!r} was opened first"
            if other_stream_id
            else "another writer changed the conversation first"
        )
        self.args = (f"conversation {chat_id!r}: stream {stream_id!r} was not opened: {why}",)


class FollowTimeoutError(ChatLedgerError, TimeoutError):
    """A follower waited ``seconds`` with nothing new in the conversation's log.

    ``cursor`` is where to resume: the last chunk yielded, else the ``after``
    given, else None (then resume with ``after=None``, from the stream's start).
    """

    def __init__(self, chat_id: str, stream_id: str, seconds: float, cursor: str | None) -> None:
        self.chat_id = chat_id
        self.stream_id = stream_id
        self.seconds = seconds
        self.cursor = cursor
        super().__init__(
            f"conversation {chat_id!r}: nothing new on stream {stream_id!r} for {seconds:g} s "
            f"(resume with after={cursor!r})"
        )


class AnswerAlreadyWrittenError(ChatLedgerError):
    """An answer was opened with an answer key the conversation already holds: a retried write.

    A writer outside the process (``POST /api/chats/{id}/answers`` with an
    ``Idempotency-Key``) names each answer; a retry of the same answer (its
    response lost on the network) is not written twice. ``stream_id`` and
    ``message_id`` name the answer written first; ``outcome`` is how its
    stream ended (None while it is still open) and ``reason`` why.
    """

    def __init__(
        self,
        chat_id: str,
        answer_key: str,
        stream_id: str,
        message_id: str,
        outcome: str | None,
        reason: str | None = None,
    ) -> None:
        self.chat_id = chat_id
        self.answer_key = answer_key
        self.stream_id = stream_id
        self.message_id = message_id
        self.outcome = outcome
        self.reason = reason
        state = f"ended {outcome}" if outcome else "is still being written"
        super().__init__(
            f"conversation {chat_id!r}: the answer with key {answer_key!r} was already written "
            f"(stream {stream_id!r}, message {message_id!r}, {state}); send a new key to write "
            "another answer"
        )
