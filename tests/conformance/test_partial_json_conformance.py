"""``chatledger.domain.partial_json`` against the real AI SDK v6 (``ai@6.0.326``).

Two views of the SDK: the oracle's ``read`` op (``readUIMessageStream`` folding a
``tool-input-delta``, exactly where the store uses the port), and a small Node
process that calls the exported ``parsePartialJson`` and the SDK's own ``fixJson``
source directly (faster, sees ``fixJson``'s text, and can be sent lone surrogates,
which the oracle's UTF-8 pipe cannot carry).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatledger.domain.partial_json import MISSING, fix_json, parse_partial_json
from tests.support.oracle import ORACLE_DIR, Oracle, ensure_installed

pytestmark = pytest.mark.oracle


# --- talking to the SDK -------------------------------------------------------------------

_SDK_SCRIPT = """
import { parsePartialJson } from "ai";
import { createInterface } from "node:readline";
const fixJson = new Function(process.env.FIX_JSON_SOURCE + "\\nreturn fixJson;")();
for await (const line of createInterface({ input: process.stdin })) {
  const text = JSON.parse(line);
  const { value, state } = await parsePartialJson(text);
  process.stdout.write(JSON.stringify({ fixed: fixJson(text), state, value }) + "\\n");
}
"""


class _SdkPartialJson:
    """A Node process answering ``{fixed, state, value?}`` for each text, in order."""

    def __init__(self) -> None:
        ensure_installed()
        bundle = (ORACLE_DIR / "node_modules" / "ai" / "dist" / "index.mjs").read_text("utf-8")
        source = re.search(r"^function fixJson\(input\) \{\n.*?^\}$", bundle, re.M | re.S)
        assert source is not None, "fixJson not found in the ai bundle"
        self._proc = subprocess.Popen(
            ["node", "--input-type=module", "-e", _SDK_SCRIPT],
            cwd=ORACLE_DIR,
            env={**os.environ, "FIX_JSON_SOURCE": source.group()},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )

    def run_many(self, texts: list[str]) -> list[dict[str, Any]]:
        assert self._proc.stdin is not None and self._proc.stdout is not None
        # ASCII escapes let lone surrogates through the pipe.
        payload = "".join(json.dumps(text) + "\n" for text in texts)
        writer = threading.Thread(target=self._write, args=(payload,))
        writer.start()
        answers = [json.loads(self._proc.stdout.readline()) for _ in texts]
        writer.join()
        return answers

    def _write(self, payload: str) -> None:
        assert self._proc.stdin is not None
        self._proc.stdin.write(payload)
        self._proc.stdin.flush()

    def close(self) -> None:
        assert self._proc.stdin is not None
        self._proc.stdin.close()
        self._proc.wait(timeout=10)


@pytest.fixture(scope="module")
def sdk() -> Iterator[_SdkPartialJson]:
    """The SDK's ``parsePartialJson`` and ``fixJson``, called directly."""
    node = _SdkPartialJson()
    yield node
    node.close()


def _canonical(value: Any) -> str:
    # Sensitive to key order and to int versus float, unlike ``==``.
    return "<undefined>" if value is MISSING else json.dumps(value, allow_nan=False)


