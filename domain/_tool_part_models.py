"""Tool parts of a UIMessage, static and dynamic, one model per state (re-exported by ``parts``)."""

from __future__ import annotations

from typing import Annotated, Final, Literal

from chatledger.domain._wire import (
    Absent,
    FalseOnly,
    OptBool,
    OptFalse,
    OptInputEncoding,
    OptProviderMetadata,
    OptStr,
    OptToolMetadata,
    TrueOnly,
    Unknown,
    WireModel,
    prefixed,
    refuse_null,
)

__all__ = [
    "DYNAMIC_TOOL_PARTS",
    "STATIC_TOOL_PARTS",
    "ApprovalDenied",
    "ApprovalGranted",
    "ApprovalRequested",
    "ApprovalResponded",
    "DynamicToolApprovalRequestedPart",
    "DynamicToolApprovalRespondedPart",
    "DynamicToolInputAvailablePart",
    "DynamicToolInputStreamingPart",
    "DynamicToolOutputAvailablePart",
    "DynamicToolOutputDeniedPart",
    "DynamicToolOutputErrorPart",
    "ToolApprovalRequestedPart",
    "ToolApprovalRespondedPart",
    "ToolInputAvailablePart",
    "ToolInputStreamingPart",
    "ToolOutputAvailablePart",
    "ToolOutputDeniedPart",
    "ToolOutputErrorPart",
]


class _Approval(WireModel):
    id: str
    """Id of the approval (the ``approvalId`` of the request)."""
    descriptor: Unknown = None
    """Opaque data for the UI, from the request's ``approvalDescriptor``."""
    signature: OptStr = None
    """Signature that lets the server detect a forged approval."""
    input_schema_input: Unknown = None
    """Input as checked by the tool's schema (signed approvals)."""


class ApprovalRequested(_Approval):
    """An approval asked for and not answered yet."""

    approved: Absent = None
    """Must be absent until the user answers."""
    reason: Absent = None
    """Must be absent until the user answers."""


class ApprovalResponded(_Approval):
    """An answered approval."""

    approved: bool
    """The user's answer."""
    reason: OptStr = None
    """Why the user answered so."""


class ApprovalGranted(ApprovalResponded):
    """An approval that was granted (the only kind an executed call may carry)."""

    approved: TrueOnly
    """Always true."""


class ApprovalDenied(ApprovalResponded):
    """An approval that was denied."""

    approved: FalseOnly
    """Always false."""


class _ToolCall(WireModel):
    tool_call_id: str
    """Id of the tool call, unique in the conversation."""
    tool_metadata: OptToolMetadata = None
    """Free JSON metadata about the tool (string keys)."""
    provider_executed: OptBool = None
    """True when the provider itself ran the tool."""
    call_provider_metadata: OptProviderMetadata = None
    """Provider metadata of the call."""


class _Static(_ToolCall):
    # The SDK's part schema has no "title": a title is an unknown key (stripped by the SDK).
    type: Annotated[str, prefixed("tool-")]
    """``tool-`` followed by the tool name."""


class _Dynamic(_ToolCall):
    type: Literal["dynamic-tool"]
    """Always ``dynamic-tool``."""
    tool_name: str
    """Name of the tool called."""
    dynamic: OptFalse = None
    """False only when validation turned an unregistered static tool part into this one."""


class _InputStreaming(WireModel):
    state: Literal["input-streaming"]
    """The input is still streaming."""
    input: Unknown = None
    """Partial input parsed so far."""
    raw_input: OptStr = None
    """Raw input text received so far."""
    input_encoding: OptInputEncoding = None
    """How the raw input is read: ``json`` (default) or ``text``."""
    output: Absent = None
    """Must be absent in this state."""
    error_text: Absent = None
    """Must be absent in this state."""
    approval: Absent = None
    """Must be absent in this state."""


class _InputAvailable(WireModel):
    state: Literal["input-available"]
    """The input is complete; the call waits for its output."""
    input: Unknown
    """The complete input (key required)."""
    output: Absent = None
    """Must be absent in this state."""
    error_text: Absent = None
    """Must be absent in this state."""
    approval: Absent = None
    """Must be absent in this state."""


class _ApprovalRequested(WireModel):
    state: Literal["approval-requested"]
    """The call waits for the user's approval."""
    input: Unknown
    """The complete input (key required)."""
    output: Absent = None
    """Must be absent in this state."""
    error_text: Absent = None
    """Must be absent in this state."""
    approval: ApprovalRequested
    """The pending approval."""


