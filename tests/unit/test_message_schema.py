"""The AI SDK v6 UIMessage schema: parts, tool states, approvals, and the refusal messages."""

from __future__ import annotations

import copy
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from chatledger.domain import parts as p
from chatledger.domain.errors import InvalidMessageError
from chatledger.domain.parts import (
    TERMINAL_STATES,
    TOOL_STATES,
    UIMessage,
    check_message,
    is_tool_part,
    parse_message,
    tool_name,
)
from tests.support.wire import message_cases, tool_parts, valid_messages

PM = {"anthropic": {"signature": "s", "n": [1, None]}}
GRANTED = {"id": "a1", "approved": True, "reason": "ok"}
DENIED = {"id": "a1", "approved": False, "reason": "no"}
TOOL = {"type": "tool-search", "toolCallId": "c1", "input": {"q": "x"}}

# The fields each tool state needs on top of TOOL.
STATE_FIELDS: dict[str, dict[str, Any]] = {
    "input-streaming": {"rawInput": '{"q', "inputEncoding": "json"},
    "input-available": {},
    "approval-requested": {"approval": {"id": "a1", "descriptor": {"d": 1}, "signature": "s"}},
    "approval-responded": {"approval": GRANTED},
    "output-available": {"output": None, "preliminary": False, "approval": GRANTED},
    "output-error": {"errorText": "boom", "rawInput": "{", "resultProviderMetadata": PM},
    "output-denied": {"approval": DENIED},
}


def message(*parts: Any, role: str = "assistant") -> dict[str, Any]:
    """A message around some parts."""
    return {"id": "m1", "role": role, "parts": list(parts)}


def tool(state: str, dynamic: bool = False, **fields: Any) -> dict[str, Any]:
    """A valid tool part in a state, with extra or replaced fields."""
    part = {**TOOL, "state": state, **copy.deepcopy(STATE_FIELDS[state]), **fields}
    if dynamic:
        part.update(type="dynamic-tool", toolName="search")
    return part


def refusal(raw: Any) -> InvalidMessageError:
    """The error ``check_message`` raises for ``raw``."""
    with pytest.raises(InvalidMessageError) as refused:
        check_message(raw)
    return refused.value


SIMPLE_PARTS: list[tuple[dict[str, Any], type[Any]]] = [
    ({"type": "text", "text": "hi"}, p.TextPart),
    ({"type": "text", "text": "", "state": "streaming", "providerMetadata": PM}, p.TextPart),
    ({"type": "reasoning", "text": "hm", "id": "r", "state": "done"}, p.ReasoningPart),
    ({"type": "source-url", "sourceId": "s", "url": "https://x", "title": "X"}, p.SourceUrlPart),
    (
        {"type": "source-document", "sourceId": "s", "mediaType": "a/b", "title": "T"},
        p.SourceDocumentPart,
    ),
    ({"type": "file", "mediaType": "image/png", "url": "data:,", "filename": "f"}, p.FilePart),
    ({"type": "step-start"}, p.StepStartPart),
    ({"type": "data-weather", "data": None, "id": "w"}, p.DataPart),
    ({"type": "data-", "data": [1]}, p.DataPart),
]


@pytest.mark.parametrize(("part", "model"), SIMPLE_PARTS, ids=[str(i) for i in range(9)])
def test_every_non_tool_part_is_accepted(part: dict[str, Any], model: type[Any]) -> None:
    """Text, reasoning, sources, files, step starts and data parts are valid parts."""
    raw = message(part, role="user")
    assert check_message(raw) is raw
    assert type(parse_message(raw).parts[0]) is model


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize("state", TOOL_STATES)
def test_every_tool_state_is_accepted(state: str, dynamic: bool) -> None:
    """Static and dynamic tool parts are valid in each of the seven states."""
    raw = message({"type": "step-start"}, tool(state, dynamic))
    assert check_message(raw) is raw
    part = parse_message(raw).parts[1]
    assert part.state == state  # type: ignore[union-attr]
    assert type(part).__name__.startswith("DynamicTool" if dynamic else "Tool")


