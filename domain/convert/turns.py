"""UIMessages as neutral, typed turns, with every tool call paired with its result.

The three provider formats (``anthropic``, ``openai_chat``, ``openai_responses``)
share one set of rules, applied here once; their modules only render the
turns. ``build_turns(messages, unanswered=...)`` walks the UIMessages and gives:

- ``SystemTurn`` for a system message (its text parts joined, as the AI SDK does);
- ``UserTurn`` for a user message (text and file parts);
- ``AssistantTurn`` for each **step** of an assistant message (the parts between
  two ``step-start`` parts, as the AI SDK's ``convertToModelMessages`` cuts
  them): its content in part order, and the results of the step's tool calls,
  in the order of the calls. A renderer puts the content in one assistant
  message and the results in the message right after it.

Pairing rules (docs/behaviour.md §6), for tool calls the client executes:

============================================  ===============================================
tool part                                     result
============================================  ===============================================
``output-available`` (not ``preliminary``)    the output (``kind="output"``)
``output-error``                              the ``errorText`` (``kind="error"``)
``output-denied``, or ``approval-responded``  the denial reason, or "Tool call execution
with ``approved: false``                      denied." without one (``kind="denied"``)
any other state (``input-streaming``,         in the final message: refused with
``input-available``, ``approval-requested``,  ``UnansweredToolCallError``, or left out
``approval-responded`` approved, a            entirely with ``unanswered="omit"``;
``preliminary`` output)                       elsewhere: "The tool call was interrupted
                                              before a result was recorded."
                                              (``kind="interrupted"``)
============================================  ===============================================

"The final message" is the last user or assistant message when it is an
assistant message (system messages after it do not count): its unanswered
calls are the paused turn. An assistant message followed by a user (or
another assistant) message is over; its unanswered calls were interrupted.

Provider-executed tools (``providerExecuted: true``) never get a result in
the next message: the provider ran them inside the assistant turn. One with an
outcome (output, error, or a denied approval) becomes a ``ProviderToolCall``
in the assistant content; one without an outcome is left out (the client
cannot give the provider's result, and it never makes the turn "paused").

Other details: a call's input is its ``input``; an ``output-error`` call
without one sends its ``rawInput`` (the invalid input the model wrote, as the
AI SDK does); a call with neither is sent with ``{}``. Empty text parts,
``step-start``, ``source-url``, ``source-document``, ``data-*`` and unknown
parts are dropped; a message or step left with no content gives no turn. An
AI SDK 7 ``steering-message`` part (a user message the running answer took)
ends its step and becomes a ``UserTurn``.
Reasoning and files are kept with their provider metadata for the renderers
to map or drop. Pure: ``messages`` is not changed and shares nothing with the
turns (values are deep-copied).
"""

from __future__ import annotations

import base64
import copy
import json
import re
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from chatledger.domain.errors import (
    InvalidInputError,
    MessageConversionError,
    UnansweredToolCallError,
)
from chatledger.domain.tool_parts import is_tool_part, tool_name

__all__ = [
    "DENIED_TEXT",
    "ERROR_TEXT",
    "INTERRUPTED_TEXT",
    "AssistantBlock",
    "AssistantTurn",
    "DataUrl",
    "File",
    "ProviderToolCall",
    "Reasoning",
    "ResultKind",
    "SystemTurn",
    "Text",
    "ToolCall",
    "ToolResult",
    "Turn",
    "Unanswered",
    "UserBlock",
    "UserTurn",
    "build_turns",
    "file_omitted_text",
    "json_text",
    "parse_data_url",
    "provider_call_text",
    "provider_metadata",
]

Unanswered = Literal["refuse", "omit"]
ResultKind = Literal["output", "error", "denied", "interrupted"]

DENIED_TEXT: Final = "Tool call execution denied."
"""The result of a denied call whose approval gives no reason."""
INTERRUPTED_TEXT: Final = "The tool call was interrupted before a result was recorded."
"""The result synthesized for a call left unanswered before a later message."""
ERROR_TEXT: Final = "Tool execution failed."
"""The result of an ``output-error`` call whose ``errorText`` is missing."""

# -- turns and their content ----------------------------------------------------------------------


@dataclass(frozen=True)
class Text:
    """Text written by the user or the model (never empty)."""

    text: str
    provider_metadata: dict[str, Any] | None = None


@dataclass(frozen=True)
class File:
    """A file part: ``url`` is an ``http(s)`` URL or a ``data:`` URL."""

    media_type: str
    url: str
    filename: str | None = None
    provider_metadata: dict[str, Any] | None = None


@dataclass(frozen=True)
class Reasoning:
    """The model's reasoning; signatures and item ids live in ``provider_metadata``."""

    text: str
    provider_metadata: dict[str, Any] | None = None