class _ApprovalResponded(WireModel):
    state: Literal["approval-responded"]
    """The user answered the approval; the call has not run yet."""
    input: Unknown
    """The complete input (key required)."""
    output: Absent = None
    """Must be absent in this state."""
    error_text: Absent = None
    """Must be absent in this state."""
    approval: ApprovalResponded
    """The answered approval."""


class _OutputAvailable(WireModel):
    state: Literal["output-available"]
    """The call ran and has an output."""
    input: Unknown
    """The complete input (key required)."""
    output: Unknown
    """The output (key required, any JSON value)."""
    error_text: Absent = None
    """Must be absent in this state."""
    result_provider_metadata: OptProviderMetadata = None
    """Provider metadata of the result."""
    preliminary: OptBool = None
    """True for an intermediate output that a later one replaces."""
    approval: Annotated[ApprovalGranted | None, refuse_null("an approval object")] = None
    """The granted approval, when the call needed one."""


class _OutputError(WireModel):
    state: Literal["output-error"]
    """The call failed (or was invalid)."""
    input: Unknown = None
    """The input, when it was valid."""
    raw_input: Unknown = None
    """The invalid input of a static tool part (deprecated)."""
    output: Absent = None
    """Must be absent in this state."""
    error_text: str
    """What went wrong."""
    result_provider_metadata: OptProviderMetadata = None
    """Provider metadata of the result."""
    approval: Annotated[ApprovalGranted | None, refuse_null("an approval object")] = None
    """The granted approval, when the call needed one."""


class _OutputDenied(WireModel):
    state: Literal["output-denied"]
    """The user denied the call."""
    input: Unknown
    """The complete input (key required)."""
    output: Absent = None
    """Must be absent in this state."""
    error_text: Absent = None
    """Must be absent in this state."""
    approval: ApprovalDenied
    """The denied approval."""


class ToolInputStreamingPart(_Static, _InputStreaming):
    """A static tool call whose input is still streaming."""


class ToolInputAvailablePart(_Static, _InputAvailable):
    """A static tool call with complete input, waiting for its output."""


class ToolApprovalRequestedPart(_Static, _ApprovalRequested):
    """A static tool call waiting for the user's approval."""


class ToolApprovalRespondedPart(_Static, _ApprovalResponded):
    """A static tool call whose approval was answered."""


class ToolOutputAvailablePart(_Static, _OutputAvailable):
    """A static tool call with its output."""


class ToolOutputErrorPart(_Static, _OutputError):
    """A static tool call that failed."""


class ToolOutputDeniedPart(_Static, _OutputDenied):
    """A static tool call the user denied."""


class DynamicToolInputStreamingPart(_Dynamic, _InputStreaming):
    """A dynamic tool call whose input is still streaming."""


class DynamicToolInputAvailablePart(_Dynamic, _InputAvailable):
    """A dynamic tool call with complete input, waiting for its output."""


class DynamicToolApprovalRequestedPart(_Dynamic, _ApprovalRequested):
    """A dynamic tool call waiting for the user's approval."""


class DynamicToolApprovalRespondedPart(_Dynamic, _ApprovalResponded):
    """A dynamic tool call whose approval was answered."""


class DynamicToolOutputAvailablePart(_Dynamic, _OutputAvailable):
    """A dynamic tool call with its output."""


class DynamicToolOutputErrorPart(_Dynamic, _OutputError):
    """A dynamic tool call that failed."""


class DynamicToolOutputDeniedPart(_Dynamic, _OutputDenied):
    """A dynamic tool call the user denied."""


STATIC_TOOL_PARTS: Final[dict[str, type[WireModel]]] = {
    "input-streaming": ToolInputStreamingPart,
    "input-available": ToolInputAvailablePart,
    "approval-requested": ToolApprovalRequestedPart,
    "approval-responded": ToolApprovalRespondedPart,
    "output-available": ToolOutputAvailablePart,
    "output-error": ToolOutputErrorPart,
    "output-denied": ToolOutputDeniedPart,
}
"""The static tool part model of each state."""

DYNAMIC_TOOL_PARTS: Final[dict[str, type[WireModel]]] = {
    "input-streaming": DynamicToolInputStreamingPart,
    "input-available": DynamicToolInputAvailablePart,
    "approval-requested": DynamicToolApprovalRequestedPart,
    "approval-responded": DynamicToolApprovalRespondedPart,
    "output-available": DynamicToolOutputAvailablePart,
    "output-error": DynamicToolOutputErrorPart,
    "output-denied": DynamicToolOutputDeniedPart,
}
"""The dynamic tool part model of each state."""
