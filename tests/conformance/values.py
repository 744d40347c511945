"""Hypothesis strategies for the JSON values that ride on chunks (inputs, outputs, metadata).

Values stay inside what JSON means the same in Python and JavaScript: integers
within 2**53, finite floats, no ``__proto__``/``constructor``/``prototype``
keys (the SDK treats those specially; the corpus covers them).
"""

from __future__ import annotations

import json
from functools import cache
from itertools import pairwise
from typing import Any

from hypothesis import strategies as st

__all__ = [
    "json_texts",
    "json_values",
    "keys",
    "metadata_values",
    "provider_metadata",
    "short_texts",
    "split_text",
    "tool_metadata",
]

_FORBIDDEN_KEYS = {"__proto__", "constructor", "prototype"}

short_texts = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=12)
keys = st.one_of(
    st.sampled_from(["a", "b", "city", "unit", "q", "items", "x-y", "", "ü"]),
    short_texts,
).filter(lambda k: k not in _FORBIDDEN_KEYS)

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**53) + 1, max_value=2**53 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    short_texts,
)


@cache
def json_values(max_leaves: int = 8) -> st.SearchStrategy[Any]:
    """Any JSON value (null, bool, number, string, array, object)."""
    return st.recursive(
        scalars,
        lambda inner: st.one_of(
            st.lists(inner, max_size=4),
            st.dictionaries(keys, inner, max_size=4),
        ),
        max_leaves=max_leaves,
    )


@cache
def _objects(max_leaves: int) -> st.SearchStrategy[dict[str, Any]]:
    leaf = st.one_of(scalars, st.lists(scalars, max_size=3))
    return st.recursive(
        st.dictionaries(keys, leaf, max_size=3),
        lambda inner: st.dictionaries(keys, st.one_of(leaf, inner), max_size=3),
        max_leaves=max_leaves,
    )


# Metadata is deep-merged; small key pools make overlapping keys (real merges) likely.
_meta_keys = st.sampled_from(["usage", "model", "tags", "in", "out", "ts", "n"])


@cache
def metadata_values() -> st.SearchStrategy[Any]:
    """``messageMetadata`` values: mostly objects with overlapping keys, sometimes null."""
    leaf = st.one_of(
        st.none(),
        st.integers(-5, 5),
        st.sampled_from(["x", "y"]),
        st.lists(st.integers(0, 3), max_size=2),
    )
    objects = st.recursive(
        st.dictionaries(_meta_keys, leaf, max_size=3),
        lambda inner: st.dictionaries(_meta_keys, st.one_of(leaf, inner), max_size=3),
        max_leaves=8,
    )
    return st.one_of(objects, objects, st.none())


@cache
def provider_metadata() -> st.SearchStrategy[dict[str, Any]]:
    """``providerMetadata``: a record of provider name to JSON object."""
    return st.dictionaries(
        st.sampled_from(["openai", "anthropic", "google", "x"]),
        _objects(4),
        min_size=1,
        max_size=2,
    )


@cache
def tool_metadata() -> st.SearchStrategy[dict[str, Any]]:
    """``toolMetadata``: a record of string to JSON value."""
    return st.dictionaries(st.sampled_from("ab"), json_values(2))


@st.composite
def json_texts(draw: st.DrawFn) -> str:
    """Text of a tool call's input: serialised JSON in several styles, or JSON-ish noise."""
    style = draw(st.sampled_from(["compact", "spaced", "ascii", "indented", "noise"]))
    if style == "noise":
        return draw(st.text(alphabet='{}[]":,0123456789.-+eE tfrulasn\\u\n', max_size=30))
    value = draw(json_values())
    if style == "compact":
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    if style == "spaced":
        return json.dumps(value, ensure_ascii=False)
    if style == "ascii":
        return json.dumps(value)
    return json.dumps(value, indent=2, ensure_ascii=False)


def split_text(draw: st.DrawFn, text: str) -> list[str]:
    """Cut ``text`` into delta pieces at random points (empty pieces allowed)."""
    if not text:
        return draw(st.lists(st.just(""), max_size=1))
    cuts = draw(st.lists(st.integers(0, len(text)), max_size=4))
    points = [0, *sorted(cuts), len(text)]
    return [text[a:b] for a, b in pairwise(points)]