@dataclass(frozen=True)
class ToolCall:
    """A tool call the client executes; its result is in the step's ``results``."""

    call_id: str
    tool_name: str
    input: Any
    """The call's input, any JSON value (``{}`` when the part has none)."""
    provider_metadata: dict[str, Any] | None = None
    """The part's ``callProviderMetadata``."""


@dataclass(frozen=True)
class ToolResult:
    """The result given to the model for one tool call."""

    call_id: str
    tool_name: str
    kind: ResultKind
    output: Any = None
    """The tool's output (``kind="output"`` only), any JSON value."""
    text: str = ""
    """The error text, denial reason or interruption notice (other kinds)."""

    @property
    def is_error(self) -> bool:
        """Whether the call did not produce an output (error, denial, interruption)."""
        return self.kind != "output"

    @property
    def content_text(self) -> str:
        """The result as text: a string output as it is, another output as JSON, else ``text``."""
        if self.kind != "output":
            return self.text
        return self.output if isinstance(self.output, str) else json_text(self.output)


@dataclass(frozen=True)
class ProviderToolCall:
    """A provider-executed tool call and its outcome, both inside the assistant turn."""

    call: ToolCall
    result: ToolResult
    """``kind`` is ``output``, ``error`` or ``denied`` (never ``interrupted``)."""
    result_provider_metadata: dict[str, Any] | None = None
    """The part's ``resultProviderMetadata``."""


UserBlock = Text | File
AssistantBlock = Text | Reasoning | File | ToolCall | ProviderToolCall


@dataclass(frozen=True)
class SystemTurn:
    """A system message's text (never empty)."""

    text: str
    message_id: str | None = None


@dataclass(frozen=True)
class UserTurn:
    """A user message's content (never empty)."""

    content: tuple[UserBlock, ...]
    message_id: str | None = None


@dataclass(frozen=True)
class AssistantTurn:
    """One step of an assistant message, and the results of its client tool calls."""

    content: tuple[AssistantBlock, ...]
    results: tuple[ToolResult, ...] = ()
    """One result per ``ToolCall`` of ``content``, in the same order."""
    message_id: str | None = None

    @property
    def tool_calls(self) -> tuple[ToolCall, ...]:
        """The client tool calls of the step, in part order."""
        return tuple(block for block in self.content if isinstance(block, ToolCall))


Turn = SystemTurn | UserTurn | AssistantTurn


# -- building the turns ---------------------------------------------------------------------------


def build_turns(messages: list[dict[str, Any]], *, unanswered: Unanswered = "refuse") -> list[Turn]:
    """The turns of ``messages`` (UIMessages as JSON), every client tool call paired with a result.

    Raises ``UnansweredToolCallError`` when the final message has calls with
    no result and ``unanswered`` is ``"refuse"``; ``MessageConversionError``
    for a message that is not a UIMessage (unknown role, parts not a list, a
    tool part without a ``toolCallId``); ``InvalidInputError`` for an unknown
    ``unanswered`` value.
    """
    if unanswered not in ("refuse", "omit"):
        raise InvalidInputError(f"unanswered must be 'refuse' or 'omit', not {unanswered!r}")
    if not isinstance(messages, list):
        raise MessageConversionError(f"messages must be a list, not {type(messages).__name__}")
    final = _final_message_index(messages)
    turns: list[Turn] = []
    pending: list[str] = []
    approved: list[str] = []  # the pending calls a human approved: ready to run, not paused
    for index, message in enumerate(messages):
        role = message.get("role") if isinstance(message, dict) else None
        if role == "system":
            turns += _system_turns(message)
        elif role == "user":
            turns += _user_turns(message)
        elif role == "assistant":
            builder = _AssistantBuilder(message, paused=index == final)
            turns += builder.turns(omit=unanswered == "omit")
            pending += builder.pending
            approved += builder.approved
        else:
            raise _error(message, f"unsupported role {role!r} (system, user or assistant)")
    if pending and unanswered == "refuse":
        raise UnansweredToolCallError(pending, approved=approved)
    return turns


