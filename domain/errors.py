"""The errors chatledger raises: one root, one class per condition, typed attributes."""

from __future__ import annotations

from typing import Self

__all__ = [
    "ApprovalConflictError",
    "ChatLedgerError",
    "CipherKeyError",
    "ConcurrentWriteError",
    "ContinuationNotPendingError",
    "ConversationErasedError",
    "ConversationExistsError",
    "ConversationNotFoundError",
    "FollowTimeoutError",
    "InvalidAiSdkVersionError",
    "InvalidChunkError",
    "InvalidInputError",
    "InvalidMessageError",
    "InvalidToolOutputError",
    "LogTamperedError",
    "MessageConversionError",
    "NoOpenStreamError",
    "OversizedChunkError",
    "OversizedInputError",
    "StoreConfigurationError",
    "StoreUnavailableError",
    "StoredDataError",
    "StreamAlreadyOpenError",
    "StreamOpenLostError",
    "ToolCallNotReadyError",
    "UnansweredToolCallError",
    "UnknownToolCallChunkError",
    "UnknownToolCallError",
]


class ChatLedgerError(Exception):
    """Root of every error chatledger raises on purpose."""


class StoreConfigurationError(ChatLedgerError):
    """The store cannot be opened as configured (bad URL, unreachable database)."""


class CipherKeyError(StoreConfigurationError):
    """The cipher key given (or its absence) does not open this store; nothing was read or written."""


class ConversationNotFoundError(ChatLedgerError):
    """No conversation with this id exists for this tenant."""

    def __init__(self, tenant: str, chat_id: str) -> None:
        self.tenant = tenant
        self.chat_id = chat_id
        super().__init__(
            f"conversation {chat_id!r} (tenant {tenant!r}) does not exist; "
            "start it first, or check the chat id and the tenant"
        )


class ConversationExistsError(ChatLedgerError):
    """A conversation with this id already exists for this tenant."""

    def __init__(self, tenant: str, chat_id: str) -> None:
        self.tenant = tenant
        self.chat_id = chat_id
        super().__init__(f"conversation {chat_id!r} (tenant {tenant!r}) already exists")


class ConversationErasedError(ChatLedgerError):
    """The conversation was erased: its content is gone for good; only its audit timeline remains.

    ``erased_at``, ``actor`` and ``reason`` say when, by whom and why, when
    known. Its audit timeline (kinds, actors, times) is still readable with
    ``history``; nothing else of it is.
    """

    def __init__(
        self,
        tenant: str | None,
        chat_id: str | None,
        *,
        erased_at: str | None = None,
        actor: str | None = None,
        reason: str | None = None,
    ) -> None:
        self.tenant = tenant
        self.chat_id = chat_id
        self.erased_at = erased_at
        self.actor = actor
        self.reason = reason
        who = f"conversation {chat_id!r} (tenant {tenant!r})" if chat_id else "the conversation"
        when = f" on {erased_at}" if erased_at else ""
        by = f" by {actor!r}" if actor else ""
        why = f" ({reason})" if reason else ""
        super().__init__(
            f"{who} was erased{when}{by}{why}: its content is gone for good; "
            "only its audit timeline (kinds, actors, times) remains"
        )


class InvalidInputError(ChatLedgerError):
    """An input (chunk, message, tool output, id, metadata) was refused; nothing stored changed."""


class StoredDataError(ChatLedgerError):
    """Stored data cannot be read back: a corrupt or hand-edited event or snapshot, or an unknown encoding.

    Nothing was changed. ``chatledger verify`` names what is affected; the
    events are the truth, so restore the database from a backup.
    """


class StoreUnavailableError(ChatLedgerError):
    """The database could not be reached or refused the write; nothing was recorded. Retry later."""


