"""Partial tool input (``parsePartialJson``/``fixJson``) of a v7 conversation is ai@7's.

v7's ``fixJson`` changed one rule (a first array item's opening character no
longer counts as valid by itself: ``[-`` and ``[NaN`` parse to ``[]``); these
check the v7 fold's ``input`` against ``readUIMessageStream`` of ``ai@7.0.173``
on the v6 suite's quirks and on generated texts.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatledger.domain.dialects import V7
from chatledger.domain.partial_json import MISSING, parse_partial_json
from tests.conformance.test_partial_json_conformance import (
    _JSONISH,
    _canonical,
    _json_text,
    _prefixes,
)
from tests.support.oracle import Oracle

pytestmark = pytest.mark.oracle

QUIRKS = [
    "[-", "-", "[NaN", "[x", "[ -", "[[-", '{"a":[-', "[1,-", "[1e+5", "[0.5e+1", "[,",
    '{"a":1e+5', "[tr", "[nul", '["ab', "[{", "[[", "[]", "[1 x", '{"a":[1-2', "[true",
]  # fmt: skip


def _assert_v7_fold_agrees(oracle_v7: Oracle, texts: list[str]) -> None:
    answers = oracle_v7.run_many(
        [
            {
                "op": "read",
                "chunks": [
                    {"type": "tool-input-start", "toolCallId": "c", "toolName": "t"},
                    {"type": "tool-input-delta", "toolCallId": "c", "inputTextDelta": text},
                ],
            }
            for text in texts
        ]
    )
    wrong: list[tuple[str, str, str]] = []
    for text, answer in zip(texts, answers, strict=True):
        assert answer["ok"], answer
        sdk_value: Any = answer["message"]["parts"][0].get("input", MISSING)
        ours = _canonical(parse_partial_json(text, strict=V7.partial_json_strict))
        if ours != _canonical(sdk_value):
            wrong.append((text, ours, _canonical(sdk_value)))
    assert not wrong, "(text, ours, SDK): " + "\n".join(map(repr, wrong[:10]))


def test_quirks_fold_like_ai_7(oracle_v7: Oracle) -> None:
    """The cut-offs around a first array item, and the v6 quirks, agree with v7."""
    _assert_v7_fold_agrees(oracle_v7, QUIRKS)


@settings(max_examples=40)
@given(_json_text())
def test_every_prefix_of_handwritten_json_folds_like_ai_7(oracle_v7: Oracle, text: str) -> None:
    """Every prefix of generated JSON text agrees with v7."""
    _assert_v7_fold_agrees(oracle_v7, _prefixes(text))


@settings(max_examples=30)
@given(st.lists(st.text(alphabet=_JSONISH, max_size=12), min_size=1, max_size=100))
def test_short_jsonish_strings_fold_like_ai_7(oracle_v7: Oracle, texts: list[str]) -> None:
    """Arbitrary short strings over a JSON-ish alphabet agree with v7, valid or not."""
    _assert_v7_fold_agrees(oracle_v7, texts)
