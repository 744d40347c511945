"""The AI SDK v6 chunk schemas: what ``check_chunk`` accepts, refuses, and says when it refuses."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter, ValidationError

from chatledger.domain import chunks as c
from chatledger.domain.chunks import CHUNK_TYPES, Chunk, check_chunk, parse_chunk
from chatledger.domain.errors import InvalidChunkError
from tests.support.wire import FIXED_CHUNK_TYPES, chunk_cases, json_values, valid_chunks

PM = {"openai": {"itemId": "i1", "nested": [1, 2.5, None, {"a": True}]}}

VALID: list[tuple[dict[str, Any], type[Any]]] = [
    ({"type": "start"}, c.StartChunk),
    ({"type": "start", "messageId": "m1", "messageMetadata": {"a": 1}}, c.StartChunk),
    ({"type": "start", "messageMetadata": None}, c.StartChunk),
    ({"type": "finish"}, c.FinishChunk),
    ({"type": "finish", "finishReason": "tool-calls", "messageMetadata": [1]}, c.FinishChunk),
    ({"type": "abort"}, c.AbortChunk),
    ({"type": "abort", "reason": "user stopped"}, c.AbortChunk),
    ({"type": "error", "errorText": "An error occurred."}, c.ErrorChunk),
    ({"type": "message-metadata", "messageMetadata": None}, c.MessageMetadataChunk),
    ({"type": "start-step"}, c.StartStepChunk),
    ({"type": "finish-step"}, c.FinishStepChunk),
    ({"type": "text-start", "id": "t", "providerMetadata": PM}, c.TextStartChunk),
    ({"type": "text-delta", "id": "t", "delta": "Hi"}, c.TextDeltaChunk),
    ({"type": "text-delta", "id": "t", "delta": "", "providerMetadata": {}}, c.TextDeltaChunk),
    ({"type": "text-end", "id": "t"}, c.TextEndChunk),
    ({"type": "reasoning-start", "id": "r"}, c.ReasoningStartChunk),
    ({"type": "reasoning-delta", "id": "r", "delta": "hm"}, c.ReasoningDeltaChunk),
    ({"type": "reasoning-end", "id": "r", "providerMetadata": PM}, c.ReasoningEndChunk),
    ({"type": "tool-input-start", "toolCallId": "c", "toolName": "x"}, c.ToolInputStartChunk),
    (
        {
            "type": "tool-input-start",
            "toolCallId": "c",
            "toolName": "x",
            "inputEncoding": "text",
            "providerExecuted": True,
            "providerMetadata": PM,
            "toolMetadata": {"k": None, "l": [1]},
            "dynamic": False,
            "title": "Search",
        },
        c.ToolInputStartChunk,
    ),
    (
        {"type": "tool-input-delta", "toolCallId": "c", "inputTextDelta": '{"q'},
        c.ToolInputDeltaChunk,
    ),
    (
        {"type": "tool-input-available", "toolCallId": "c", "toolName": "x", "input": None},
        c.ToolInputAvailableChunk,
    ),
    (
        {
            "type": "tool-input-error",
            "toolCallId": "c",
            "toolName": "x",
            "input": "{",
            "errorText": "e",
        },
        c.ToolInputErrorChunk,
    ),
    (
        {"type": "tool-approval-request", "approvalId": "a", "toolCallId": "c"},
        c.ToolApprovalRequestChunk,
    ),
    (
        {
            "type": "tool-approval-request",
            "approvalId": "a",
            "toolCallId": "c",
            "approvalDescriptor": None,
            "inputSchemaInput": {"q": 1},
            "signature": "sig",
        },
        c.ToolApprovalRequestChunk,
    ),
    (
        {"type": "tool-output-available", "toolCallId": "c", "output": None},
        c.ToolOutputAvailableChunk,
    ),
    (
        {"type": "tool-output-available", "toolCallId": "c", "output": [1], "preliminary": True},
        c.ToolOutputAvailableChunk,
    ),
    ({"type": "tool-output-error", "toolCallId": "c", "errorText": "boom"}, c.ToolOutputErrorChunk),
    ({"type": "tool-output-denied", "toolCallId": "c"}, c.ToolOutputDeniedChunk),
    ({"type": "source-url", "sourceId": "s", "url": "https://x"}, c.SourceUrlChunk),
    (
        {
            "type": "source-document",
            "sourceId": "s",
            "mediaType": "a/b",
            "title": "T",
            "filename": "f",
        },
        c.SourceDocumentChunk,
    ),
    ({"type": "file", "url": "data:,", "mediaType": "text/plain"}, c.FileChunk),
    ({"type": "data-weather", "data": {"t": 20}}, c.DataChunk),
    ({"type": "data-weather", "id": "w", "data": None, "transient": True}, c.DataChunk),
    ({"type": "data-", "data": 0}, c.DataChunk),
]

INVALID: list[tuple[Any, str]] = [
    ([], "chunk must be a JSON object, got list"),
    (None, "chunk must be a JSON object, got null"),
    ({}, "missing required field 'type'"),
    ({"type": 3}, "field 'type' must be a string, got int"),
    ({"type": "foo"}, "unknown chunk type 'foo'"),
    ({"type": "tool-approval-response", "approvalId": "a"}, "unknown chunk type"),
    ({"type": "data", "data": 1}, "unknown chunk type 'data'"),
    ({"type": "text-delta", "id": "t", "delta": 5}, "field 'delta' must be a string, got int"),
    ({"type": "text-delta", "id": "t"}, "missing required field 'delta'"),
    ({"type": "text-start"}, "missing required field 'id'"),
    ({"type": "text-end", "id": 1}, "field 'id' must be a string, got int"),
    ({"type": "text-start", "id": "t", "providerMetadata": None}, "'providerMetadata' must be"),
    (
        {"type": "text-start", "id": "t", "providerMetadata": {"p": 1}},
        "'providerMetadata.p' must be an object, got int",
    ),
    (
        {"type": "text-start", "id": "t", "providerMetadata": {"p": None}},
        "'providerMetadata.p' must be an object, got null",
    ),
    (
        {"type": "reasoning-delta", "id": "r", "delta": None},
        "field 'delta' must be a string, got null",
    ),
    ({"type": "reasoning-start", "id": ["r"]}, "field 'id' must be a string, got list"),
    ({"type": "reasoning-end"}, "missing required field 'id'"),
    ({"type": "error"}, "missing required field 'errorText'"),
    ({"type": "message-metadata"}, "missing required field 'messageMetadata'"),
    ({"type": "start", "messageId": None}, "field 'messageId' must be a string, got null"),
    ({"type": "start", "messageId": 7}, "field 'messageId' must be a string, got int"),
    ({"type": "finish", "finishReason": "done"}, "field 'finishReason' must be 'stop', 'length'"),
    (
        {"type": "finish", "finishReason": None},
        "field 'finishReason' must be a finish reason, got null",
    ),
    ({"type": "abort", "reason": False}, "field 'reason' must be a string, got bool"),
    ({"type": "tool-input-start", "toolCallId": "c"}, "missing required field 'toolName'"),
    ({"type": "tool-input-start", "toolName": "x"}, "missing required field 'toolCallId'"),
    (
        {"type": "tool-input-start", "toolCallId": "c", "toolName": "x", "inputEncoding": "xml"},
        "field 'inputEncoding' must be 'json' or 'text', got 'xml'",
    ),
    (
        {"type": "tool-input-start", "toolCallId": "c", "toolName": "x", "dynamic": "true"},
        "field 'dynamic' must be a boolean, got 'true'",
    ),
    (
        {"type": "tool-input-start", "toolCallId": "c", "toolName": "x", "dynamic": 1},
        "field 'dynamic' must be a boolean, got int",
    ),
    (
        {"type": "tool-input-start", "toolCallId": "c", "toolName": "x", "title": None},
        "field 'title' must be a string, got null",
    ),
    (
        {"type": "tool-input-start", "toolCallId": "c", "toolName": "x", "toolMetadata": []},
        "field 'toolMetadata' must be an object, got list",
    ),
    ({"type": "tool-input-delta", "toolCallId": "c"}, "missing required field 'inputTextDelta'"),
    (
        {"type": "tool-input-delta", "toolCallId": 1, "inputTextDelta": ""},
        "field 'toolCallId' must be a string, got int",
    ),
    (
        {"type": "tool-input-available", "toolCallId": "c", "toolName": "x"},
        "missing required field 'input'",
    ),
    (
        {
            "type": "tool-input-available",
            "toolCallId": "c",
            "toolName": "x",
            "input": 1,
            "providerExecuted": None,
        },
        "field 'providerExecuted' must be a boolean, got null",
    ),
    (
        {"type": "tool-input-error", "toolCallId": "c", "toolName": "x", "input": 1},
        "missing required field 'errorText'",
    ),
    (
        {"type": "tool-input-error", "toolCallId": "c", "toolName": "x", "errorText": "e"},
        "missing required field 'input'",
    ),
    ({"type": "tool-approval-request", "toolCallId": "c"}, "missing required field 'approvalId'"),
    (
        {"type": "tool-approval-request", "approvalId": "a", "toolCallId": "c", "signature": 1},
        "field 'signature' must be a string, got int",
    ),
    ({"type": "tool-output-available", "toolCallId": "c"}, "missing required field 'output'"),
    (
        {"type": "tool-output-available", "toolCallId": "c", "output": 1, "preliminary": "yes"},
        "field 'preliminary' must be a boolean, got 'yes'",
    ),
    (
        {"type": "tool-output-error", "toolCallId": "c", "errorText": 404},
        "field 'errorText' must be a string, got int",
    ),
    ({"type": "tool-output-denied"}, "missing required field 'toolCallId'"),
    ({"type": "source-url", "sourceId": "s"}, "missing required field 'url'"),
    (
        {"type": "source-url", "sourceId": "s", "url": "u", "title": None},
        "field 'title' must be a string, got null",
    ),
    (
        {"type": "source-document", "sourceId": "s", "mediaType": "m"},
        "missing required field 'title'",
    ),
    ({"type": "file", "url": "u"}, "missing required field 'mediaType'"),
    ({"type": "data-x"}, "missing required field 'data'"),
    ({"type": "data-x", "data": 1, "id": None}, "field 'id' must be a string, got null"),
    (
        {"type": "data-x", "data": 1, "transient": "no"},
        "field 'transient' must be a boolean, got 'no'",
    ),
]


@pytest.mark.parametrize(
    ("raw", "model"), VALID, ids=lambda v: v.get("type") if isinstance(v, dict) else ""
)
def test_valid_chunk_is_accepted_and_parsed_into_its_model(
    raw: dict[str, Any], model: type[Any]
) -> None:
    """Every chunk type, minimal and with its optional fields, is accepted."""
    assert check_chunk(raw) == raw["type"]
    assert type(parse_chunk(raw)) is model


def test_every_chunk_type_has_a_valid_example() -> None:
    """The examples above cover every chunk type of the SDK's table."""
    assert {raw["type"] for raw, _ in VALID} >= CHUNK_TYPES
    assert CHUNK_TYPES == FIXED_CHUNK_TYPES


