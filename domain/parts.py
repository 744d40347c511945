"""AI SDK v6 UIMessages and their parts, validated exactly as ``validateUIMessages`` does."""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal, get_args

from pydantic import Discriminator, Tag, ValidationError, model_validator
from pydantic_core import PydanticCustomError

from chatledger.domain._tool_part_models import (
    DYNAMIC_TOOL_PARTS,
    STATIC_TOOL_PARTS,
    ApprovalDenied,
    ApprovalGranted,
    ApprovalRequested,
    ApprovalResponded,
    DynamicToolApprovalRequestedPart,
    DynamicToolApprovalRespondedPart,
    DynamicToolInputAvailablePart,
    DynamicToolInputStreamingPart,
    DynamicToolOutputAvailablePart,
    DynamicToolOutputDeniedPart,
    DynamicToolOutputErrorPart,
    ToolApprovalRequestedPart,
    ToolApprovalRespondedPart,
    ToolInputAvailablePart,
    ToolInputStreamingPart,
    ToolOutputAvailablePart,
    ToolOutputDeniedPart,
    ToolOutputErrorPart,
)
from chatledger.domain._wire import (
    OptProviderMetadata,
    OptStr,
    Unknown,
    WireModel,
    describe_error,
    prefixed,
    refuse_null,
    show_value,
    type_name,
)
from chatledger.domain.dialects import V6, Dialect
from chatledger.domain.errors import InvalidMessageError
from chatledger.domain.tool_parts import is_tool_part, tool_name

__all__ = [
    "TERMINAL_STATES",
    "TOOL_STATES",
    "ApprovalDenied",
    "ApprovalGranted",
    "ApprovalRequested",
    "ApprovalResponded",
    "DataPart",
    "DynamicToolApprovalRequestedPart",
    "DynamicToolApprovalRespondedPart",
    "DynamicToolInputAvailablePart",
    "DynamicToolInputStreamingPart",
    "DynamicToolOutputAvailablePart",
    "DynamicToolOutputDeniedPart",
    "DynamicToolOutputErrorPart",
    "FilePart",
    "ReasoningPart",
    "SourceDocumentPart",
    "SourceUrlPart",
    "StepStartPart",
    "TextPart",
    "ToolApprovalRequestedPart",
    "ToolApprovalRespondedPart",
    "ToolInputAvailablePart",
    "ToolInputStreamingPart",
    "ToolOutputAvailablePart",
    "ToolOutputDeniedPart",
    "ToolOutputErrorPart",
    "ToolState",
    "UIMessage",
    "UIPart",
    "check_message",
    "is_tool_part",
    "parse_message",
    "tool_name",
]

ToolState = Literal[
    "input-streaming",
    "input-available",
    "approval-requested",
    "approval-responded",
    "output-available",
    "output-error",
    "output-denied",
]
TOOL_STATES: Final[tuple[ToolState, ...]] = get_args(ToolState)
"""The seven tool part states, in their usual order."""
TERMINAL_STATES: Final[tuple[ToolState, ...]] = (
    "output-available",
    "output-error",
    "output-denied",
)
"""The states after which a tool call is settled (a ``preliminary`` output is not)."""

_TextState = Annotated[Literal["streaming", "done"] | None, refuse_null("'streaming' or 'done'")]


class TextPart(WireModel):
    """Text written by the user or the model."""

    type: Literal["text"]
    """Always ``text``."""
    text: str
    """The text."""
    state: _TextState = None
    """``streaming`` while deltas arrive, then ``done``."""
    provider_metadata: OptProviderMetadata = None
    """Provider metadata of the text."""


class ReasoningPart(WireModel):
    """The model's reasoning."""

    type: Literal["reasoning"]
    """Always ``reasoning``."""
    id: OptStr = None
    """Provider id of the reasoning block."""
    text: str
    """The reasoning text."""
    state: _TextState = None
    """``streaming`` while deltas arrive, then ``done``."""
    provider_metadata: OptProviderMetadata = None
    """Provider metadata of the reasoning (signatures live here)."""


