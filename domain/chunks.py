"""The AI SDK UI message stream chunks (v6 and v7): their union type and the ingest hot-path check."""

from __future__ import annotations

from typing import Annotated, Any, Final, cast, get_args

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
from chatledger.domain._chunk_models_v7 import (
    CustomChunk,
    FinishChunkV7,
    ReasoningFileChunk,
    ResetStepChunk,
    SteeringMessageChunk,
    TextEndChunkV7,
    ToolApprovalRequestChunkV7,
    ToolApprovalResponseChunk,
)
from chatledger.domain._wire import WireModel, describe_error, forbidden_key_path, type_name
from chatledger.domain.errors import InvalidChunkError

__all__ = [
    "CHUNK_TYPES",
    "CHUNK_TYPES_V7",
    "SDK_VERSIONS",
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

_FIXED: Final[tuple[type[WireModel], ...]] = (
    TextStartChunk, TextDeltaChunk, TextEndChunk, ErrorChunk, ToolInputStartChunk,
    ToolInputDeltaChunk, ToolInputAvailableChunk, ToolInputErrorChunk, ToolApprovalRequestChunk,
    ToolOutputAvailableChunk, ToolOutputErrorChunk, ToolOutputDeniedChunk, ReasoningStartChunk,
    ReasoningDeltaChunk, ReasoningEndChunk, SourceUrlChunk, SourceDocumentChunk, FileChunk,
    StartStepChunk, FinishStepChunk, StartChunk, FinishChunk, AbortChunk, MessageMetadataChunk,
)  # fmt: skip
_BY_TYPE: Final[dict[str, type[WireModel]]] = {
    get_args(model.model_fields["type"].annotation)[0]: model for model in _FIXED
}
CHUNK_TYPES: Final = frozenset(_BY_TYPE)
"""The fixed chunk types of v6; any type starting with ``data-`` is a data chunk as well."""

_V7: Final[tuple[type[WireModel], ...]] = (
    TextEndChunkV7, ToolApprovalRequestChunkV7, FinishChunkV7, ToolApprovalResponseChunk,
    CustomChunk, ReasoningFileChunk, SteeringMessageChunk, ResetStepChunk,
)  # fmt: skip
_BY_TYPE_V7: Final[dict[str, type[WireModel]]] = {
    **_BY_TYPE,
    **{get_args(model.model_fields["type"].annotation)[0]: model for model in _V7},
}
CHUNK_TYPES_V7: Final = frozenset(_BY_TYPE_V7)
"""The fixed chunk types of v7 (v6's plus the new ones)."""

SDK_VERSIONS: Final = (6, 7)
"""The AI SDK majors chatledger speaks."""


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


def _model_for(raw: dict[Any, Any], ai_sdk: int) -> type[WireModel]:
    if "type" not in raw:
        raise InvalidChunkError("missing required field 'type'")
    kind = raw["type"]
    if not isinstance(kind, str):
        raise InvalidChunkError(f"field 'type' must be a string, got {type_name(kind)}")
    models = _BY_TYPE_V7 if ai_sdk == 7 else _BY_TYPE
    model = models.get(kind) or (DataChunk if kind.startswith("data-") else None)
    if model is None:
        shown = kind if len(kind) <= 60 else kind[:57] + "..."
        known = (
            f" (a chunk of AI SDK 7: this conversation speaks AI SDK {ai_sdk})"
            if (ai_sdk != 7 and kind in _BY_TYPE_V7)
            else ""
        )
        raise InvalidChunkError(f"unknown chunk type {shown!r}{known}", chunk_type=kind)
    return model


def parse_chunk(raw: object, ai_sdk: int = 6) -> Chunk:
    """Validate one wire chunk (a parsed JSON value) of AI SDK ``ai_sdk`` and return its model.

    Raises InvalidChunkError, as ``check_chunk`` does.
    """
    if not isinstance(raw, dict):
        raise InvalidChunkError(f"chunk must be a JSON object, got {type_name(raw)}")
    model = _model_for(raw, ai_sdk)
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


def check_chunk(raw: object, ai_sdk: int = 6) -> str:
    """Validate one wire chunk (a parsed JSON value) of AI SDK ``ai_sdk`` (6 or 7).

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
    return parse_chunk(raw, ai_sdk).type
