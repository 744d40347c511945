"""``chatledger.domain.partial_json``: the port of the AI SDK's ``parsePartialJson``.

Every expected value here was checked against ``ai@6.0.326`` (the conformance
tests in ``tests/conformance/test_partial_json_conformance.py`` do it live).
"""

from __future__ import annotations

import copy
import json
import pickle
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from chatledger.domain.partial_json import (
    MISSING,
    fix_json,
    parse_json_like_js,
    parse_partial_json,
)


def _same(ours: Any, expected: Any) -> bool:
    """Equal and printed alike (key order, int versus float)."""
    if ours is MISSING or expected is MISSING:
        return ours is expected
    return json.dumps(ours) == json.dumps(expected)


# --- the AI SDK partial JSON examples -----------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"ci', {}),
        ('{"a":', {}),
        ('{"a":1,', {"a": 1}),
        ("[1,", [1]),
        ('{"city":"Par', {"city": "Par"}),
        ('{"a": [1, tr', {"a": [1, True]}),
        ('{"a": 1, "b": "x\\', {"a": 1, "b": "x"}),
        ('{"a": 1, "c": nu', {"a": 1, "c": None}),
        ('{"a":{"b":[{"c":', {"a": {"b": [{}]}}),
        ("tr", True),
        ("1.5e", 1.5),
        ('{"a": "x\\u00', {"a": "x"}),
        ('{"a":1} ', {"a": 1}),
    ],
)
def test_reference_examples_repair_as_documented(text: str, expected: Any) -> None:
    """The b.5 examples: open strings, literals, numbers and containers are closed."""
    assert _same(parse_partial_json(text), expected)


@pytest.mark.parametrize("text", ["", "   ", "\n\t", "}}garbage", "-", "]", ":"])
def test_unrepairable_text_gives_missing(text: str) -> None:
    """Empty, blank or hopeless text has no value (JS undefined)."""
    assert parse_partial_json(text) is MISSING


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"ci', "{}"),
        ('{"a":1,', '{"a":1}'),
        ('{"a": [1, tr', '{"a": [1, true]}'),
        ('"x\\', '"x"'),
        ('"x\\u12', '"x"'),
        ("fal", "false"),
        ("nu", "null"),
        ("-", ""),
        ("1.5e-", "1.5"),
        ('[{"a":', "[{}]"),
        ('{"a":1}}x', '{"a":1}'),
    ],
)
def test_fix_json_returns_the_sdk_repair_text(text: str, expected: str) -> None:
    """``fix_json`` produces the SDK's repaired text."""
    assert fix_json(text) == expected


# --- SDK quirks we reproduce on purpose ---------------------------------------------------


def test_negative_number_opening_an_array_is_unrepairable() -> None:
    """``[-`` repairs to ``[-]`` (the array start keeps the ``-``), so it has no value."""
    assert fix_json("[-") == "[-]"
    assert parse_partial_json("[-") is MISSING
    assert parse_partial_json("[1,-") == [1]


def test_signed_exponent_is_cut_until_the_number_ends() -> None:
    """A ``+`` ends the number for the scanner: ``{"a":1e+5`` is ``{"a":1}`` until closed."""
    assert parse_partial_json('{"a":1e+5') == {"a": 1}
    assert parse_partial_json('{"a":1e5') == {"a": 100000}
    assert parse_partial_json('{"a":1e+5}') == {"a": 100000}


def test_data_after_a_complete_root_value_is_dropped() -> None:
    """Once the root value is closed the repair ignores the rest."""
    assert parse_partial_json('{"a":1}}x') == {"a": 1}
    assert parse_partial_json("[1] 2") == [1]


def test_escaped_quote_in_a_key_ends_the_key_for_the_scanner() -> None:
    """Keys are scanned without escapes, yet the kept text still parses."""
    assert parse_partial_json('{"a\\"b": 1') == {'a"b': 1}
    assert fix_json('{"a\\"b') == "{}"
    assert fix_json('{"a\\":1') == '{"a\\":1}'
    assert parse_partial_json('{"a\\":1') is MISSING


def test_garbage_after_an_array_value_is_kept_and_fails() -> None:
    """Inside an array any stray character is kept, so the repair does not parse."""
    assert fix_json("[1 x") == "[1 x]"
    assert parse_partial_json("[1 x") is MISSING


def test_unicode_escape_ignores_non_hex_characters() -> None:
    """An unfinished ``\\u`` escape swallows non-hex characters (quotes included)."""
    assert fix_json('["\\u12", "ab') == '["\\u12", "ab"]'
    assert parse_partial_json('["\\u12", "ab') is MISSING