@pytest.mark.parametrize(("raw", "reason"), INVALID, ids=[str(i) for i in range(len(INVALID))])
def test_invalid_chunk_is_refused_with_a_reason_naming_the_problem(raw: Any, reason: str) -> None:
    """Each refusal says what is wrong, and names the chunk type when it has one."""
    with pytest.raises(InvalidChunkError) as refused:
        check_chunk(raw)
    assert reason in refused.value.reason
    if isinstance(raw, dict) and isinstance(raw.get("type"), str):
        assert refused.value.chunk_type == raw["type"]
        assert str(refused.value).startswith(f"{raw['type']!r} chunk refused: ")


def test_unknown_keys_are_kept_and_not_read_as_fields() -> None:
    """Unknown keys survive, and a snake_case key is an unknown key, not the field."""
    chunk = parse_chunk(
        {"type": "text-start", "id": "t", "provider_metadata": 5, "x-trace": {"a": [1]}}
    )
    assert chunk.provider_metadata is None
    assert chunk.model_extra == {"provider_metadata": 5, "x-trace": {"a": [1]}}


def test_python_callers_may_use_snake_case_names() -> None:
    """Models built in Python take snake_case names and dump camelCase."""
    chunk = c.ToolInputDeltaChunk(type="tool-input-delta", tool_call_id="c", input_text_delta="{")
    assert chunk.model_dump(by_alias=True) == {
        "type": "tool-input-delta",
        "toolCallId": "c",
        "inputTextDelta": "{",
    }


