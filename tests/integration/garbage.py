"""Hypothesis strategies for input a store must refuse: garbage chunks and hostile messages.

``garbage()`` draws inputs that a stream must always refuse: arbitrary JSON-ish
values (lone surrogates, NaN, huge integers included), valid chunks mutated
into invalid ones, chunks valid in shape but naming ids that were never opened,
and Python objects that are no JSON at all. ``garbage_messages()`` draws whole
messages with one hostile value somewhere.
"""

from __future__ import annotations

import datetime
import json
from decimal import Decimal
from typing import Any

from hypothesis import strategies as st

__all__ = ["garbage", "garbage_messages", "hostile_objects"]

keys = st.text("abcdefghijklmnopqrstuvwxyz_0123456789", min_size=1, max_size=6)

_SURROGATE_TEXT = st.text(st.characters(categories=["Cs"]), min_size=1, max_size=2).map(
    lambda s: f"x{s}"
)
_ANY_TEXT = st.text(max_size=8) | _SURROGATE_TEXT

_jsonish = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()  # NaN and infinities included: JSON has neither
    | _ANY_TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_ANY_TEXT, inner, max_size=3),
    max_leaves=8,
)
"""What a lenient JSON parser could hand over: lone surrogates, NaN, huge integers included."""

_KNOWN_TYPES = (
    "start", "finish", "abort", "error", "message-metadata", "start-step", "finish-step",
    "text-start", "text-delta", "text-end", "reasoning-start", "reasoning-delta", "reasoning-end",
    "tool-input-start", "tool-input-delta", "tool-input-available", "tool-input-error",
    "tool-approval-request", "tool-output-available", "tool-output-error", "tool-output-denied",
    "source-url", "source-document", "file",
)  # fmt: skip


def _is_chunk_type(kind: object) -> bool:
    return isinstance(kind, str) and (kind in _KNOWN_TYPES or kind.startswith("data-"))


@st.composite
def _untyped_object(draw: st.DrawFn) -> dict[Any, Any]:
    """A JSON object whose ``type`` is missing, not a string, or no chunk type."""
    value = draw(st.dictionaries(_ANY_TEXT, _jsonish, max_size=4))
    how = draw(st.sampled_from(["drop", "non-string", "unknown"]))
    if how == "drop":
        value.pop("type", None)
    elif how == "non-string":
        value["type"] = draw(_jsonish.filter(lambda v: not isinstance(v, str)))
    else:
        value["type"] = draw(_ANY_TEXT.filter(lambda v: not _is_chunk_type(v)))
    return value


