"""AI SDK 6 (``ai@6``): the dialect of conversations recorded before v7, and the base later majors overlay."""

from __future__ import annotations

from types import MappingProxyType
from typing import Final

from chatledger.domain._chunk_models import (
    AbortChunk,
    ErrorChunk,
    FileChunk,
    FinishChunk,
    FinishStepChunk,
    MessageMetadataChunk,
    ReasoningDeltaChunk,
    ReasoningEndChunk,
    ReasoningStartChunk,
    SourceDocumentChunk,
    SourceUrlChunk,
    StartChunk,
    StartStepChunk,
    TextDeltaChunk,
    TextEndChunk,
    TextStartChunk,
    ToolApprovalRequestChunk,
    ToolInputAvailableChunk,
    ToolInputDeltaChunk,
    ToolInputErrorChunk,
    ToolInputStartChunk,
    ToolOutputAvailableChunk,
    ToolOutputDeniedChunk,
    ToolOutputErrorChunk,
)
from chatledger.domain.dialects.dialect import Dialect, ModelMessageRules, models_by_type
from chatledger.domain.dialects.v6.fold import HANDLERS

__all__ = ["V6"]

_CHUNK_MODELS: Final = (
    TextStartChunk, TextDeltaChunk, TextEndChunk, ErrorChunk, ToolInputStartChunk,
    ToolInputDeltaChunk, ToolInputAvailableChunk, ToolInputErrorChunk, ToolApprovalRequestChunk,
    ToolOutputAvailableChunk, ToolOutputErrorChunk, ToolOutputDeniedChunk, ReasoningStartChunk,
    ReasoningDeltaChunk, ReasoningEndChunk, SourceUrlChunk, SourceDocumentChunk, FileChunk,
    StartStepChunk, FinishStepChunk, StartChunk, FinishChunk, AbortChunk, MessageMetadataChunk,
)  # fmt: skip

V6: Final = Dialect(
    major=6,
    chunk_models=models_by_type(*_CHUNK_MODELS),
    part_models=MappingProxyType({}),
    fold_handlers=HANDLERS,
    partial_json_strict=False,
    steers=False,
    supersedes_approvals=False,
    halts_on_interrupted=False,
    replays_message_on_resume=False,
    stream_encoding=6,
    model_messages=ModelMessageRules(
        content_part_types=frozenset(),
        file_data_as_url=False,
        approval_request_details=False,
        denial_result=False,
    ),
)
"""AI SDK 6: ``ai@6.0.326``'s chunks, parts, fold and converter; no steering, no halting."""
