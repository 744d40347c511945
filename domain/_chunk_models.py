"""The AI SDK v6 UI message stream chunk models, one per chunk type (re-exported by ``chunks``)."""

from __future__ import annotations

from typing import Annotated, Literal

from chatledger.domain._wire import (
    OptBool,
    OptInputEncoding,
    OptProviderMetadata,
    OptStr,
    OptToolMetadata,
    Unknown,
    WireModel,
    prefixed,
    refuse_null,
)

__all__ = [
    "AbortChunk",
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
]


FinishReason = Literal["stop", "length", "content-filter", "tool-calls", "error", "other"]


class _PartChunk(WireModel):
    id: str
    """Id of the text or reasoning part, chosen by the provider."""
    provider_metadata: OptProviderMetadata = None
    """Provider metadata (provider name -> JSON object), stored on the part."""


class _DeltaChunk(_PartChunk):
    delta: str
    """Text appended to the part."""


class TextStartChunk(_PartChunk):
    """Opens a text part."""

    type: Literal["text-start"]
    """The chunk type."""


class TextDeltaChunk(_DeltaChunk):
    """Appends text to an open text part."""

    type: Literal["text-delta"]
    """The chunk type."""


class TextEndChunk(_PartChunk):
    """Closes a text part (its state becomes ``done``)."""

    type: Literal["text-end"]
    """The chunk type."""


class ReasoningStartChunk(_PartChunk):
    """Opens a reasoning part."""

    type: Literal["reasoning-start"]
    """The chunk type."""


class ReasoningDeltaChunk(_DeltaChunk):
    """Appends text to an open reasoning part."""

    type: Literal["reasoning-delta"]
    """The chunk type."""


class ReasoningEndChunk(_PartChunk):
    """Closes a reasoning part."""

    type: Literal["reasoning-end"]
    """The chunk type."""


class ErrorChunk(WireModel):
    """An in-band error; the SDK masks the text as "An error occurred." by default."""

    type: Literal["error"]
    """The chunk type."""
    error_text: str
    """What went wrong."""


class _ToolCallChunk(WireModel):
    tool_call_id: str
    """Id of the tool call, unique in the conversation."""
    provider_executed: OptBool = None
    """True when the provider itself ran the tool."""
    provider_metadata: OptProviderMetadata = None
    """Provider metadata of the call or its result."""
    tool_metadata: OptToolMetadata = None
    """Free JSON metadata about the tool (string keys)."""
    dynamic: OptBool = None
    """True for a dynamic tool (a ``dynamic-tool`` part instead of ``tool-<name>``)."""


class _NamedToolCallChunk(_ToolCallChunk):
    tool_name: str
    """Name of the tool called."""
    title: OptStr = None
    """Human-readable title of the tool."""


class ToolInputStartChunk(_NamedToolCallChunk):
    """Opens a tool call whose input will stream as text deltas."""

    type: Literal["tool-input-start"]
    """The chunk type."""
    input_encoding: OptInputEncoding = None
    """How the streamed input text is read: ``json`` (default) or ``text``."""


class ToolInputDeltaChunk(WireModel):
    """Appends text to the streaming input of a tool call."""

    type: Literal["tool-input-delta"]
    """The chunk type."""
    tool_call_id: str
    """Id of the tool call."""
    input_text_delta: str
    """Text appended to the raw input."""


class ToolInputAvailableChunk(_NamedToolCallChunk):
    """Gives the complete input of a tool call."""

    type: Literal["tool-input-available"]
    """The chunk type."""
    input: Unknown
    """The tool input (key required, any JSON value)."""


class ToolInputErrorChunk(_NamedToolCallChunk):
    """Reports an invalid tool call (unknown tool, input failing its schema)."""

    type: Literal["tool-input-error"]
    """The chunk type."""
    input: Unknown
    """The invalid input as the model produced it (key required)."""
    error_text: str
    """Why the call is invalid."""