# Valid chunks of every type, and which of their fields are required.
_TEMPLATES: dict[str, tuple[dict[str, Any], tuple[str, ...]]] = {
    "text-start": ({"type": "text-start", "id": "t"}, ("id",)),
    "text-delta": ({"type": "text-delta", "id": "t", "delta": "x"}, ("id", "delta")),
    "text-end": ({"type": "text-end", "id": "t"}, ("id",)),
    "reasoning-start": ({"type": "reasoning-start", "id": "r"}, ("id",)),
    "reasoning-delta": ({"type": "reasoning-delta", "id": "r", "delta": "x"}, ("id", "delta")),
    "reasoning-end": ({"type": "reasoning-end", "id": "r"}, ("id",)),
    "error": ({"type": "error", "errorText": "boom"}, ("errorText",)),
    "tool-input-start": (
        {"type": "tool-input-start", "toolCallId": "g1", "toolName": "weather"},
        ("toolCallId", "toolName"),
    ),
    "tool-input-delta": (
        {"type": "tool-input-delta", "toolCallId": "g1", "inputTextDelta": "{"},
        ("toolCallId", "inputTextDelta"),
    ),
    "tool-input-available": (
        {
            "type": "tool-input-available",
            "toolCallId": "g1",
            "toolName": "weather",
            "input": {"city": "Paris"},
        },
        ("toolCallId", "toolName", "input"),
    ),
    "tool-input-error": (
        {
            "type": "tool-input-error",
            "toolCallId": "g1",
            "toolName": "weather",
            "input": 1,
            "errorText": "bad",
        },
        ("toolCallId", "toolName", "input", "errorText"),
    ),
    "tool-approval-request": (
        {"type": "tool-approval-request", "approvalId": "a1", "toolCallId": "g1"},
        ("approvalId", "toolCallId"),
    ),
    "tool-output-available": (
        {"type": "tool-output-available", "toolCallId": "g1", "output": {"ok": True}},
        ("toolCallId", "output"),
    ),
    "tool-output-error": (
        {"type": "tool-output-error", "toolCallId": "g1", "errorText": "failed"},
        ("toolCallId", "errorText"),
    ),
    "tool-output-denied": ({"type": "tool-output-denied", "toolCallId": "g1"}, ("toolCallId",)),
    "source-url": (
        {"type": "source-url", "sourceId": "s", "url": "https://example.com"},
        ("sourceId", "url"),
    ),
    "source-document": (
        {"type": "source-document", "sourceId": "s", "mediaType": "text/plain", "title": "T"},
        ("sourceId", "mediaType", "title"),
    ),
    "file": (
        {"type": "file", "url": "https://example.com/a.png", "mediaType": "image/png"},
        ("url", "mediaType"),
    ),
    "data-weather": ({"type": "data-weather", "data": {"t": 1}}, ("data",)),
    "message-metadata": (
        {"type": "message-metadata", "messageMetadata": {"a": 1}},
        ("messageMetadata",),
    ),
    "start": ({"type": "start"}, ()),
    "finish": ({"type": "finish"}, ()),
    "abort": ({"type": "abort"}, ()),
    "start-step": ({"type": "start-step"}, ()),
    "finish-step": ({"type": "finish-step"}, ()),
}
_ANY_VALUE_FIELDS = {"input", "output", "data", "messageMetadata"}
"""Required fields that take any JSON value (null too): only a non-JSON value is wrong there."""
_OPTIONAL_TYPED = {
    "start": {"messageId": "str"},
    "finish": {"finishReason": "reason"},
    "abort": {"reason": "str"},
    "tool-input-start": {
        "title": "str",
        "dynamic": "bool",
        "providerExecuted": "bool",
        "inputEncoding": "encoding",
    },
    "tool-input-available": {"title": "str", "dynamic": "bool", "providerMetadata": "metadata"},
    "tool-output-available": {"preliminary": "bool", "providerMetadata": "metadata"},
    "data-weather": {"id": "str", "transient": "bool"},
    "text-delta": {"providerMetadata": "metadata"},
    "file": {"providerMetadata": "metadata"},
}
"""Optional fields with a type (null is refused: zod's ``.optional()`` takes absence only)."""

_NON_STRING = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.lists(st.integers(), max_size=2)
    | st.dictionaries(keys, st.integers(), max_size=2)
)
_NON_JSON = st.sampled_from(
    [
        float("nan"),
        float("inf"),
        {1, 2},
        b"bytes",
        (1, 2),
        1j,
        Decimal("1.5"),
        datetime.date(2024, 1, 1),
        object,
    ]
)
_WRONG_OPTIONAL = {
    "str": _NON_STRING,
    "bool": st.none() | st.integers() | st.text(max_size=3) | st.lists(st.booleans(), max_size=1),
    "reason": st.none() | st.integers() | st.sampled_from(["STOP", "done", "tool_calls", ""]),
    "encoding": st.none() | st.integers() | st.sampled_from(["JSON", "binary", ""]),
    "metadata": st.none()
    | st.integers()
    | st.text(max_size=3)
    | st.lists(st.integers(), max_size=2)
    | st.just({"openai": 1})
    | st.just({"openai": [1]}),
}


@st.composite
def _mutated_chunk(draw: st.DrawFn) -> dict[Any, Any]:
    """A valid chunk of some type, changed so that it is no longer valid."""
    kind = draw(st.sampled_from(sorted(_TEMPLATES)))
    template, required = _TEMPLATES[kind]
    chunk = json.loads(json.dumps(template))
    optional = _OPTIONAL_TYPED.get(kind, {})
    mutations = ["near-miss type", "forbidden key"]
    if required:
        mutations += ["drop required", "wrong required"]
    if optional:
        mutations.append("wrong optional")
    mutation = draw(st.sampled_from(mutations))
    if mutation == "near-miss type":
        misses = [
            kind.upper(),
            kind.replace("-", "_"),
            f"{kind} ",
            f" {kind}",
            kind[:-1],
            f"{kind}s",
        ]
        chunk["type"] = draw(st.sampled_from([miss for miss in misses if miss != kind]))
        if kind.startswith("data-"):  # "data-weather " would still be a data chunk type
            chunk["type"] = draw(st.sampled_from(["DATA-weather", "data_weather", "dataweather"]))
    elif mutation == "forbidden key":
        where = draw(st.sampled_from(["top", "nested"]))
        if where == "top":
            chunk["__proto__"] = {"polluted": True}
        else:
            chunk["providerMetadata" if kind != "data-weather" else "data"] = {
                "x": {"__proto__": {}}
            }
    elif mutation == "drop required":
        del chunk[draw(st.sampled_from(required))]
    elif mutation == "wrong required":
        name = draw(st.sampled_from(required))
        chunk[name] = draw(_NON_JSON if name in _ANY_VALUE_FIELDS else _NON_STRING | _NON_JSON)
    else:
        name, expected = draw(st.sampled_from(sorted(optional.items())))
        chunk[name] = draw(_WRONG_OPTIONAL[expected])
    return chunk


