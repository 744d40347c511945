"""chatledger: an event-sourced conversation store for AI chat with tool calls and approvals."""

from chatledger.domain.errors import (
    ChatLedgerError,
    ConcurrentWriteError,
    ConversationExistsError,
    ConversationNotFoundError,
    InvalidChunkError,
    InvalidMessageError,
    NoOpenStreamError,
    OversizedInputError,
    StoreConfigurationError,
    StreamAlreadyOpenError,
    UnknownToolCallError,
)

__all__ = [
    "ChatLedgerError",
    "ConcurrentWriteError",
    "ConversationExistsError",
    "ConversationNotFoundError",
    "InvalidChunkError",
    "InvalidMessageError",
    "NoOpenStreamError",
    "OversizedInputError",
    "StoreConfigurationError",
    "StreamAlreadyOpenError",
    "UnknownToolCallError",
]