def test_chunk_models_are_frozen() -> None:
    """A parsed chunk cannot be changed."""
    chunk = parse_chunk({"type": "text-delta", "id": "t", "delta": "a"})
    with pytest.raises(ValidationError):
        chunk.delta = "b"  # type: ignore[misc]


def test_unknown_typed_keys_must_be_present_but_may_be_null() -> None:
    """``input``, ``output``, ``data`` and ``messageMetadata`` accept null, not absence."""
    for raw, key in [
        ({"type": "tool-input-available", "toolCallId": "c", "toolName": "x"}, "input"),
        (
            {"type": "tool-input-error", "toolCallId": "c", "toolName": "x", "errorText": "e"},
            "input",
        ),
        ({"type": "tool-output-available", "toolCallId": "c"}, "output"),
        ({"type": "data-x"}, "data"),
        ({"type": "message-metadata"}, "messageMetadata"),
    ]:
        assert check_chunk({**raw, key: None}) == raw["type"]
        with pytest.raises(InvalidChunkError, match=f"missing required field '{key}'"):
            check_chunk(raw)


def test_provider_metadata_values_are_json_zod_can_read() -> None:
    """Numbers JavaScript reads as Infinity are refused in metadata, accepted in tool input."""
    limit = 2**1024 - 2**970
    start = {"type": "text-start", "id": "t"}
    assert check_chunk({**start, "providerMetadata": {"p": {"n": limit - 1}}})
    with pytest.raises(InvalidChunkError, match="JavaScript reads as Infinity"):
        check_chunk({**start, "providerMetadata": {"p": {"n": [-limit]}}})
    tool = {"type": "tool-input-available", "toolCallId": "c", "toolName": "x"}
    assert check_chunk({**tool, "input": limit})
    with pytest.raises(InvalidChunkError, match=r"toolMetadata\.n' must be a finite number"):
        check_chunk({**tool, "input": 1, "toolMetadata": {"n": limit}})


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        (math.nan, "field 'input.a[0]' must be a finite number, got nan"),
        (math.inf, "must be a finite number, got inf"),
        ({1, 2}, "field 'input.a[0]' must be a JSON value, got set"),
        ((1, 2), "must be a JSON value, got tuple"),
        (b"x", "must be a JSON value, got bytes"),
        ({1: "a"}, "must be an object with string keys, got a key of type int"),
        (10**5000, "an integer of more than"),
    ],
    ids=["nan", "inf", "set", "tuple", "bytes", "int-key", "huge-int"],
)
def test_values_that_are_not_json_are_refused(value: Any, reason: str) -> None:
    """A chunk is JSON: sets, tuples, NaN, non-string keys are refused where they appear."""
    raw = {
        "type": "tool-input-available",
        "toolCallId": "c",
        "toolName": "x",
        "input": {"a": [value]},
    }
    with pytest.raises(InvalidChunkError) as refused:
        check_chunk(raw)
    assert reason in refused.value.reason


