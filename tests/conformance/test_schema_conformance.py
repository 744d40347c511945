"""chatledger's chunk and message checks accept exactly what the real AI SDK accepts."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatledger.domain.chunks import check_chunk
from chatledger.domain.errors import InvalidChunkError, InvalidMessageError
from chatledger.domain.parts import check_message
from tests.support.oracle import Oracle
from tests.support.wire import (
    APPROVAL_SPEC,
    CHUNK_SPEC,
    PART_SPEC,
    TOOL_STATE_SPEC,
    chunk_cases,
    message_cases,
    sse_body,
)

pytestmark = pytest.mark.oracle

# Over SSE the SDK refuses a chunk in two places: secureJsonParse (a "__proto__"
# key) and the zod schema. Any other error (a delta for a part that is not
# open, an in-band error chunk) comes from the fold, after the schema accepted.
SCHEMA_REFUSALS = {"AI_TypeValidationError", "AI_JSONParseError"}
WRONG_VALUES: list[Any] = [None, 1, 1.5, "s", True, [], {}, {"k": []}]


def _we_accept_chunk(chunk: Any) -> bool:
    try:
        check_chunk(chunk)
    except InvalidChunkError:
        return False
    return True


def _we_accept_message(message: Any) -> bool:
    try:
        check_message(message)
    except InvalidMessageError:
        return False
    return True


def _chunk_disagreements(oracle: Oracle, chunks: list[Any]) -> list[tuple[Any, bool, str]]:
    answers = oracle.run_many([{"op": "read", "sse": sse_body(chunk)} for chunk in chunks])
    found = []
    for chunk, answer in zip(chunks, answers, strict=True):
        sdk = answer.get("errorName") not in SCHEMA_REFUSALS
        if sdk != _we_accept_chunk(chunk):
            found.append((chunk, sdk, str(answer.get("error", ""))[:200]))
    return found


def _message_disagreements(oracle: Oracle, messages: list[Any]) -> list[tuple[Any, bool, str]]:
    answers = oracle.run_many([{"op": "validate", "messages": [m]} for m in messages])
    found = []
    for message, answer in zip(messages, answers, strict=True):
        if answer.get("errorName") not in (None, "AI_TypeValidationError"):
            raise AssertionError(f"unexpected oracle answer {answer} for {message}")
        if answer["ok"] != _we_accept_message(message):
            found.append((message, answer["ok"], str(answer.get("error", ""))[:200]))
    return found


def _first(kind: Any) -> Any:
    """One valid value of a field kind."""
    simple = {"str": "s", "bool": False, "unknown": {"a": [1, None]}, "pm": {"p": {"k": [1]}}}
    if kind in simple:
        return simple[kind]
    if kind == "tm":
        return {"k": None}
    if kind[0] == "enum":
        return kind[1]
    return _full(APPROVAL_SPEC[kind[1]], {})


def _full(spec: dict[str, tuple[Any, bool]], base: dict[str, Any]) -> dict[str, Any]:
    """An object with every (allowed) field of a table set."""
    out = dict(base)
    for name, (kind, _) in spec.items():
        if kind != "never":
            out[name] = _first(kind)
    return out


def _variants(obj: dict[str, Any], spec: dict[str, tuple[Any, bool]]) -> list[dict[str, Any]]:
    """``obj``, then for each field: dropped, and set to each wrong value."""
    out = [obj]
    for name in [*spec, "type"]:
        if name in obj:
            out.append({k: v for k, v in obj.items() if k != name})
        for wrong in WRONG_VALUES:
            out.append({**obj, name: copy.deepcopy(wrong)})
    return out


def test_every_chunk_field_dropped_or_mistyped_gets_the_sdk_verdict(oracle: Oracle) -> None:
    """Each chunk type, complete, then each field dropped or given a wrong value."""
    chunks: list[Any] = []
    for kind, spec in CHUNK_SPEC.items():
        full = _full(spec, {"type": "data-x" if kind == "data-*" else kind})
        chunks += _variants(full, spec)
        chunks.append({**full, "extra": {"any": [1, None]}, "tool_call_id": 5, "title2": None})
    assert _chunk_disagreements(oracle, chunks) == []


def test_chunk_edge_cases_get_the_sdk_verdict(oracle: Oracle) -> None:
    """Numbers JavaScript reads as Infinity, prototype keys, bare ``data-``, non-objects."""
    start = {"type": "text-start", "id": "t"}
    tool = {"type": "tool-input-available", "toolCallId": "c", "toolName": "x"}
    chunks: list[Any] = [
        {**start, "providerMetadata": {"p": {"n": 10**308}}},
        {**start, "providerMetadata": {"p": {"n": 2**1024 - 2**970}}},
        {**start, "providerMetadata": {"p": {"n": 2**1024 - 2**970 - 1}}},
        {**start, "providerMetadata": {"p": {"n": [-(10**400)]}}},
        {**tool, "input": 10**400},
        {**tool, "input": {"__proto__": 1}},
        {**tool, "input": {"constructor": {"prototype": 1}}},
        {**tool, "input": {"constructor": [{"prototype": 1}]}},
        {**tool, "input": {"constructor": {"prototyp": 1}}},
        {**start, "__proto__": None},
        {**start, "providerMetadata": {"__proto__": 5}},
        {**start, "providerMetadata": {"p": {"__proto__": 5}}},
        {"type": "data-", "data": None},
        {"type": "data", "data": None},
        {"type": "DATA-x", "data": None},
        {"type": "tool-output-available", "toolCallId": "c", "output": None},
        {"type": "finish", "finishReason": "unknown"},
        {"type": "finish", "finishReason": None},
        {"type": "start", "messageMetadata": None},
        [],
        None,
        "text-delta",
        {},
    ]
    assert _chunk_disagreements(oracle, chunks) == []


@settings(max_examples=12)
@given(st.lists(chunk_cases(), min_size=40, max_size=40))
def test_random_and_mutated_chunks_get_the_sdk_verdict(oracle: Oracle, chunks: list[Any]) -> None:
    """Hypothesis: valid chunks and mutations of them are judged as the SDK judges them."""
    assert _chunk_disagreements(oracle, chunks) == []


def _tool_part_specs() -> list[tuple[dict[str, Any], dict[str, tuple[Any, bool]]]]:
    common = {
        "toolCallId": ("str", True),
        "toolMetadata": ("tm", False),
        "providerExecuted": ("bool", False),
        "callProviderMetadata": ("pm", False),
    }
    out = []
    for state, spec in TOOL_STATE_SPEC.items():
        static = {**common, **spec, "state": (("enum", state), True)}
        dynamic = {**static, "toolName": ("str", True), "dynamic": (("enum", False), False)}
        out += [({"type": "tool-x"}, static), ({"type": "dynamic-tool"}, dynamic)]
    return out


def _assistant(*parts: Any) -> dict[str, Any]:
    return {"id": "m", "role": "assistant", "parts": list(parts)}


def test_every_part_field_dropped_or_mistyped_gets_the_sdk_verdict(oracle: Oracle) -> None:
    """Each part type and tool state, complete, then each field dropped or mistyped."""
    specs = [({"type": "data-x" if k == "data-*" else k}, s) for k, s in PART_SPEC.items()]
    messages = []
    for base, spec in [*specs, *_tool_part_specs()]:
        part = _full(spec, base)
        variants = _variants(part, spec)
        if "approval" in part:
            variants += [
                {**part, "approval": {**part["approval"], key: copy.deepcopy(wrong)}}
                for key in ("approved", "reason", "id", "signature")
                for wrong in WRONG_VALUES
            ]
        messages += [_assistant({"type": "text", "text": ""}, v) for v in variants]
    assert _message_disagreements(oracle, messages) == []


def test_message_edge_cases_get_the_sdk_verdict(oracle: Oracle) -> None:
    """Roles, empty parts, unknown keys, prototype keys, numbers read as Infinity."""
    text = {"type": "text", "text": "hi"}
    tool = {"type": "tool-x", "toolCallId": "c", "state": "input-available", "input": 1}
    messages: list[Any] = [
        {"id": "m", "role": role, "parts": parts}
        for role in ("system", "user", "assistant", "tool", None)
        for parts in ([], [text])
    ]
    messages += [
        {"id": "m", "role": "user", "parts": [text], "createdAt": "2024", "metadata": None},
        {"id": "m", "role": "user", "parts": [{**text, "providerMetadata": {"__proto__": 5}}]},
        {"id": "m", "role": "user", "parts": [{**text, "providerMetadata": {"p": {"n": 10**400}}}]},
        {"id": "m", "role": "user", "parts": [{**text, "__proto__": 5}]},
        _assistant({**tool, "type": "tool-"}),
        _assistant({**tool, "title": 7, "toolName": 8, "dynamic": "yes", "preliminary": 1}),
        _assistant({**tool, "type": "dynamic-tool", "toolName": "x", "title": 7}),
        _assistant({**tool, "type": "tool-x-y", "state": "output-error", "errorText": "e"}),
        _assistant({"type": "data-", "data": 1, "transient": "x"}),
        {"id": "m", "role": "user", "parts": text},
        {"id": "m", "role": "user"},
        {"role": "user", "parts": [text]},
        [],
        None,
    ]
    assert _message_disagreements(oracle, messages) == []


@settings(max_examples=12)
@given(st.lists(message_cases(), min_size=40, max_size=40))
def test_random_and_mutated_messages_get_the_sdk_verdict(
    oracle: Oracle, messages: list[Any]
) -> None:
    """Hypothesis: valid messages and mutations of them are judged as the SDK judges them."""
    assert _message_disagreements(oracle, messages) == []
