"""chatledger: an event-sourced conversation store for AI chat with tool calls and approvals.

Start with ``ConversationStore.open(url)``; see the README for a tour.
"""

from chatledger.adapters.store import DEFAULT_TENANT, ConversationStore, IngestReport
from chatledger.adapters.stream import StreamWriter
from chatledger.domain.aggregate import ReceivedChunk
from chatledger.domain.approvals import ApprovalDecision
from chatledger.domain.conversation import Verdict
from chatledger.domain.errors import (
    ApprovalConflictError,
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
from chatledger.domain.limits import Limits

__all__ = [
    "DEFAULT_TENANT",
    "ApprovalConflictError",
    "ApprovalDecision",
    "ChatLedgerError",
    "ConcurrentWriteError",
    "ConversationExistsError",
    "ConversationNotFoundError",
    "ConversationStore",
    "IngestReport",
    "InvalidChunkError",
    "InvalidMessageError",
    "Limits",
    "NoOpenStreamError",
    "OversizedInputError",
    "ReceivedChunk",
    "StoreConfigurationError",
    "StreamAlreadyOpenError",
    "StreamWriter",
    "UnknownToolCallError",
    "Verdict",
]