# --- JSON.parse semantics -----------------------------------------------------------------


@pytest.mark.parametrize("text", ["NaN", "Infinity", "-Infinity", "[NaN]", '{"a":Infinity}'])
def test_non_finite_literals_are_rejected(text: str) -> None:
    """JS JSON.parse has no NaN or Infinity literals."""
    with pytest.raises(ValueError):
        parse_json_like_js(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1.0", 1),
        ("1e2", 100),
        ("-0", 0),
        ("-0.0", 0),
        ("0.1e1", 1),
        ("1.5", 1.5),
        ("1e-7", 1e-7),
        ("9007199254740993", 9007199254740992),
        ("12345678901234567890", 12345678901234567000),
        ("1e21", 1e21),
        ("1e400", None),
        ("-1e400", None),
        ("1e-400", 0),
        ("1" * 5000, None),
    ],
)
def test_numbers_become_what_js_prints(text: str, expected: Any) -> None:
    """Numbers are doubles: integral ones are ints, huge ones print like JS, overflow is null."""
    assert _same(parse_json_like_js(text), expected)


@pytest.mark.parametrize(
    "text",
    [
        "",
        " ",
        "[1,]",
        '{"a":1,}',
        "01",
        "1.",
        ".5",
        "+1",
        "'a'",
        '"\\x"',
        '"a\nb"',
        "\ufeff1",
        '"\\u12"',
        "[1] 2",
        "{a:1}",
        "tru",
        "1 2",
        "\u00a01",
    ],
)
def test_text_js_rejects_raises_value_error(text: str) -> None:
    """Whatever JS JSON.parse rejects raises ValueError."""
    with pytest.raises(ValueError):
        parse_json_like_js(text)


def test_duplicate_keys_keep_the_first_position_and_the_last_value() -> None:
    """``{"a":1,"b":2,"a":3}`` is ``{"a":3,"b":2}`` in both languages."""
    assert list(parse_json_like_js('{"a":1,"b":2,"a":3}').items()) == [("a", 3), ("b", 2)]


def test_array_index_keys_come_first_in_numeric_order() -> None:
    """JS objects list keys 0..2**32-2 first, ascending; other keys keep their order."""
    value = parse_json_like_js(
        '{"b":1,"10":2,"2":3,"01":4,"4294967295":5,"4294967294":6,"\\u0031":7,"a":{"9":0,"1":0}}'
    )
    assert list(value) == ["1", "2", "10", "4294967294", "b", "01", "4294967295", "a"]
    assert list(value["a"]) == ["1", "9"]


@pytest.mark.parametrize(
    "text",
    [
        '{"__proto__":1}',
        '{"a":[{"__proto__":{}}]}',
        '{"\\u005f_proto__" : 1}',
        '{"_\\u005Fproto\\u005f_":null}',
        '{"constructor":{"prototype":null}}',
        '[{"\\u0063onstructor":{"prototype":1}}]',
    ],
)
def test_prototype_pollution_keys_are_rejected(text: str) -> None:
    """secure-json-parse refuses ``__proto__`` and a ``constructor`` holding ``prototype``."""
    with pytest.raises(ValueError, match="forbidden prototype property"):
        parse_json_like_js(text)
    assert parse_partial_json(text) is MISSING
    assert parse_partial_json(text[:-1]) is MISSING


@pytest.mark.parametrize(
    "text",
    [
        '{"constructor":[1]}',
        '{"constructor":{"x":1}}',
        '{"constructor":null}',
        '{"x":"__proto__"}',
        '{"prototype":{"constructor":1}}',
    ],
)
def test_harmless_lookalikes_are_accepted(text: str) -> None:
    """Only the exact dangerous shapes are rejected."""
    assert parse_json_like_js(text) == json.loads(text)


def test_deep_nesting_parses_like_js() -> None:
    """Nesting far beyond Python's recursion limit parses (V8 has no such limit)."""
    depth = 100_000
    value = parse_partial_json('{"a":' * depth + "[1")
    for _ in range(depth):
        assert list(value) == ["a"]
        value = value["a"]
    assert value == [1]


def test_deep_nesting_is_still_checked_for_prototype_keys() -> None:
    """The recursion-free path applies the same secure-json-parse checks."""
    depth = 5_000
    with pytest.raises(ValueError, match="forbidden prototype property"):
        parse_json_like_js("[" * depth + '{"__proto__":1}' + "]" * depth)
    with pytest.raises(ValueError):
        parse_json_like_js("[" * depth + "1," + "]" * depth)


_JSONISH = st.text(alphabet='{}[]",:\\ \n-+.019eEtrufalsn\u00e9', max_size=30)