@st.composite
def _unopened(draw: st.DrawFn) -> dict[str, Any]:
    """Well-formed, but naming a text/reasoning part or a tool call that does not exist."""
    ghost = f"ghost-{draw(st.integers(0, 999))}"
    return draw(
        st.sampled_from(
            [
                {"type": "text-delta", "id": ghost, "delta": "x"},
                {"type": "text-end", "id": ghost},
                {"type": "reasoning-delta", "id": ghost, "delta": "x"},
                {"type": "reasoning-end", "id": ghost},
                {"type": "tool-input-delta", "toolCallId": ghost, "inputTextDelta": "{}"},
                {"type": "tool-approval-request", "approvalId": "a", "toolCallId": ghost},
                {"type": "tool-output-available", "toolCallId": ghost, "output": None},
                {"type": "tool-output-error", "toolCallId": ghost, "errorText": "x"},
                {"type": "tool-output-denied", "toolCallId": ghost},
                {"type": "start", "messageId": ghost},  # after content: another message id
            ]
        )
    )


def _cyclic() -> dict[str, Any]:
    chunk: dict[str, Any] = {"type": "data-loop"}
    chunk["data"] = chunk
    return chunk


class _NotJson:
    """Some application object handed over by mistake."""

    def __repr__(self) -> str:
        return "<NotJson>"


def hostile_objects() -> st.SearchStrategy[Any]:
    """Python values that are no JSON at all, alone or inside an otherwise valid chunk."""
    loose = st.sampled_from(
        [
            object(),
            _NotJson(),
            b'{"type": "finish"}',
            bytearray(b"{}"),
            {1, 2},
            ("text-start", "t"),
            1 + 2j,
            Decimal("NaN"),
            datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC),
            Ellipsis,
            len,
            _NotJson,
        ]
    )
    inside = st.sampled_from(
        [
            {"type": "text-delta", "id": "t", "delta": b"bytes"},
            {"type": "data-x", "data": {1, 2}},
            {"type": "data-x", "data": float("nan")},
            {
                "type": "tool-input-available",
                "toolCallId": "g",
                "toolName": "n",
                "input": _NotJson(),
            },
            {"type": "text-start", "id": "t", ("tuple", "key"): 1},
            {"type": "text-start", "id": "t", 7: "int key"},
        ]
    )
    # Values hypothesis cannot print (nesting deeper than repr goes, integers too long
    # for str) are covered by named tests in test_store_properties.py instead.
    return loose | inside | st.builds(_cyclic)


def garbage() -> st.SearchStrategy[Any]:
    """Inputs a stream must refuse, whatever it holds (its parts and calls use other ids)."""
    return st.one_of(
        _jsonish.filter(lambda value: not isinstance(value, dict)),
        _untyped_object(),
        _mutated_chunk(),
        _unopened(),
        hostile_objects(),
    )


_MESSAGE = {"id": "m", "role": "user", "parts": [{"type": "text", "text": "hi"}]}


@st.composite
def garbage_messages(draw: st.DrawFn) -> Any:
    """Whole messages with one hostile value somewhere (some may still be valid UIMessages)."""
    message: Any = json.loads(json.dumps(_MESSAGE))
    message["id"] = f"m-{draw(st.integers(0, 10**9))}"
    value = draw(_jsonish | hostile_objects())
    where = draw(
        st.sampled_from(["metadata", "part field", "message key", "parts", "role", "whole"])
    )
    if where == "metadata":
        message["metadata"] = value
    elif where == "part field":
        field_name = draw(st.sampled_from(["text", "type", "state", "providerMetadata", "extra"]))
        message["parts"][0][field_name] = value
    elif where == "message key":
        message[draw(_ANY_TEXT)] = value
    elif where == "parts":
        message["parts"] = value if isinstance(value, list) else [value]
    elif where == "role":
        message["role"] = value
    else:
        message = value
    return message