class _Located(InvalidInputError):
    """A refusal that may concern one stream chunk: its type, its stream position, the tool call it names.

    Shared by ``InvalidChunkError``, ``UnknownToolCallError`` and
    ``OversizedInputError``. A refused stream chunk is always an
    ``InvalidChunkError`` (``UnknownToolCallChunkError`` and
    ``OversizedChunkError`` are both).
    """

    def __init__(
        self,
        reason: str,
        *,
        chunk_type: str | None = None,
        position: int | None = None,
        tool_call_id: str | None = None,
    ) -> None:
        self.reason = reason
        self.chunk_type = chunk_type
        self.position = position
        self.tool_call_id = tool_call_id
        super().__init__(self._message())

    def _message(self) -> str:
        where = f" at position {self.position}" if self.position is not None else ""
        kind = f"{self.chunk_type!r} chunk" if self.chunk_type is not None else "chunk"
        if self.chunk_type is None and self.position is None:
            return f"refused: {self.reason}"  # an action or a value, not a stream chunk
        return f"{kind}{where} refused: {self.reason}"

    def at(self, position: int) -> Self:
        """Return a copy of this error that names the chunk's stream position."""
        located = type(self).__new__(type(self))
        located.__dict__.update(self.__dict__)
        located.position = position
        located.args = (located._message(),)
        return located


class InvalidChunkError(_Located):
    """A stream chunk was refused; nothing stored changed and the stream stays usable.

    ``position`` is the chunk's position in its stream (0-based) when known.
    """


class UnknownToolCallError(_Located):
    """A chunk or an action names a tool call the conversation has never seen."""

    def __init__(
        self,
        reason: str | None = None,
        *,
        chunk_type: str | None = None,
        position: int | None = None,
        tool_call_id: str | None = None,
    ) -> None:
        super().__init__(
            reason or f"no tool call with id {tool_call_id!r} exists in this conversation",
            chunk_type=chunk_type,
            position=position,
            tool_call_id=tool_call_id,
        )


class OversizedInputError(_Located):
    """A chunk, message or tool output is larger than the configured limit."""

    def __init__(
        self,
        what: str,
        size: int,
        limit: int,
        *,
        chunk_type: str | None = None,
        position: int | None = None,
        tool_call_id: str | None = None,
    ) -> None:
        self.what = what
        self.size = size
        self.limit = limit
        super().__init__(
            f"{what} is {size} bytes, over the limit of {limit} bytes "
            "(raise it with the store's limits setting if this is expected)",
            chunk_type=chunk_type,
            position=position,
            tool_call_id=tool_call_id,
        )

    def _message(self) -> str:
        if self.chunk_type is None and self.position is None:
            return f"{self.what} refused: {self.reason}"  # not about a stream chunk
        return super()._message()


class UnknownToolCallChunkError(UnknownToolCallError, InvalidChunkError):
    """A stream chunk names a tool call the conversation has never seen (a refused chunk)."""


class OversizedChunkError(OversizedInputError, InvalidChunkError):
    """A stream chunk (or what it adds to its message) is over a limit (a refused chunk)."""


class InvalidMessageError(InvalidInputError):
    """A whole UIMessage given to the store is not a valid AI SDK v6 UIMessage."""

    def __init__(self, reason: str, *, message_id: str | None = None) -> None:
        self.reason = reason
        self.message_id = message_id
        which = f"message {message_id!r}" if message_id is not None else "message"
        super().__init__(f"{which} refused: {reason}")


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


class ConcurrentWriteError(ChatLedgerError):
    """Another writer appended to the conversation first; reload and retry."""

    def __init__(self, chat_id: str) -> None:
        self.chat_id = chat_id
        super().__init__(
            f"conversation {chat_id!r} was changed by another writer at the same time; "
            "the action was not recorded: reload and retry it"
        )


class ApprovalConflictError(ChatLedgerError):
    """A tool call's approval was already answered the other way; the first answer stands."""

    def __init__(self, tool_call_id: str, approval_id: str, recorded: bool) -> None:
        self.tool_call_id = tool_call_id
        self.approval_id = approval_id
        self.recorded = recorded
        answer = "approved" if recorded else "denied"
        super().__init__(
            f"approval {approval_id!r} of tool call {tool_call_id!r} was already {answer}; "
            "a different answer is refused"
        )