def test_unknown_keys_must_hold_json_too() -> None:
    """An unknown key is kept, so its value must be JSON and its name a string."""
    with pytest.raises(InvalidChunkError, match=r"field 'x-y\.z' must be a finite number, got nan"):
        check_chunk({"type": "text-delta", "id": "t", "delta": "a", "x-y": {"z": math.nan}})
    with pytest.raises(InvalidChunkError, match="chunk must be an object with string keys"):
        check_chunk({"type": "text-delta", "id": "t", "delta": "a", 1: 2})


@pytest.mark.parametrize(
    "extra",
    [
        {"__proto__": None},
        {"input": {"a": [{"__proto__": 1}]}},
        {"input": {"constructor": {"prototype": {}}}},
        {"providerMetadata": {"__proto__": {}}},
    ],
)
def test_keys_the_sdk_secure_parser_refuses_are_refused(extra: dict[str, Any]) -> None:
    """The SDK's secureJsonParse drops a whole chunk holding a prototype key; so do we."""
    raw = {"type": "tool-input-available", "toolCallId": "c", "toolName": "x", "input": 1, **extra}
    with pytest.raises(InvalidChunkError, match="secure JSON parser"):
        check_chunk(raw)


def test_a_constructor_key_without_prototype_is_fine() -> None:
    """Only ``constructor`` objects holding ``prototype`` trip the SDK's parser."""
    raw = {"type": "tool-input-available", "toolCallId": "c", "toolName": "x"}
    assert check_chunk({**raw, "input": {"constructor": {"prototyp": 1}, "c": ["prototype"]}})


