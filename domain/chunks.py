"""The AI SDK UI message stream chunks (v6 and v7): their union type and the ingest hot-path check."""

from __future__ import annotations

from typing import Annotated, Any, Final, cast

from pydantic import Discriminator, Tag, ValidationError

from chatledger.domain._chunk_models import (
    AbortChunk,
    DataChunk,
    ErrorChunk,
    FileChunk,
    FinishChunk,
    FinishReason,
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
from chatledger.domain._wire import WireModel, describe_error, forbidden_key_path, type_name
from chatledger.domain.dialects import DIALECTS, V6, V7, Dialect
from chatledger.domain.errors import InvalidChunkError

__all__ = [
    "CHUNK_TYPES",
    "CHUNK_TYPES_V7",
    "AbortChunk",
    "Chunk",
    "DataChunk",
    "ErrorChunk",
    "FileChunk",
    "FinishChunk",
    "FinishReason",
    "FinishStepChunk",
    "MessageMetadataChunk",
    "ReasoningDeltaChunk",
    "ReasoningEndChunk",
    "ReasoningStartChunk",
    "SourceDocumentChunk",
    "SourceUrlChunk",
    "StartChunk",
    "StartStepChunk",
    "TextDeltaChunk",
    "TextEndChunk",
    "TextStartChunk",
    "ToolApprovalRequestChunk",
    "ToolInputAvailableChunk",
    "ToolInputDeltaChunk",
    "ToolInputErrorChunk",
    "ToolInputStartChunk",
    "ToolOutputAvailableChunk",
    "ToolOutputDeniedChunk",
    "ToolOutputErrorChunk",
    "check_chunk",
    "parse_chunk",
]

CHUNK_TYPES: Final = frozenset(V6.chunk_models)
"""The fixed chunk types of v6; any type starting with ``data-`` is a data chunk as well."""
CHUNK_TYPES_V7: Final = frozenset(V7.chunk_models)
"""The fixed chunk types of v7 (v6's plus the new ones)."""


def _chunk_tag(value: Any) -> str | None:
    kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
    if not isinstance(kind, str):
        return None
    if kind in CHUNK_TYPES:
        return kind
    return "data" if kind.startswith("data-") else None


Chunk = Annotated[
    Annotated[TextStartChunk, Tag("text-start")]
    | Annotated[TextDeltaChunk, Tag("text-delta")]
    | Annotated[TextEndChunk, Tag("text-end")]
    | Annotated[ErrorChunk, Tag("error")]
    | Annotated[ToolInputStartChunk, Tag("tool-input-start")]
    | Annotated[ToolInputDeltaChunk, Tag("tool-input-delta")]
    | Annotated[ToolInputAvailableChunk, Tag("tool-input-available")]
    | Annotated[ToolInputErrorChunk, Tag("tool-input-error")]
    | Annotated[ToolApprovalRequestChunk, Tag("tool-approval-request")]
    | Annotated[ToolOutputAvailableChunk, Tag("tool-output-available")]
    | Annotated[ToolOutputErrorChunk, Tag("tool-output-error")]
    | Annotated[ToolOutputDeniedChunk, Tag("tool-output-denied")]
    | Annotated[ReasoningStartChunk, Tag("reasoning-start")]
    | Annotated[ReasoningDeltaChunk, Tag("reasoning-delta")]
    | Annotated[ReasoningEndChunk, Tag("reasoning-end")]
    | Annotated[SourceUrlChunk, Tag("source-url")]
    | Annotated[SourceDocumentChunk, Tag("source-document")]
    | Annotated[FileChunk, Tag("file")]
    | Annotated[DataChunk, Tag("data")]
    | Annotated[StartStepChunk, Tag("start-step")]
    | Annotated[FinishStepChunk, Tag("finish-step")]
    | Annotated[StartChunk, Tag("start")]
    | Annotated[FinishChunk, Tag("finish")]
    | Annotated[AbortChunk, Tag("abort")]
    | Annotated[MessageMetadataChunk, Tag("message-metadata")],
    Discriminator(_chunk_tag),
]
"""Any UI message stream chunk, discriminated on ``type`` (``data-*`` types included)."""


def _model_for(raw: dict[Any, Any], dialect: Dialect) -> type[WireModel]:
    if "type" not in raw:
        raise InvalidChunkError("missing required field 'type'")
    kind = raw["type"]
    if not isinstance(kind, str):
        raise InvalidChunkError(f"field 'type' must be a string, got {type_name(kind)}")
    model = dialect.chunk_models.get(kind) or (DataChunk if kind.startswith("data-") else None)
    if model is None:
        shown = kind if len(kind) <= 60 else kind[:57] + "..."
        raise InvalidChunkError(
            f"unknown chunk type {shown!r}{_spoken_by(kind, dialect)}", chunk_type=kind
        )
    return model


def _spoken_by(kind: str, dialect: Dialect) -> str:
    """Names the major a chunk type belongs to when the conversation's dialect lacks it."""
    for other in DIALECTS.values():
        if kind in other.chunk_models:
            return f" (a chunk of AI SDK {other.major}: this conversation speaks AI SDK {dialect.major})"
    return ""


def parse_chunk(raw: object, dialect: Dialect = V6) -> Chunk:
    """Validate one wire chunk (a parsed JSON value) of an AI SDK ``dialect``; return its model.

    Raises InvalidChunkError, as ``check_chunk`` does.
    """
    if not isinstance(raw, dict):
        raise InvalidChunkError(f"chunk must be a JSON object, got {type_name(raw)}")
    model = _model_for(raw, dialect)
    kind: str = raw["type"]
    try:
        forbidden = forbidden_key_path(raw)
        if forbidden is not None:
            where = forbidden.removeprefix(".")
            reason = f"key '{where}' is refused by the AI SDK's secure JSON parser"
            raise InvalidChunkError(reason, chunk_type=kind)
        return cast(Chunk, model.model_validate(raw, strict=True, by_alias=True, by_name=False))
    except ValidationError as error:
        raise InvalidChunkError(describe_error(error, "chunk"), chunk_type=kind) from None
    except RecursionError:
        raise InvalidChunkError("chunk is nested too deeply (or cyclic)", chunk_type=kind) from None


_BARE_DELTA_KEYS: Final = {
    "text-delta": ("id", "delta"),
    "reasoning-delta": ("id", "delta"),
    "tool-input-delta": ("toolCallId", "inputTextDelta"),
}


def check_chunk(raw: object, dialect: Dialect = V6) -> str:
    """Validate one wire chunk (a parsed JSON value) of an AI SDK ``dialect``.

    Returns its type or raises InvalidChunkError.
    """
    # Hot path: the bare delta chunks that make up most of a stream. Anything
    # else, including every invalid chunk, goes through the models (the unit
    # tests check that both ways agree).
    if type(raw) is dict and len(raw) == 3:
        kind = raw.get("type")
        if type(kind) is str:
            keys = _BARE_DELTA_KEYS.get(kind)
            if keys is not None and type(raw.get(keys[0])) is str and type(raw.get(keys[1])) is str:
                return kind
    return parse_chunk(raw, dialect).type
