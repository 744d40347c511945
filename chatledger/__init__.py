"""chatledger: an event-sourced conversation store for AI chat with tool calls and approvals.

Start with ``ConversationStore.open(url)``; see the README for a tour.

The errors are imported at once; everything else on first use (the models
behind the store take about a second to build), so ``import chatledger`` and
``chatledger --help`` start fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from chatledger.domain.errors import (
    AnswerAlreadyWrittenError,
    ApprovalConflictError,
    ChatLedgerError,
    CipherKeyError,
    ConcurrentWriteError,
    ContinuationNotPendingError,
    ConversationErasedError,
    ConversationExistsError,
    ConversationNotFoundError,
    FollowTimeoutError,
    InvalidAiSdkVersionError,
    InvalidChunkError,
    InvalidInputError,
    InvalidMessageError,
    InvalidToolOutputError,
    LogTamperedError,
    MessageConversionError,
    NoOpenStreamError,
    NothingToContinueError,
    OversizedChunkError,
    OversizedInputError,
    StoreConfigurationError,
    StoredDataError,
    StoreUnavailableError,
    StreamAlreadyOpenError,
    StreamOpenLostError,
    ToolCallNotReadyError,
    UnansweredToolCallError,
    UnknownToolCallChunkError,
    UnknownToolCallError,
)

if TYPE_CHECKING:
    from chatledger.adapters.store import DEFAULT_TENANT, ConversationStore, IngestReport
    from chatledger.adapters.store.actions import ActionResult
    from chatledger.adapters.store.inbox import ContinuationRequest, PendingApproval
    from chatledger.adapters.store.reads.follow import FollowedChunk
    from chatledger.adapters.store.streams.writer import StreamWriter
    from chatledger.domain.aggregate import ReceivedChunk
    from chatledger.domain.continuation import ConversationStatus, WaitingCall
    from chatledger.domain.conversation import Verdict
    from chatledger.domain.convert import FORMATS, to_model_messages
    from chatledger.domain.limits import Limits
    from chatledger.domain.timeline import TimelineEntry

_LAZY = {
    "DEFAULT_TENANT": "chatledger.adapters.store",
    "ConversationStore": "chatledger.adapters.store",
    "IngestReport": "chatledger.adapters.store",
    "ActionResult": "chatledger.adapters.store.actions",
    "FollowedChunk": "chatledger.adapters.store.reads.follow",
    "ContinuationRequest": "chatledger.adapters.store.inbox",
    "PendingApproval": "chatledger.adapters.store.inbox",
    "StreamWriter": "chatledger.adapters.store.streams.writer",
    "ReceivedChunk": "chatledger.domain.aggregate",
    "ConversationStatus": "chatledger.domain.continuation",
    "WaitingCall": "chatledger.domain.continuation",
    "Verdict": "chatledger.domain.conversation",
    "FORMATS": "chatledger.domain.convert",
    "to_model_messages": "chatledger.domain.convert",
    "Limits": "chatledger.domain.limits",
    "TimelineEntry": "chatledger.domain.timeline",
}
"""Where each public name that is imported on first use lives."""


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'chatledger' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "DEFAULT_TENANT",
    "FORMATS",
    "ActionResult",
    "AnswerAlreadyWrittenError",
    "ApprovalConflictError",
    "ChatLedgerError",
    "CipherKeyError",
    "ConcurrentWriteError",
    "ContinuationNotPendingError",
    "ContinuationRequest",
    "ConversationErasedError",
    "ConversationExistsError",
    "ConversationNotFoundError",
    "ConversationStatus",
    "ConversationStore",
    "FollowTimeoutError",
    "FollowedChunk",
    "IngestReport",
    "InvalidAiSdkVersionError",
    "InvalidChunkError",
    "InvalidInputError",
    "InvalidMessageError",
    "InvalidToolOutputError",
    "Limits",
    "LogTamperedError",
    "MessageConversionError",
    "NoOpenStreamError",
    "NothingToContinueError",
    "OversizedChunkError",
    "OversizedInputError",
    "PendingApproval",
    "ReceivedChunk",
    "StoreConfigurationError",
    "StoreUnavailableError",
    "StoredDataError",
    "StreamAlreadyOpenError",
    "StreamOpenLostError",
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
