"""AI SDK 7 (``ai@7``): v6 plus new chunks and parts, steering, superseded approvals and halted messages.

- A call awaits approval while it is ``approval-requested`` in an assistant
  message after the latest user message: a new user message supersedes older
  pending approvals (v7's converter drops them; answering them changes nothing).
- A stream that finished with ``finishReason: "interrupted"`` halts its
  message: no continuation is requested for it, and a late tool output or
  approval for one of its calls is recorded but changes nothing, until a later
  stream for the same message finishes normally (v7's ``AbstractChat`` does not
  send automatically for an interrupted message either).
- A user message sent while a stream runs is queued as a steering message,
  which the running answer may take at a step boundary.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Final

from chatledger.domain.dialects.dialect import Dialect, ModelMessageRules, models_by_type
from chatledger.domain.dialects.v6 import V6
from chatledger.domain.dialects.v7.chunk_models import (
    CustomChunk,
    FinishChunkV7,
    ReasoningFileChunk,
    ResetStepChunk,
    SteeringMessageChunk,
    TextEndChunkV7,
    ToolApprovalRequestChunkV7,
    ToolApprovalResponseChunk,
)
from chatledger.domain.dialects.v7.fold import HANDLERS
from chatledger.domain.dialects.v7.parts import PART_MODELS

__all__ = ["V7"]

_CHUNK_MODELS: Final = (
    TextEndChunkV7, ToolApprovalRequestChunkV7, FinishChunkV7, ToolApprovalResponseChunk,
    CustomChunk, ReasoningFileChunk, SteeringMessageChunk, ResetStepChunk,
)  # fmt: skip
"""The chunk models v7 adds, or changes from v6's."""

V7: Final = Dialect(
    major=7,
    chunk_models=MappingProxyType({**V6.chunk_models, **models_by_type(*_CHUNK_MODELS)}),
    part_models=PART_MODELS,
    fold_handlers=HANDLERS,
    partial_json_strict=True,
    steers=True,
    supersedes_approvals=True,
    halts_on_interrupted=True,
    replays_message_on_resume=True,
    stream_encoding=7,
    model_messages=ModelMessageRules(
        content_part_types=frozenset({"custom", "reasoning-file"}),
        file_data_as_url=True,
        approval_request_details=True,
        denial_result=True,
    ),
)
"""AI SDK 7: ``ai@7.0.173``'s chunks, parts, fold and converter, and its turn rules."""