class SourceUrlPart(WireModel):
    """A cited web page."""

    type: Literal["source-url"]
    """Always ``source-url``."""
    source_id: str
    """Id of the source."""
    url: str
    """Address of the page."""
    title: OptStr = None
    """Title of the page."""
    provider_metadata: OptProviderMetadata = None
    """Provider metadata of the source."""


class SourceDocumentPart(WireModel):
    """A cited document."""

    type: Literal["source-document"]
    """Always ``source-document``."""
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


class FilePart(WireModel):
    """A file, given by URL or data URL."""

    type: Literal["file"]
    """Always ``file``."""
    media_type: str
    """IANA media type of the file."""
    filename: OptStr = None
    """File name of the file."""
    url: str
    """URL or data URL of the file."""
    provider_metadata: OptProviderMetadata = None
    """Provider metadata of the file."""


class StepStartPart(WireModel):
    """Marks the start of a step (one model call) in an assistant message."""

    type: Literal["step-start"]
    """Always ``step-start``."""


class DataPart(WireModel):
    """Application data, ``type`` being ``data-<name>``."""

    type: Annotated[str, prefixed("data-")]
    """``data-`` followed by the data part's name."""
    id: OptStr = None
    """Id of the data part (data chunks with the same type and id update it)."""
    data: Unknown
    """The data (key required, any JSON value)."""


_SIMPLE: Final[dict[str, type[WireModel]]] = {
    "text": TextPart,
    "reasoning": ReasoningPart,
    "source-url": SourceUrlPart,
    "source-document": SourceDocumentPart,
    "file": FilePart,
    "step-start": StepStartPart,
}


def _part_tag(value: Any) -> str | None:
    if isinstance(value, dict):
        kind, state = value.get("type"), value.get("state")
    else:
        kind, state = getattr(value, "type", None), getattr(value, "state", None)
    if not isinstance(kind, str):
        return None
    if kind in _SIMPLE:
        return kind
    if kind.startswith("data-"):
        return "data"
    family = "dynamic" if kind == "dynamic-tool" else "tool" if kind.startswith("tool-") else None
    if family is None or not isinstance(state, str) or state not in STATIC_TOOL_PARTS:
        return None
    return f"{family}:{state}"


UIPart = Annotated[
    Annotated[TextPart, Tag("text")]
    | Annotated[ReasoningPart, Tag("reasoning")]
    | Annotated[SourceUrlPart, Tag("source-url")]
    | Annotated[SourceDocumentPart, Tag("source-document")]
    | Annotated[FilePart, Tag("file")]
    | Annotated[StepStartPart, Tag("step-start")]
    | Annotated[DataPart, Tag("data")]
    | Annotated[ToolInputStreamingPart, Tag("tool:input-streaming")]
    | Annotated[ToolInputAvailablePart, Tag("tool:input-available")]
    | Annotated[ToolApprovalRequestedPart, Tag("tool:approval-requested")]
    | Annotated[ToolApprovalRespondedPart, Tag("tool:approval-responded")]
    | Annotated[ToolOutputAvailablePart, Tag("tool:output-available")]
    | Annotated[ToolOutputErrorPart, Tag("tool:output-error")]
    | Annotated[ToolOutputDeniedPart, Tag("tool:output-denied")]
    | Annotated[DynamicToolInputStreamingPart, Tag("dynamic:input-streaming")]
    | Annotated[DynamicToolInputAvailablePart, Tag("dynamic:input-available")]
    | Annotated[DynamicToolApprovalRequestedPart, Tag("dynamic:approval-requested")]
    | Annotated[DynamicToolApprovalRespondedPart, Tag("dynamic:approval-responded")]
    | Annotated[DynamicToolOutputAvailablePart, Tag("dynamic:output-available")]
    | Annotated[DynamicToolOutputErrorPart, Tag("dynamic:output-error")]
    | Annotated[DynamicToolOutputDeniedPart, Tag("dynamic:output-denied")],
    Discriminator(_part_tag),
]
"""Any UIMessage part, discriminated on ``type`` (and ``state`` for tool parts)."""