class ToolApprovalRequestChunk(WireModel):
    """Asks the user to approve a tool call before it runs."""

    type: Literal["tool-approval-request"]
    """The chunk type."""
    approval_id: str
    """Id of the approval, answered by ``addToolApprovalResponse``."""
    tool_call_id: str
    """Id of the tool call awaiting approval."""
    approval_descriptor: Unknown = None
    """Opaque data for the UI."""
    input_schema_input: Unknown = None
    """Input as checked by the tool's schema (signed approvals)."""
    signature: OptStr = None
    """Signature that lets the server detect a forged approval."""


class ToolOutputAvailableChunk(_ToolCallChunk):
    """Gives the output of a tool call."""

    type: Literal["tool-output-available"]
    """The chunk type."""
    output: Unknown
    """The tool output (key required, any JSON value)."""
    preliminary: OptBool = None
    """True for an intermediate output that a later one replaces."""


class ToolOutputErrorChunk(_ToolCallChunk):
    """Reports that running a tool failed."""

    type: Literal["tool-output-error"]
    """The chunk type."""
    error_text: str
    """What went wrong."""


class ToolOutputDeniedChunk(WireModel):
    """Reports that the user denied a tool call."""

    type: Literal["tool-output-denied"]
    """The chunk type."""
    tool_call_id: str
    """Id of the denied tool call."""


class SourceUrlChunk(WireModel):
    """Cites a web page."""

    type: Literal["source-url"]
    """The chunk type."""
    source_id: str
    """Id of the source."""
    url: str
    """Address of the page."""
    title: OptStr = None
    """Title of the page."""
    provider_metadata: OptProviderMetadata = None
    """Provider metadata of the source."""


class SourceDocumentChunk(WireModel):
    """Cites a document."""

    type: Literal["source-document"]
    """The chunk type."""
    source_id: str
    """Id of the source."""
    media_type: str
    """IANA media type of the document."""
    title: str
    """Title of the document."""
    filename: OptStr = None
    """File name of the document."""
    provider_metadata: OptProviderMetadata = None
    """Provider metadata of the source."""


class FileChunk(WireModel):
    """Attaches a file produced by the model."""

    type: Literal["file"]
    """The chunk type."""
    url: str
    """URL or data URL of the file."""
    media_type: str
    """IANA media type of the file."""
    provider_metadata: OptProviderMetadata = None
    """Provider metadata of the file."""


class DataChunk(WireModel):
    """Application data, ``type`` being ``data-<name>``; same id updates the part in place."""

    type: Annotated[str, prefixed("data-")]
    """``data-`` followed by the data part's name."""
    id: OptStr = None
    """Id of the data part; a later chunk with the same type and id replaces its data."""
    data: Unknown
    """The data (key required, any JSON value)."""
    transient: OptBool = None
    """True for data that is delivered live but never stored in the message."""


class StartStepChunk(WireModel):
    """Starts a step (one model call); the fold adds a ``step-start`` part."""

    type: Literal["start-step"]
    """The chunk type."""


class FinishStepChunk(WireModel):
    """Ends a step."""

    type: Literal["finish-step"]
    """The chunk type."""


class StartChunk(WireModel):
    """Starts an assistant message, optionally naming its id."""

    type: Literal["start"]
    """The chunk type."""
    message_id: OptStr = None
    """Id of the assistant message."""
    message_metadata: Unknown = None
    """Metadata merged into the message's metadata."""


class FinishChunk(WireModel):
    """Ends the assistant message."""

    type: Literal["finish"]
    """The chunk type."""
    finish_reason: Annotated[FinishReason | None, refuse_null("a finish reason")] = None
    """Why the model stopped."""
    message_metadata: Unknown = None
    """Metadata merged into the message's metadata."""


class AbortChunk(WireModel):
    """The response was aborted."""

    type: Literal["abort"]
    """The chunk type."""
    reason: OptStr = None
    """Why it was aborted."""


class MessageMetadataChunk(WireModel):
    """Metadata for the message, sent on its own."""

    type: Literal["message-metadata"]
    """The chunk type."""
    message_metadata: Unknown
    """Metadata merged into the message's metadata (key required)."""