def _final_message_index(messages: list[Any]) -> int | None:
    """Index of the last user/assistant message if it is an assistant message, else None."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        role = message.get("role") if isinstance(message, dict) else None
        if role == "assistant":
            return index
        if role == "user":
            return None
    return None


def _system_turns(message: dict[str, Any]) -> list[Turn]:
    texts = [part for part in _parts(message) if part.get("type") == "text"]
    text = "".join(_text_of(part, message) for part in texts)
    return [SystemTurn(text, _message_id(message))] if text else []


def _user_turns(message: dict[str, Any]) -> list[Turn]:
    content: list[UserBlock] = []
    for part in _parts(message):
        kind = part.get("type")
        if kind == "text":
            text = _text_of(part, message)
            if text:
                content.append(Text(text, provider_metadata(part)))
        elif kind == "file":
            content.append(_file(part, message))
        # reasoning, sources, data, tools and unknown parts: not user content
    return [UserTurn(tuple(content), _message_id(message))] if content else []


class _AssistantBuilder:
    """The steps of one assistant message as turns, and the calls it leaves unanswered."""

    def __init__(self, message: dict[str, Any], *, paused: bool) -> None:
        self.message = message
        self.paused = paused
        self.pending: list[str] = []
        """Ids of the calls with no result in the final message (the paused turn)."""
        self.approved: list[str] = []
        """Those of them approved and waiting to run (the turn is ready to continue)."""

    def turns(self, *, omit: bool) -> list[Turn]:
        turns: list[Turn] = []
        for step in self._steps():
            if isinstance(step, dict):  # a steering message: the user spoke between two steps
                steering = {"id": self.message.get("id"), "parts": step.get("parts")}
                turns += _user_turns(steering)
                continue
            step_turn = self._step(step, omit=omit)
            if step_turn.content:
                turns.append(step_turn)
        return turns

    def _steps(self) -> list[list[dict[str, Any]] | dict[str, Any]]:
        """The steps, and the steering-message parts (AI SDK 7) that end one, in order."""
        steps: list[list[dict[str, Any]] | dict[str, Any]] = [[]]
        for part in _parts(self.message):
            if part.get("type") == "step-start":
                steps.append([])
            elif part.get("type") == "steering-message":
                steps += [part, []]
            else:
                step = steps[-1]
                assert isinstance(step, list)
                step.append(part)
        return [step for step in steps if step]

    def _step(self, parts: list[dict[str, Any]], *, omit: bool) -> AssistantTurn:
        content: list[AssistantBlock] = []
        results: list[ToolResult] = []
        for part in parts:
            kind = part.get("type")
            if kind == "text":
                text = _text_of(part, self.message)
                if text:
                    content.append(Text(text, provider_metadata(part)))
            elif kind == "reasoning":
                content.append(Reasoning(_text_of(part, self.message), provider_metadata(part)))
            elif kind == "file":
                content.append(_file(part, self.message))
            elif is_tool_part(part):
                self._tool(part, content, results, omit=omit)
            # source-url, source-document, data-* and unknown parts are dropped
        return AssistantTurn(tuple(content), tuple(results), _message_id(self.message))

    def _tool(
        self,
        part: dict[str, Any],
        content: list[AssistantBlock],
        results: list[ToolResult],
        *,
        omit: bool,
    ) -> None:
        call = _tool_call(part, self.message)
        result = _outcome(part, call)
        if part.get("providerExecuted") is True:
            if result is not None:
                metadata = _metadata(part.get("resultProviderMetadata"))
                content.append(ProviderToolCall(call, result, metadata))
            return  # no outcome yet: the provider's business, left out
        if result is None:
            if self.paused:
                self.pending.append(call.call_id)
                if part.get("state") == "approval-responded":
                    self.approved.append(call.call_id)
                if omit:
                    return
                # refused at the end of build_turns; keep going to name every pending call
            result = ToolResult(call.call_id, call.tool_name, "interrupted", text=INTERRUPTED_TEXT)
        content.append(call)
        results.append(result)


def _tool_call(part: dict[str, Any], message: Any) -> ToolCall:
    call_id = part.get("toolCallId")
    if not isinstance(call_id, str):
        raise _error(message, f"a tool part has no string toolCallId: {_show(part)}")
    try:
        name = tool_name(part)
    except (KeyError, ValueError) as error:
        raise _error(message, f"a tool part has no tool name: {_show(part)}") from error
    if part.get("state") == "output-error" and part.get("input") is None and "rawInput" in part:
        value = part["rawInput"]  # an invalid call: the model sees what it wrote
    else:
        value = part.get("input", {})
    metadata = _metadata(part.get("callProviderMetadata"))
    return ToolCall(call_id, name, copy.deepcopy(value), metadata)


def _outcome(part: dict[str, Any], call: ToolCall) -> ToolResult | None:
    """The call's result, or None while it has none."""
    state = part.get("state")
    approval = part.get("approval")
    denied = isinstance(approval, dict) and approval.get("approved") is False
    if state == "output-denied" or (state == "approval-responded" and denied):
        reason = approval.get("reason") if isinstance(approval, dict) else None
        text = reason if isinstance(reason, str) and reason.strip() else DENIED_TEXT
        return ToolResult(call.call_id, call.tool_name, "denied", text=text)
    if state == "output-error":
        error = part.get("errorText")
        if not isinstance(error, str):
            error = ERROR_TEXT if error is None else json_text(error)
        return ToolResult(call.call_id, call.tool_name, "error", text=error)
    if state == "output-available" and part.get("preliminary") is not True:
        output = copy.deepcopy(part.get("output"))
        return ToolResult(call.call_id, call.tool_name, "output", output=output)
    # input-streaming, input-available, approval-requested, approval-responded (approved),
    # a preliminary output (the tool is still running), or no known state: no result yet.
    return None


