"""The errors chatledger raises: one root, one class per condition, typed attributes.

Import them from here (``from chatledger.domain.errors import X``); the
modules below hold them by what they are about:

- ``_base``: the root ``ChatLedgerError`` and its broad branches (a refused
  input, unreadable stored data, a store that cannot be used);
- ``_conversations``: a conversation missing, already there, erased, written
  concurrently, or its log damaged;
- ``_inputs``: refused inputs (stream chunks, messages, tool outputs, values);
- ``_streams``: the conversation's stream and its followers;
- ``_turns``: a turn's tool calls (approvals, outputs, continuations) and
  converting a turn whose calls are not answered.
"""

from __future__ import annotations

from chatledger.domain.errors._base import (
    ChatLedgerError,
    CipherKeyError,
    InvalidInputError,
    StoreConfigurationError,
    StoredDataError,
    StoreUnavailableError,
)
from chatledger.domain.errors._conversations import (
    ConcurrentWriteError,
    ConversationErasedError,
    ConversationExistsError,
    ConversationNotFoundError,
    LogTamperedError,
)
from chatledger.domain.errors._inputs import (
    InvalidAiSdkVersionError,
    InvalidChunkError,
    InvalidMessageError,
    InvalidToolOutputError,
    OversizedChunkError,
    OversizedInputError,
    UnknownToolCallChunkError,
    UnknownToolCallError,
)
from chatledger.domain.errors._streams import (
    AnswerAlreadyWrittenError,
    FollowTimeoutError,
    NoOpenStreamError,
    StreamAlreadyOpenError,
    StreamOpenLostError,
)
from chatledger.domain.errors._turns import (
    ApprovalConflictError,
    ContinuationNotPendingError,
    MessageConversionError,
    NothingToContinueError,
    ToolCallNotReadyError,
    UnansweredToolCallError,
)

__all__ = [
    "AnswerAlreadyWrittenError",
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
    "NothingToContinueError",
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
