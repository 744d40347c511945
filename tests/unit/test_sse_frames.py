"""``sse_event``: the bytes ``json.dumps(chunk, separators=(",", ":"))`` gives, however it gets them.

The AI SDK parses every ``data:`` line; a flat chunk of strings is written by
orjson, anything else by the standard encoder, and the frames must not tell
which (ASCII only: ``\\uXXXX`` for the rest, DEL included).
"""

from __future__ import annotations

import enum
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatledger.adapters.http.sse import sse_event

pytestmark = pytest.mark.timeout(60)


def _reference(chunk: Any, event_id: str | None = None) -> str:
    data = json.dumps(chunk, separators=(",", ":"))
    return f"id: {event_id}\ndata: {data}\n\n" if event_id else f"data: {data}\n\n"


class _Str(str):
    pass


class _Kind(enum.StrEnum):
    TEXT = "text-delta"


CHUNKS: list[Any] = [
    {"type": "text-delta", "id": "t", "delta": "1764300000.123456 "},
    {"type": "text-delta", "id": "t", "delta": "".join(chr(i) for i in range(128))},
    {"type": "text-delta", "id": "t", "delta": "\x7f"},
    {"type": "text-delta", "id": "t", "delta": "déjà vu 🙂 漢字 \u2028\u2029"},
    {"type": "text-delta", "id": "t", "delta": "\ud800 a lone surrogate"},
    {"".join(chr(i) for i in range(128)): "a key of every ASCII character"},
    {"é": "a key not ASCII"},
    {1: "a key not a string"},
    {"type": "text-delta", "id": _Str("t"), "delta": "a string subclass"},
    {"type": _Kind.TEXT, "id": "t", "delta": "a StrEnum"},
    {"type": "data-x", "data": {"n": 1e16, "m": 1e-05, "f": 0.1, "i": 2**70}},
    {"type": "data-x", "data": [True, False, None, -0.0, 3]},
    {"type": "finish", "messageMetadata": {"usage": 12}},
    {"type": "text-delta", "id": "t", "delta": "x", "providerMetadata": {"a": {"b": "c"}}},
    {},
    ["not", "a", "dict"],
    "a string",
]


@pytest.mark.parametrize("chunk", CHUNKS)
@pytest.mark.parametrize("event_id", [None, "s:1:2"])
def test_a_frame_is_what_the_standard_encoder_writes(chunk: Any, event_id: str | None) -> None:
    assert sse_event(chunk, event_id) == _reference(chunk, event_id)
    assert sse_event(chunk, event_id).isascii()


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.text(), st.text(), max_size=4))
def test_any_flat_chunk_of_strings_frames_as_the_standard_encoder_writes_it(
    chunk: dict[str, str],
) -> None:
    assert sse_event(chunk) == _reference(chunk)