def _fold_inputs(oracle: Oracle, texts: list[str]) -> list[Any]:
    """``part.input`` after the SDK folds one ``tool-input-delta`` of each text."""
    answers = oracle.run_many(
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
    inputs = []
    for text, answer in zip(texts, answers, strict=True):
        assert answer["ok"], answer
        part = answer["message"]["parts"][0]
        assert part["rawInput"] == text
        inputs.append(part.get("input", MISSING))
    return inputs


def _assert_fold_agrees(oracle: Oracle, texts: list[str]) -> None:
    expected = _fold_inputs(oracle, texts)
    wrong = [
        (text, _canonical(parse_partial_json(text)), _canonical(sdk_value))
        for text, sdk_value in zip(texts, expected, strict=True)
        if _canonical(parse_partial_json(text)) != _canonical(sdk_value)
    ]
    assert not wrong, "(text, ours, SDK): " + "\n".join(map(repr, wrong[:10]))


def _assert_sdk_agrees(sdk: _SdkPartialJson, texts: list[str]) -> None:
    wrong = []
    for text, answer in zip(texts, sdk.run_many(texts), strict=True):
        ours = (fix_json(text), _canonical(parse_partial_json(text)))
        theirs = (answer["fixed"], _canonical(answer.get("value", MISSING)))
        if ours != theirs:
            wrong.append((text, ours, theirs))
    assert not wrong, "(text, ours, SDK): " + "\n".join(map(repr, wrong[:10]))


def _prefixes(text: str) -> list[str]:
    return [text[:end] for end in range(len(text) + 1)]


# --- generated JSON -----------------------------------------------------------------------

_PLAIN_CHAR = st.characters(exclude_categories=["Cs", "Cc"], exclude_characters='"\\')
_ESCAPE = st.sampled_from(['\\"', "\\\\", "\\/", "\\b", "\\f", "\\n", "\\r", "\\t"]) | st.builds(
    lambda code, upper: f"\\u{code:04X}" if upper else f"\\u{code:04x}",
    st.integers(0, 0xFFFF) | st.sampled_from([0xD83D, 0xDE00, 0x005F, 0x0031]),
    st.booleans(),
)
_STRING = st.lists(_PLAIN_CHAR | _ESCAPE, max_size=6).map(lambda parts: '"' + "".join(parts) + '"')
_KEY = _STRING | st.sampled_from(
    [
        '"a"',
        '"b"',
        '"__proto__"',
        '"\\u005f_proto__"',
        '"constructor"',
        '"prototype"',
        '"0"',
        '"1"',
        '"10"',
        '"01"',
        '"\\u0032"',
        '"4294967294"',
        '"4294967295"',
    ]
)
_NUMBER = st.from_regex(
    r"-?(0|[1-9][0-9]{0,21})(\.[0-9]{1,8})?([eE][-+]?[0-9]{1,3})?", fullmatch=True
)
_SCALAR = _NUMBER | _STRING | st.sampled_from(["true", "false", "null"])
_WHITESPACE = {
    "compact": st.just(""),
    "spaced": st.just(" "),
    "newlines": st.sampled_from(["\n", "\n  ", "\r\n\t"]),
    "mixed": st.text(alphabet=" \t\n\r", max_size=2),
}


@st.composite
def _json_text(draw: st.DrawFn) -> str:
    """A JSON document written as text: odd number forms, escapes, one whitespace style."""
    ws = _WHITESPACE[draw(st.sampled_from(sorted(_WHITESPACE)))]

    @st.composite
    def array(draw: st.DrawFn, items: st.SearchStrategy[str]) -> str:
        values = draw(st.lists(items, max_size=4))
        inner = ",".join(draw(ws) + value + draw(ws) for value in values)
        return "[" + (inner or draw(ws)) + "]"

    @st.composite
    def obj(draw: st.DrawFn, items: st.SearchStrategy[str]) -> str:
        pairs = draw(st.lists(st.tuples(_KEY, items), max_size=4))
        inner = ",".join(
            draw(ws) + key + draw(ws) + ":" + draw(ws) + value + draw(ws) for key, value in pairs
        )
        return "{" + (inner or draw(ws)) + "}"

    document = draw(st.recursive(_SCALAR, lambda items: array(items) | obj(items), max_leaves=10))
    return draw(ws) + document + draw(ws)


_JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(exclude_categories=["Cs"]), max_size=8),
    lambda items: (
        st.lists(items, max_size=4)
        | st.dictionaries(
            st.text(st.characters(exclude_categories=["Cs"]), max_size=4), items, max_size=4
        )
    ),
    max_leaves=10,
)
_DUMP_STYLES = [
    {"separators": (",", ":"), "ensure_ascii": False},
    {"ensure_ascii": False},
    {"indent": 2, "ensure_ascii": False},
    {"indent": "\t", "ensure_ascii": True},
]
_JSONISH = '{}[]",:\\ \n\t-+.0123456789eEtrufalsn_pcoAF\u00e9\u2028\U0001f600\x00'


# --- tests through the oracle's fold ------------------------------------------------------


def test_reference_examples_fold_like_the_sdk(oracle: Oracle) -> None:
    """The AI SDK partial JSON examples give the SDK fold's ``input``."""
    _assert_fold_agrees(
        oracle,
        [
            '{"ci',
            '{"a":',
            '{"a":1,',
            "[1,",
            '{"city":"Par',
            '{"a": [1, tr',
            '{"a": 1, "b": "x\\',
            '{"c": nu',
            '{"a":{"b":[{"c":',
            "tr",
            "}}garbage",
            "",
            "   ",
        ],
    )


