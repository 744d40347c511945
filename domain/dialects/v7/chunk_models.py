"""The chunk models AI SDK 7 adds or changes; every other chunk type is v6's (``_chunk_models``)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from chatledger.domain._chunk_models import FinishChunk, TextEndChunk, ToolApprovalRequestChunk
from chatledger.domain._wire import (
    OptBool,
    OptProviderMetadata,
    OptStr,
    WireModel,
    refuse_null,
)

__all__ = [
    "Citation",
    "CustomChunk",
    "FinishChunkV7",
    "FinishReasonV7",
    "ReasoningFileChunk",
    "ResetStepChunk",
    "SteeringFilePart",
    "SteeringMessageChunk",
    "SteeringTextPart",
    "TextEndChunkV7",
    "ToolApprovalRequestChunkV7",
    "ToolApprovalResponseChunk",
]

FinishReasonV7 = Literal[
    "stop", "length", "content-filter", "tool-calls", "error", "interrupted", "other"
]
_OptFinishReasonV7 = Annotated[FinishReasonV7 | None, refuse_null("a finish reason")]


class _Strict(BaseModel):
    """A plain (not loose) zod object: unknown keys are not part of the schema."""

    model_config = ConfigDict(
        frozen=True, strict=True, alias_generator=to_camel, populate_by_name=True, extra="allow"
    )


class _UrlSource(_Strict):
    type: Literal["source"]
    source_type: Literal["url"]
    id: str
    url: str
    title: OptStr = None
    provider_metadata: OptProviderMetadata = None


class _DocumentSource(_Strict):
    type: Literal["source"]
    source_type: Literal["document"]
    id: str
    media_type: str
    title: str
    filename: OptStr = None
    provider_metadata: OptProviderMetadata = None


class Citation(_Strict):
    """Where a text part cites a source (v7 ``Citation``)."""

    source: Annotated[_UrlSource | _DocumentSource, Field(discriminator="source_type")]
    """The cited web page or document."""
    start_index: Annotated[int | None, Field(ge=0), refuse_null("an integer")] = None
    """Where the cited span starts in the text."""
    end_index: Annotated[int | None, Field(ge=0), refuse_null("an integer")] = None
    """Where the cited span ends in the text."""
    cited_text: OptStr = None
    """The cited text."""


class TextEndChunkV7(TextEndChunk):
    """Closes a text part; v7 may attach its citations."""

    citations: Annotated[list[Citation] | None, refuse_null("an array")] = None
    """Sources the text cites (stored on the part, an empty list too)."""


class ToolApprovalRequestChunkV7(ToolApprovalRequestChunk):
    """Asks for approval; v7 says why, and whether a policy decides by itself."""

    reason: OptStr = None
    """Why the tool asks for approval (kept as ``approval.requestReason``)."""
    is_automatic: OptBool = None
    """True when a policy answers the request (a ``tool-approval-response`` follows)."""


class ToolApprovalResponseChunk(WireModel):
    """An approval decision travelling on the stream (automatic decisions, durable runs)."""

    type: Literal["tool-approval-response"]
    """The chunk type."""
    approval_id: str
    """The approval answered."""
    approved: bool
    """The decision."""
    reason: OptStr = None
    """Why."""
    provider_executed: OptBool = None
    """True when the provider runs the tool."""
    provider_metadata: OptProviderMetadata = None
    """Replaces the call's provider metadata."""


class CustomChunk(WireModel):
    """Provider-specific content, named ``<provider>.<type>`` (e.g. ``openai.compaction``)."""

    type: Literal["custom"]
    """The chunk type."""
    kind: str
    """What the content is."""
    provider_metadata: OptProviderMetadata = None
    """Provider metadata of the content."""


class ReasoningFileChunk(WireModel):
    """A file produced while reasoning."""

    type: Literal["reasoning-file"]
    """The chunk type."""
    url: str
    """URL or data URL of the file."""
    media_type: str
    """IANA media type of the file."""
    provider_metadata: OptProviderMetadata = None
    """Provider metadata of the file."""


class SteeringTextPart(WireModel):
    """Text of a steering message."""

    type: Literal["text"]
    """The part type."""
    text: str
    """The text."""
    provider_metadata: OptProviderMetadata = None
    """Provider metadata of the text."""


class SteeringFilePart(WireModel):
    """A file of a steering message."""

    type: Literal["file"]
    """The part type."""
    media_type: str
    """IANA media type (or a top-level type such as ``image``)."""
    url: str
    """URL or data URL of the file."""
    filename: OptStr = None
    """File name."""
    provider_reference: Annotated[dict[str, str] | None, refuse_null("an object")] = None
    """Provider name -> file id; takes precedence over ``url`` for the model."""
    provider_metadata: OptProviderMetadata = None
    """Provider metadata of the file."""


class SteeringMessageChunk(WireModel):
    """A user message injected into the running answer (experimental in v7)."""

    type: Literal["steering-message"]
    """The chunk type."""
    id: str
    """Id of the steering message."""
    parts: list[Annotated[SteeringTextPart | SteeringFilePart, Field(discriminator="type")]]
    """Its text and file parts."""


class ResetStepChunk(WireModel):
    """Drops the parts of the current step (the step is being retried)."""

    type: Literal["reset-step"]
    """The chunk type."""


class FinishChunkV7(FinishChunk):
    """Ends the assistant message; v7 adds the ``interrupted`` finish reason."""

    finish_reason: _OptFinishReasonV7 = None  # type: ignore[assignment]
    """Why the model stopped (``interrupted``: the provider stream ended without completing)."""