class _MessageHead(WireModel):
    id: str
    """Id of the message."""
    role: Literal["system", "user", "assistant"]
    """Who wrote the message."""
    metadata: Unknown = None
    """Application metadata of the message."""
    parts: list[Any]
    """The parts, in order (at least one unless the role is ``assistant``)."""

    @model_validator(mode="after")
    def _has_a_part_unless_assistant(self) -> _MessageHead:
        if self.role != "assistant" and not self.parts:
            raise PydanticCustomError(
                "rule", "a {role} message needs at least one part", {"role": self.role}
            )
        return self


class UIMessage(_MessageHead):
    """An AI SDK v6 UIMessage (unknown keys are kept, where the SDK strips them)."""

    parts: list[UIPart]
    """The parts, in order (at least one unless the role is ``assistant``)."""


def _short(text: str) -> str:
    return text if len(text) <= 60 else text[:57] + "..."


def _part_problem(index: int, part: object, dialect: Dialect) -> str | None:
    where = f"parts[{index}]"
    if not isinstance(part, dict):
        return f"{where}: part must be a JSON object, got {type_name(part)}"
    if "type" not in part:
        return f"{where}: missing required field 'type'"
    kind = part["type"]
    if not isinstance(kind, str):
        return f"{where}: field 'type' must be a string, got {type_name(kind)}"
    label = f"{where} ({_short(kind)})"
    model = (
        _SIMPLE.get(kind)
        or (DataPart if kind.startswith("data-") else None)
        or dialect.part_models.get(kind)
    )
    if model is None:
        table = DYNAMIC_TOOL_PARTS if kind == "dynamic-tool" else None
        table = STATIC_TOOL_PARTS if kind.startswith("tool-") else table
        if table is None:
            return f"{where}: unknown part type {_short(kind)!r}"
        state = part.get("state")
        if "state" not in part:
            return f"{label}: missing required field 'state'"
        if not isinstance(state, str) or state not in table:
            states = ", ".join(f"'{s}'" for s in TOOL_STATES)
            return f"{label}: field 'state' must be one of {states}, got {show_value(state)}"
        model, label = table[state], f"{where} ({_short(kind)}, state {state!r})"
    try:
        model.model_validate(part, strict=True, by_alias=True, by_name=False)
    except ValidationError as error:
        return f"{label}: {describe_error(error, 'part')}"
    return None


def check_message(raw: object, dialect: Dialect = V6) -> dict[str, Any]:
    """Validate one UIMessage (parsed JSON); return it unchanged, or raise InvalidMessageError.

    The rules are those of the SDK's ``validateUIMessages`` (of the AI SDK
    ``dialect``: v7 adds ``custom``, ``reasoning-file`` and ``steering-message``
    parts), but where
    the SDK strips unknown keys, the message is returned as given (unknown keys kept).
    """
    if not isinstance(raw, dict):
        raise InvalidMessageError(f"message must be a JSON object, got {type_name(raw)}")
    message_id = raw.get("id") if isinstance(raw.get("id"), str) else None
    try:
        _MessageHead.model_validate(raw, strict=True, by_alias=True, by_name=False)
        for index, part in enumerate(raw["parts"]):
            problem = _part_problem(index, part, dialect)
            if problem is not None:
                raise InvalidMessageError(problem, message_id=message_id)
    except ValidationError as error:
        reason = describe_error(error, "message")
        raise InvalidMessageError(reason, message_id=message_id) from None
    except RecursionError:
        reason = "message is nested too deeply (or cyclic)"
        raise InvalidMessageError(reason, message_id=message_id) from None
    return raw


def parse_message(raw: object) -> UIMessage:
    """Validate one UIMessage (a parsed JSON value) and return its model.

    Raises InvalidMessageError, as ``check_message`` does.
    """
    check_message(raw)
    return UIMessage.model_validate(raw, strict=True, by_alias=True, by_name=False)