def test_quirks_fold_like_the_sdk(oracle: Oracle) -> None:
    """Known SDK oddities (number cut-offs, key escapes, trailing data, prototypes) agree."""
    _assert_fold_agrees(
        oracle,
        [
            "[-",
            "-",
            '{"a":1e+5',
            "[0.5e+1",
            '{"a":1}}x',
            '{"a\\"b": 1',
            '{"a\\":1',
            '["\\u12", "ab',
            "[1 x",
            "[,",
            '{"a":[1-2',
            "1e+5 ",
            '"\\x',
            '"ab\\u00',
            "\ufeff1",
            "1e400",
            "-1e400",
            "[12345678901234567890, 1e21, 1.0, -0, 1e-7, 9007199254740993, 0.1e1]",
            '{"b":1,"2":2,"1":3,"01":4,"4294967294":5,"4294967295":6}',
            '{"a":0,"\\u0031":1}',
            '{"__proto__":1}',
            '{"__proto__":1',
            '{"\\u005F_proto__" :1}',
            '{"a":[{"__proto__":{}}]}',
            '{"constructor":{"prototype":null}}',
            '{"constructor":[1]}',
            '{"constructor":{"x":1}}',
            '{"x":"__proto__"}',
            '{"a":1,"a":2}',
            "[1\U0001f600",
            "[tr\U0001f600",
            '["\U0001f600',
            '"\u2028"',
            "nul",
            "nulll",
            "[true",
            "[truex]",
            "{}",
        ],
    )


@settings(max_examples=80)
@given(_JSON_VALUES, st.sampled_from(range(len(_DUMP_STYLES))))
def test_every_prefix_of_serialised_json_folds_like_the_sdk(
    oracle: Oracle, value: Any, style: int
) -> None:
    """Every prefix of a json.dumps document (compact, spaced, indented, ASCII) agrees."""
    _assert_fold_agrees(oracle, _prefixes(json.dumps(value, **_DUMP_STYLES[style])))


@settings(max_examples=80)
@given(_json_text())
def test_every_prefix_of_handwritten_json_folds_like_the_sdk(oracle: Oracle, text: str) -> None:
    """Every prefix of generated JSON text (exponents, escapes, odd keys, whitespace) agrees."""
    _assert_fold_agrees(oracle, _prefixes(text))


@settings(max_examples=40)
@given(st.lists(st.text(alphabet=_JSONISH, max_size=12), min_size=1, max_size=100))
def test_short_jsonish_strings_fold_like_the_sdk(oracle: Oracle, texts: list[str]) -> None:
    """Arbitrary short strings over a JSON-ish alphabet agree, valid or not."""
    _assert_fold_agrees(oracle, texts)


# --- tests against the SDK functions directly ---------------------------------------------


def test_fix_json_text_matches_the_sdk_on_the_quirks(sdk: _SdkPartialJson) -> None:
    """``fix_json`` returns the SDK ``fixJson`` text, surrogate pairs and lone halves included."""
    _assert_sdk_agrees(
        sdk,
        [
            "[1\U0001f600",
            "[tr\U0001f600",
            '{"a":1\U0001f600',
            '["\\u12", "ab',
            '{"a\\"b": 1',
            '["\ud83d',
            '["\ud83d\ude00',
            "[1\ud83d",
            '"\\u00e9\\',
            "[-",
            '{"a":1}}x',
            "",
            "{" * 2000 + '"a":' + "[" * 2000,
        ],
    )


@settings(max_examples=300)
@given(_json_text())
def test_every_prefix_repairs_to_the_sdk_text(sdk: _SdkPartialJson, text: str) -> None:
    """``fix_json`` and ``parse_partial_json`` agree with the SDK on every prefix."""
    _assert_sdk_agrees(sdk, _prefixes(text))


@settings(max_examples=300)
@given(
    st.lists(
        st.text(alphabet=_JSONISH + "\ud83d\ude00\ud800", max_size=16), min_size=1, max_size=100
    )
)
def test_jsonish_strings_repair_to_the_sdk_text(sdk: _SdkPartialJson, texts: list[str]) -> None:
    """Arbitrary JSON-ish strings, lone surrogates included, repair and parse as in the SDK."""
    _assert_sdk_agrees(sdk, texts)


@settings(max_examples=100)
@given(st.lists(_NUMBER, min_size=1, max_size=100))
def test_numbers_parse_to_what_js_prints(sdk: _SdkPartialJson, numbers: list[str]) -> None:
    """Number literals (huge, tiny, exponents, -0) become what JSON.stringify prints."""
    _assert_sdk_agrees(sdk, [*numbers, "[" + ",".join(numbers) + "]"])