@given(
    _JSONISH | st.builds(json.dumps, st.recursive(st.none() | st.floats() | st.text(), st.lists))
)
def test_recursion_free_parser_agrees_with_the_fast_one(text: str) -> None:
    """The fallback for deep nesting accepts and rejects exactly what the C decoder does."""
    from chatledger.domain.partial_json import _DECODER, _parse_iterative

    try:
        expected: Any = _DECODER.decode(text)
    except ValueError:
        expected = ValueError
    try:
        ours: Any = _parse_iterative(text)
    except ValueError:
        ours = ValueError
    assert (ours is ValueError and expected is ValueError) or _same(ours, expected)


@example('{"a":"\\u00e9\\u12AB", "b": [tru, -1.5e+3, {"c\\"d": nul')
@given(st.lists(_JSONISH, max_size=8).map("".join))
def test_resumed_repair_matches_a_fresh_one(text: str) -> None:
    """Repairing prefixes in streaming order (resumed scans) equals repairing them cold."""
    prefixes = [text[:end] for end in range(len(text) + 1)]
    streamed = [(fix_json(p), repr(parse_partial_json(p))) for p in prefixes]
    cold = [(fix_json(p), repr(parse_partial_json(p))) for p in reversed(prefixes)]
    assert streamed == cold[::-1]


# --- UTF-16 -------------------------------------------------------------------------------


def test_characters_beyond_the_bmp_count_as_two_code_units() -> None:
    """An emoji after a number or literal is two JS chars: the second one is kept."""
    assert fix_json("[1\U0001f600") == "[1\U0001f600]"
    assert parse_partial_json("[1\U0001f600") is MISSING
    assert fix_json("[tr\U0001f600") == "[tr\U0001f600]"
    assert parse_partial_json('{"a":"\U0001f600') == {"a": "\U0001f600"}


def test_surrogate_halves_from_separate_deltas_pair_up() -> None:
    """A pair split by a UTF-16 producer joins into one character, as in a JS string."""
    assert parse_partial_json('["\ud83d' + "\ude00") == ["\U0001f600"]
    assert fix_json('["\ud83d' + "\ude00") == '["\U0001f600"]'
    assert parse_json_like_js('"\ud83d\ude00"') == "\U0001f600"


def test_lone_surrogates_are_kept_like_js() -> None:
    """A lone half stays a lone half (JS strings allow it)."""
    assert parse_partial_json('["\ud83d') == ["\ud83d"]
    assert parse_json_like_js('"\\udc00"') == "\udc00"


@given(st.text())
def test_any_text_gives_a_value_or_missing_without_raising(text: str) -> None:
    """The fold can call it on any accumulated text."""
    assert isinstance(fix_json(text), str)
    value = parse_partial_json(text)
    assert value is MISSING or json.dumps(value, allow_nan=False)


def _js_numbers(value: Any) -> Any:
    """``value`` with every number turned into a double and printed back like JS."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, list):
        return [_js_numbers(item) for item in value]
    if isinstance(value, dict):
        return {key: _js_numbers(item) for key, item in value.items()}
    double = float(value)
    if not double.is_integer():
        return double
    # JS prints the shortest round-trip digits, padded with zeros below 1e21.
    return int(Decimal(repr(double))) if abs(double) < 1e21 else double


_DOCUMENTS = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(min_value=-1e20, max_value=1e20)
    | st.text(max_size=10),
    lambda items: (
        st.lists(items, max_size=5)
        | st.dictionaries(st.text("abc_ \u00e9", max_size=5), items, max_size=5)
    ),
    max_leaves=15,
)


@given(_DOCUMENTS)
def test_complete_documents_parse_to_their_js_value(value: Any) -> None:
    """A complete document is its own value (numbers as JS doubles print)."""
    assert _same(parse_partial_json(json.dumps(value)), _js_numbers(value))


@given(_DOCUMENTS)
def test_every_prefix_of_a_document_gives_a_value_or_missing(value: Any) -> None:
    """Streaming a document never raises, and its last prefix is the whole value."""
    text = json.dumps(value, indent=1)
    for end in range(len(text)):
        partial = parse_partial_json(text[:end])
        assert partial is MISSING or json.dumps(partial, allow_nan=False)
    assert _same(parse_partial_json(text), _js_numbers(value))


# --- MISSING ------------------------------------------------------------------------------


def test_missing_survives_copy_and_pickle() -> None:
    """Identity checks (``is MISSING``) still work on copied or stored folds."""
    assert copy.deepcopy(MISSING) is MISSING
    assert pickle.loads(pickle.dumps(MISSING)) is MISSING
    assert repr(MISSING) == "MISSING"
    assert MISSING is not None