# -- helpers shared with the renderers ------------------------------------------------------------


def json_text(value: Any) -> str:
    """``value`` as compact JSON text (non-ASCII kept), as ``JSON.stringify`` writes it."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def provider_metadata(part: Mapping[str, Any]) -> dict[str, Any] | None:
    """A part's ``providerMetadata`` (a copy), or None."""
    return _metadata(part.get("providerMetadata"))


def provider_call_text(call: ProviderToolCall) -> str:
    """A provider-executed call and its outcome as text, where a format has no block for it."""
    name, result = call.call.tool_name, call.result
    if result.kind == "denied":
        return f"[provider tool {name} was not run: {result.text}]"
    head = f"[provider tool {name} ran with input {json_text(call.call.input)}"
    if result.kind == "error":
        return f"{head} and failed: {result.text}]"
    return f"{head}; result: {result.content_text}]"


def file_omitted_text(file: File) -> str:
    """What the model reads in place of a file its format cannot carry."""
    name = f" {file.filename!r}" if file.filename else ""
    return f"[file{name} ({file.media_type}) omitted: this model format cannot carry it]"


@dataclass(frozen=True)
class DataUrl:
    """A parsed ``data:`` URL."""

    media_type: str
    """The media type it declares (``text/plain`` when it declares none)."""
    data: bytes = field(repr=False)

    @property
    def base64(self) -> str:
        """The data, base64-encoded."""
        return base64.b64encode(self.data).decode("ascii")

    @property
    def text(self) -> str:
        """The data decoded as UTF-8 (undecodable bytes replaced)."""
        return self.data.decode("utf-8", errors="replace")


_DATA_URL: Final = re.compile(r"data:(?P<type>[^;,]*)(?P<params>(?:;[^;,]*)*),(?P<data>.*)", re.S)


def parse_data_url(url: str) -> DataUrl | None:
    """The media type and bytes of a ``data:`` URL, or None if ``url`` is not a valid one."""
    match = _DATA_URL.fullmatch(url)
    if match is None:
        return None
    params = [p.strip().lower() for p in match["params"].split(";") if p.strip()]
    media_type = match["type"].strip().lower() or "text/plain"
    raw = match["data"]
    if "base64" in params:
        try:
            data = base64.b64decode(urllib.parse.unquote(raw), validate=False)
        except ValueError:
            return None
    else:
        data = urllib.parse.unquote_to_bytes(raw)
    return DataUrl(media_type, data)


# -- reading UIMessages ---------------------------------------------------------------------------


def _parts(message: dict[str, Any]) -> list[dict[str, Any]]:
    parts = message.get("parts")
    if not isinstance(parts, list):
        raise _error(message, f"parts is not a list: {_show(parts)}")
    for part in parts:
        if not isinstance(part, dict) or not isinstance(part.get("type"), str):
            raise _error(message, f"a part has no string 'type': {_show(part)}")
    return parts


def _text_of(part: dict[str, Any], message: Any) -> str:
    text = part.get("text")
    if not isinstance(text, str):
        raise _error(message, f"a {part['type']} part has no string 'text': {_show(part)}")
    return text


def _file(part: dict[str, Any], message: Any) -> File:
    media_type, url = part.get("mediaType"), part.get("url")
    if not isinstance(media_type, str) or not isinstance(url, str):
        raise _error(message, f"a file part needs string mediaType and url: {_show(part)}")
    filename = part.get("filename")
    return File(
        media_type,
        url,
        filename if isinstance(filename, str) else None,
        provider_metadata(part),
    )


def _metadata(value: Any) -> dict[str, Any] | None:
    return copy.deepcopy(value) if isinstance(value, dict) else None


def _message_id(message: dict[str, Any]) -> str | None:
    message_id = message.get("id")
    return message_id if isinstance(message_id, str) else None


def _show(value: Any) -> str:
    shown = repr(value)
    return shown if len(shown) <= 80 else shown[:77] + "..."


def _error(message: Any, reason: str) -> MessageConversionError:
    message_id = message.get("id") if isinstance(message, dict) else None
    return MessageConversionError(
        reason, message_id=message_id if isinstance(message_id, str) else None
    )
