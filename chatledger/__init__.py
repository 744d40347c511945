"""chatledger: an event-sourced conversation store for AI chat with tool calls and approvals.

Start with ``ConversationStore.open(url)``; see the README for a tour.
"""

from chatledger.adapters.store import DEFAULT_TENANT, ConversationStore, IngestReport
from chatledger.adapters.store.actions import ActionResult
from chatledger.adapters.store.follow import FollowedChunk
from chatledger.adapters.store.inbox import ContinuationRequest, PendingApproval
from chatledger.adapters.store.writer import StreamWriter
from chatledger.domain.aggregate import ReceivedChunk
from chatledger.domain.continuation import ConversationStatus, WaitingCall
from chatledger.domain.conversation import Verdict
from chatledger.domain.convert import FORMATS, to_model_messages
from chatledger.domain.errors import (
    ApprovalConflictError,
    ChatLedgerError,
    CipherKeyError,
    ConcurrentWriteError,
    ContinuationNotPendingError,
    ConversationExistsError,
    ConversationNotFoundError,
    FollowTimeoutError,
    InvalidChunkError,
    InvalidInputError,
    InvalidMessageError,
    InvalidToolOutputError,
    MessageConversionError,
    NoOpenStreamError,
    OversizedChunkError,
    OversizedInputError,
    StoreConfigurationError,
    StoredDataError,
    StoreUnavailableError,
    StreamAlreadyOpenError,
    ToolCallNotReadyError,
    UnansweredToolCallError,
    UnknownToolCallChunkError,
    UnknownToolCallError,
)
from chatledger.domain.limits import Limits
from chatledger.domain.timeline import TimelineEntry

__all__ = [
    "DEFAULT_TENANT",
    "FORMATS",
    "ActionResult",
    "ApprovalConflictError",
    "ChatLedgerError",
    "CipherKeyError",
    "ConcurrentWriteError",
    "ContinuationNotPendingError",
    "ContinuationRequest",
    "ConversationExistsError",
    "ConversationNotFoundError",
    "ConversationStatus",
    "ConversationStore",
    "FollowTimeoutError",
    "FollowedChunk",
    "IngestReport",
    "InvalidChunkError",
    "InvalidInputError",
    "InvalidMessageError",
    "InvalidToolOutputError",
    "Limits",
    "MessageConversionError",
    "NoOpenStreamError",
    "OversizedChunkError",
    "OversizedInputError",
    "PendingApproval",
    "ReceivedChunk",
    "StoreConfigurationError",
    "StoreUnavailableError",
    "StoredDataError",
    "StreamAlreadyOpenError",
    "StreamWriter",
    "TimelineEntry",
    "ToolCallNotReadyError",
    "UnansweredToolCallError",
    "UnknownToolCallChunkError",
    "UnknownToolCallError",
    "Verdict",
    "WaitingCall",
    "to_model_messages",
]