class ToolCallNotReadyError(ChatLedgerError):
    """A tool call cannot take a client's output now.

    Its input is still streaming, or (``output-available`` with
    ``preliminary``) a tool run by the server is still streaming its output.
    """

    def __init__(self, tool_call_id: str, state: str) -> None:
        self.tool_call_id = tool_call_id
        self.state = state
        if state == "output-available":
            why = (
                "it has a preliminary output from a tool the server runs, whose final output "
                "comes from the model's stream"
            )
        else:
            why = "outputs are accepted once its input is available"
        super().__init__(
            f"tool call {tool_call_id!r} is in state {state!r} and cannot take an output now; {why}"
        )


class ContinuationNotPendingError(ChatLedgerError):
    """The continuation request named is not pending (already started, or never made)."""

    def __init__(self, chat_id: str, request_id: str) -> None:
        self.chat_id = chat_id
        self.request_id = request_id
        super().__init__(
            f"conversation {chat_id!r}: continuation request {request_id!r} is not pending "
            "(another worker may have started it already)"
        )


class InvalidToolOutputError(InvalidInputError):
    """A tool output given by a client cannot be stored (it is not a JSON value)."""

    def __init__(self, tool_call_id: str, reason: str) -> None:
        self.tool_call_id = tool_call_id
        self.reason = reason
        super().__init__(f"tool output for {tool_call_id!r} refused: {reason}")


class MessageConversionError(ChatLedgerError):
    """The messages cannot be converted to the model format asked for (the SDK's ``AI_MessageConversionError``)."""

    def __init__(self, reason: str, *, message_id: str | None = None) -> None:
        self.reason = reason
        self.message_id = message_id
        which = f" (message {message_id!r})" if message_id is not None else ""
        super().__init__(f"cannot convert the messages{which}: {reason}")


class UnansweredToolCallError(ChatLedgerError):
    """The last assistant message has tool calls with no result yet.

    Provider APIs refuse a tool call without its result. While a call awaits
    approval or a client's output the turn is paused; once every such call is
    answered and the approved ones only wait to run, the turn is ready to
    continue (as ``status()`` says). Answer or run the calls first, or convert
    with ``unanswered="omit"``. ``approved`` lists the calls approved but not run.
    """

    def __init__(self, tool_call_ids: list[str], *, approved: list[str] | None = None) -> None:
        self.tool_call_ids = tool_call_ids
        self.approved = list(approved or [])
        listed = ", ".join(repr(call) for call in tool_call_ids)
        if self.approved and set(self.approved) >= set(tool_call_ids):
            where = (
                "are approved but have not run yet (the turn is ready to continue: the "
                "continuation runs them)"
            )
        elif self.approved:
            ready = ", ".join(repr(call) for call in self.approved)
            where = f"have no result yet (the turn is paused; {ready} approved and ready to run)"
        else:
            where = "have no result yet (the turn is paused)"
        super().__init__(
            f"tool call(s) {listed} in the last assistant message {where}; answer them first, "
            "or pass unanswered='omit' to leave them out"
        )


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


class LogTamperedError(ChatLedgerError):
    """The event log's hash chain or seals fail: building from it would make the damage permanent.

    ``problems`` lists each damaged conversation's first bad event. Restore
    the database from a backup, or (knowingly) pass ``accept_broken_chain=True``
    / ``--accept-broken-chain``, which records that it was done.
    """

    def __init__(self, action: str, problems: list[str]) -> None:
        self.action = action
        self.problems = problems
        shown = "; ".join(problems[:3]) + (
            f"; and {len(problems) - 3} more" if len(problems) > 3 else ""
        )
        super().__init__(
            f"refusing to {action}: the event log fails its integrity check ({shown}); restore "
            "the database from a backup, or pass --accept-broken-chain (accept_broken_chain=True) "
            "to go on anyway (it is recorded)"
        )


class InvalidAiSdkVersionError(InvalidInputError):
    """An AI SDK major chatledger does not speak was asked for (it speaks 6 and 7)."""

    def __init__(self, version: object, *, where: str = "ai_sdk") -> None:
        self.version = version
        super().__init__(
            f"{where} must be 6 or 7 (the AI SDK major the conversation speaks), not {version!r}"
        )