INVALID_PARTS: list[tuple[Any, str]] = [
    (
        tool("input-streaming", output=1),
        "state 'input-streaming'): field 'output' must be absent",
    ),
    (tool("input-streaming", errorText="e"), "field 'errorText' must be absent"),
    (tool("input-streaming", approval=GRANTED), "field 'approval' must be absent"),
    (tool("input-streaming", rawInput=1), "field 'rawInput' must be a string, got int"),
    (
        tool("input-streaming", inputEncoding="xml"),
        "field 'inputEncoding' must be 'json' or 'text'",
    ),
    (tool("input-available", input=None) | {"output": None}, "field 'output' must be absent"),
    (
        {k: v for k, v in tool("input-available").items() if k != "input"},
        "missing required field 'input'",
    ),
    (tool("approval-requested", approval=None), "field 'approval' must be an object, got null"),
    (
        tool("approval-requested", approval={"id": "a", "approved": None}),
        "field 'approval.approved' must be absent",
    ),
    (
        tool("approval-requested", approval={"id": "a", "reason": "r"}),
        "field 'approval.reason' must be absent",
    ),
    (tool("approval-requested", approval={}), "missing required field 'approval.id'"),
    (
        tool("approval-responded", approval={"id": "a"}),
        "missing required field 'approval.approved'",
    ),
    (
        tool("approval-responded", approval={"id": "a", "approved": "yes"}),
        "field 'approval.approved' must be a boolean, got 'yes'",
    ),
    (
        tool("approval-responded", approval={"id": "a", "approved": 1}),
        "must be a boolean, got int",
    ),
    (tool("approval-responded", errorText="e"), "field 'errorText' must be absent"),
    (
        {k: v for k, v in tool("output-available").items() if k != "output"},
        "parts[1] (tool-search, state 'output-available'): missing required field 'output'",
    ),
    (
        tool("output-available", approval=DENIED),
        "field 'approval.approved' must be true, got false",
    ),
    (
        tool("output-available", approval=None),
        "field 'approval' must be an approval object, got null",
    ),
    (
        tool("output-available", preliminary=None),
        "field 'preliminary' must be a boolean, got null",
    ),
    (tool("output-available", errorText="e"), "field 'errorText' must be absent"),
    (tool("output-error", errorText=None), "field 'errorText' must be a string, got null"),
    (tool("output-error", output=1), "field 'output' must be absent"),
    (
        tool("output-error", approval=DENIED),
        "field 'approval.approved' must be true, got false",
    ),
    (
        tool("output-denied", approval=GRANTED),
        "field 'approval.approved' must be false, got true",
    ),
    (tool("output-denied", approval={"id": "a", "approved": 0}), "must be a boolean, got int"),
    (
        {k: v for k, v in tool("output-denied").items() if k != "approval"},
        "missing required field 'approval'",
    ),
    (tool("input-available", toolCallId=None), "field 'toolCallId' must be a string, got null"),
    (
        tool("input-available", toolMetadata={"n": math.inf}),
        "field 'toolMetadata.n' must be a finite number",
    ),
    (
        tool("input-available", callProviderMetadata={"p": 1}),
        "field 'callProviderMetadata.p' must be an object, got int",
    ),
    (
        tool("input-available", providerExecuted="true"),
        "field 'providerExecuted' must be a boolean, got 'true'",
    ),
    (
        tool("input-available") | {"state": "done"},
        "(tool-search): field 'state' must be one of 'input-streaming'",
    ),
    (
        {k: v for k, v in tool("input-available").items() if k != "state"},
        "(tool-search): missing required field 'state'",
    ),
    (
        tool("input-available", True) | {"dynamic": True},
        "(dynamic-tool, state 'input-available'): field 'dynamic' must be false, got true",
    ),
    (
        {k: v for k, v in tool("output-error", True).items() if k != "toolName"},
        "missing required field 'toolName'",
    ),
    ({"type": "text"}, "parts[1] (text): missing required field 'text'"),
    (
        {"type": "text", "text": "a", "state": "final"},
        "field 'state' must be 'streaming' or 'done', got 'final'",
    ),
    (
        {"type": "text", "text": "a", "providerMetadata": None},
        "field 'providerMetadata' must be an object of provider objects, got null",
    ),
    ({"type": "reasoning", "text": "a", "id": 1}, "field 'id' must be a string, got int"),
    ({"type": "source-url", "sourceId": "s"}, "missing required field 'url'"),
    (
        {"type": "source-document", "sourceId": "s", "mediaType": "m"},
        "missing required field 'title'",
    ),
    ({"type": "file", "url": "u"}, "missing required field 'mediaType'"),
    ({"type": "data-x"}, "parts[1] (data-x): missing required field 'data'"),
    ({"type": "data-x", "data": 1, "id": None}, "field 'id' must be a string, got null"),
    ({"type": "foo"}, "parts[1]: unknown part type 'foo'"),
    ({"text": "a"}, "parts[1]: missing required field 'type'"),
    ({"type": None}, "parts[1]: field 'type' must be a string, got null"),
    ("text", "parts[1]: part must be a JSON object, got str"),
]