def test_cyclic_and_deeply_nested_values_are_refused_cleanly() -> None:
    """Pathological nesting gives InvalidChunkError, not RecursionError."""
    cyclic: dict[str, Any] = {"type": "tool-output-available", "toolCallId": "c"}
    cyclic["output"] = cyclic
    deep: Any = 1
    for _ in range(100_000):
        deep = [deep]
    for raw in (cyclic, {"type": "tool-output-available", "toolCallId": "c", "output": deep}):
        with pytest.raises(InvalidChunkError, match="nested too deeply"):
            check_chunk(raw)


def test_the_chunk_union_parses_like_parse_chunk() -> None:
    """``Chunk`` is a discriminated union on ``type``, ``data-*`` included."""
    adapter: TypeAdapter[Chunk] = TypeAdapter(Chunk)
    for raw, model in VALID:
        assert type(adapter.validate_python(raw, by_alias=True, by_name=False)) is model
    with pytest.raises(ValidationError):
        adapter.validate_python({"type": "nope"})


python_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text()
    | st.binary(max_size=2)
    | st.sampled_from(["text-delta", "data-x", "tool-input-delta", "start", "__proto__"]),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.text(max_size=3) | st.integers() | st.sampled_from(["type", "id", "delta"]),
            inner,
            max_size=4,
        )
        | st.tuples(inner)
        | st.frozensets(st.integers(), max_size=2)
    ),
    max_leaves=12,
)


@settings(max_examples=400)
@given(python_values | chunk_cases())
def test_check_chunk_raises_only_invalid_chunk_error(raw: Any) -> None:
    """Whatever it is given, ``check_chunk`` returns a type or raises InvalidChunkError."""
    try:
        assert isinstance(check_chunk(raw), str)
    except InvalidChunkError as error:
        assert error.reason


@settings(max_examples=300)
@given(st.sampled_from(sorted(FIXED_CHUNK_TYPES)).flatmap(valid_chunks) | valid_chunks("data-*"))
def test_every_valid_chunk_is_accepted(raw: dict[str, Any]) -> None:
    """Chunks built from the SDK's schema (transcribed independently) are all accepted."""
    assert check_chunk(raw) == raw["type"]


delta_like = st.fixed_dictionaries(
    {"type": st.sampled_from(["text-delta", "reasoning-delta", "tool-input-delta", "text-end"])},
    optional={
        "id": json_values | st.text(),
        "delta": json_values | st.text(),
        "toolCallId": json_values | st.text(),
        "inputTextDelta": json_values | st.text(),
        "providerMetadata": json_values,
    },
)


@settings(max_examples=500)
@given(delta_like)
def test_fast_path_agrees_with_the_models(raw: dict[str, Any]) -> None:
    """The hand-written check for bare deltas gives the models' verdict, always."""
    try:
        model_verdict: str | None = parse_chunk(raw).type
    except InvalidChunkError:
        model_verdict = None
    try:
        fast_verdict: str | None = check_chunk(raw)
    except InvalidChunkError:
        fast_verdict = None
    assert fast_verdict == model_verdict
