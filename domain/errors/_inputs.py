"""Refused inputs: a stream chunk, a whole message, a tool output or a value, saying where it was refused."""

from __future__ import annotations

from typing import Self

from chatledger.domain.errors._base import InvalidInputError

__all__ = [
    "InvalidAiSdkVersionError",
    "InvalidChunkError",
    "InvalidMessageError",
    "InvalidToolOutputError",
    "OversizedChunkError",
    "OversizedInputError",
    "UnknownToolCallChunkError",
    "UnknownToolCallError",
]


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
        which = f"message {message_id[:80]!r}" if isinstance(message_id, str) else "message"
        super().__init__(f"{which} refused: {reason}")


class InvalidToolOutputError(InvalidInputError):
    """A tool output given by a client cannot be stored (it is not a JSON value)."""

    def __init__(self, tool_call_id: str, reason: str) -> None:
        self.tool_call_id = tool_call_id
        self.reason = reason
        super().__init__(f"tool output for {tool_call_id!r} refused: {reason}")


class InvalidAiSdkVersionError(InvalidInputError):
    """An AI SDK major chatledger does not speak was asked for (it speaks 6 and 7)."""

    def __init__(self, version: object, *, where: str = "ai_sdk") -> None:
        self.version = version
        super().__init__(
            f"{where} must be 6 or 7 (the AI SDK major the conversation speaks), not "
            f"{version!r:.40}"
            if isinstance(version, int | str)
            else f"{where} must be 6 or 7, not a {type(version).__name__}"
        )