@pytest.mark.parametrize(
    ("part", "reason"), INVALID_PARTS, ids=[str(i) for i in range(len(INVALID_PARTS))]
)
def test_invalid_part_is_refused_with_its_position_and_problem(part: Any, reason: str) -> None:
    """The reason names the part's index, type and state, and what is wrong with it."""
    error = refusal(message({"type": "step-start"}, part))
    assert reason in error.reason
    assert error.reason.startswith("parts[1]")
    assert error.message_id == "m1"


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ([], "message must be a JSON object, got list"),
        ({"role": "user", "parts": []}, "missing required field 'id'"),
        ({"id": 1, "role": "user", "parts": []}, "field 'id' must be a string, got int"),
        (
            {"id": "m", "role": "tool", "parts": []},
            "field 'role' must be 'system', 'user' or 'assistant'",
        ),
        ({"id": "m", "role": "user"}, "missing required field 'parts'"),
        ({"id": "m", "role": "user", "parts": {}}, "field 'parts' must be an array, got dict"),
        ({"id": "m", "role": "user", "parts": []}, "a user message needs at least one part"),
        ({"id": "m", "role": "system", "parts": []}, "a system message needs at least one part"),
        (
            {"id": "m", "role": "user", "parts": [{"type": "text", "text": "a"}], "x": {1}},
            "field 'x' must be a JSON value, got set",
        ),
        (
            {
                "id": "m",
                "role": "user",
                "parts": [{"type": "text", "text": "a"}],
                "metadata": math.nan,
            },
            "field 'metadata' must be a finite number",
        ),
    ],
    ids=[str(i) for i in range(10)],
)
def test_invalid_message_is_refused_with_a_reason(raw: Any, reason: str) -> None:
    """Problems with the message itself are named."""
    assert reason in refusal(raw).reason


def test_an_assistant_message_may_have_no_parts() -> None:
    """Only user and system messages need a part."""
    raw = {"id": "m", "role": "assistant", "parts": [], "metadata": None}
    assert check_message(raw) is raw


def test_message_is_returned_unchanged_with_unknown_keys() -> None:
    """The SDK strips ``title`` and ``createdAt``; chatledger keeps what it was given."""
    part = tool("output-available", title="Search", toolName=7, extra={"a": [1]})
    raw = {"id": "m", "role": "assistant", "parts": [part], "createdAt": "2024-01-01"}
    before = copy.deepcopy(raw)
    assert check_message(raw) is raw
    assert raw == before
    model = parse_message(raw)
    assert model.model_extra == {"createdAt": "2024-01-01"}
    assert model.parts[0].model_extra == {"title": "Search", "toolName": 7, "extra": {"a": [1]}}


def test_message_models_are_frozen() -> None:
    """A parsed message cannot be changed."""
    model = parse_message(message({"type": "text", "text": "a"}))
    with pytest.raises(ValidationError):
        model.id = "other"  # type: ignore[misc]


def test_zod_record_skips_a_proto_key() -> None:
    """zod's record ignores a ``__proto__`` key's value, so metadata there is not checked."""
    part = {"type": "text", "text": "a", "providerMetadata": {"__proto__": 5}}
    assert check_message(message(part))
    part = {"type": "text", "text": "a", "providerMetadata": {"p": {"n": 10**400}}}
    assert "JavaScript reads as Infinity" in refusal(message(part)).reason


def test_tool_state_constants() -> None:
    """Seven states, three of them terminal."""
    assert TOOL_STATES == (
        "input-streaming",
        "input-available",
        "approval-requested",
        "approval-responded",
        "output-available",
        "output-error",
        "output-denied",
    )
    assert TERMINAL_STATES == ("output-available", "output-error", "output-denied")


def test_tool_part_helpers() -> None:
    """Static names are everything after the first '-'; dynamic ones come from toolName."""
    assert is_tool_part({"type": "tool-get-weather"})
    assert is_tool_part({"type": "dynamic-tool"})
    assert not is_tool_part({"type": "text"})
    assert not is_tool_part({"type": 3})
    assert tool_name({"type": "tool-get-weather"}) == "get-weather"
    assert tool_name({"type": "tool-"}) == ""
    assert tool_name({"type": "dynamic-tool", "toolName": "mcp.search"}) == "mcp.search"
    with pytest.raises(ValueError, match="not a tool part"):
        tool_name({"type": "text"})


python_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text() | st.binary(max_size=2),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(["id", "role", "parts", "type", "state", "input", "approval"])
            | st.text(max_size=2)
            | st.integers(),
            inner,
            max_size=4,
        )
        | st.tuples(inner)
    ),
    max_leaves=16,
)


@settings(max_examples=400)
@given(python_values | message_cases())
def test_check_message_raises_only_invalid_message_error(raw: Any) -> None:
    """Whatever it is given, ``check_message`` returns it or raises InvalidMessageError."""
    try:
        assert check_message(raw) is raw
    except InvalidMessageError as error:
        assert error.reason


@settings(max_examples=300)
@given(valid_messages() | st.builds(message, tool_parts()))
def test_every_valid_message_is_accepted(raw: dict[str, Any]) -> None:
    """Messages built from the SDK's schema (transcribed independently) are all accepted."""
    assert check_message(raw) is raw


@settings(max_examples=400)
@given(message_cases())
def test_check_message_agrees_with_the_uimessage_model(raw: dict[str, Any]) -> None:
    """The per-part checks and the ``UIMessage`` discriminated union give one verdict."""
    try:
        check_message(raw)
        ours = True
    except InvalidMessageError:
        ours = False
    try:
        UIMessage.model_validate(raw, strict=True, by_alias=True, by_name=False)
        model = True
    except ValidationError:
        model = False
    assert ours == model
