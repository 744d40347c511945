"""Exact port of the AI SDK v6 ``parsePartialJson`` (with ``fixJson`` and ``secureJsonParse``)."""

from __future__ import annotations

import enum
import json
import re
from collections.abc import Callable
from decimal import Decimal
from typing import Any, Final

__all__ = ["MISSING", "fix_json", "parse_json_like_js", "parse_partial_json"]


class _Missing(enum.Enum):
    MISSING = "MISSING"

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Final = _Missing.MISSING
"""JS ``undefined``: the SDK has no value (an enum member, so it survives copy and pickle)."""


# --- JSON.parse with JavaScript number semantics ------------------------------------------

_MAX_SAFE: Final = 2**53


def _from_double(d: float) -> int | float | None:
    # What JSON.stringify prints for the double d, as the Python value json.loads gives back.
    if d - d != 0.0:  # +-Infinity (a JSON number literal can never be NaN)
        return None
    if d.is_integer():
        if -_MAX_SAFE <= d <= _MAX_SAFE:
            return int(d)
        if abs(d) < 1e21:  # JS prints the shortest digits padded with zeros
            return int(Decimal(repr(d)))
    return d


def _js_int(s: str) -> int | float | None:
    return int(s) if len(s) < 16 else _from_double(float(s))


def _js_float(s: str) -> int | float | None:
    return _from_double(float(s))


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


_DECODER: Final = json.JSONDecoder(
    parse_int=_js_int, parse_float=_js_float, parse_constant=_reject_constant
)
_WS: Final = re.compile(r"[ \t\n\r]*")
_NUMBER: Final = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_scanstring: Final[Callable[[str, int], tuple[str, int]]] = json.decoder.scanstring  # type: ignore[attr-defined]


def _skip_ws(s: str, i: int) -> int:
    m = _WS.match(s, i)
    assert m is not None  # the pattern matches the empty string
    return m.end()


def _parse_iterative(s: str) -> Any:
    # JSON.parse without recursion, for nesting deeper than the C decoder's recursion limit.
    stack: list[tuple[Any, str | None]] = []  # (open container, key awaiting its value)
    value: Any
    i = _skip_ws(s, 0)
    while True:
        c = s[i : i + 1]
        if c == "{" or c == "[":
            container: Any = {} if c == "{" else []
            i = _skip_ws(s, i + 1)
            if s[i : i + 1] == ("}" if c == "{" else "]"):
                value, i = container, i + 1
            elif c == "[":
                stack.append((container, None))
                continue
            else:
                stack.append((container, None))
                i = _object_key(s, i, stack)
                continue
        elif c == '"':
            value, i = _scanstring(s, i + 1)
        elif s.startswith(("true", "false", "null"), i):
            value = {"t": True, "f": False, "n": None}[c]
            i += 4 if c != "f" else 5
        else:
            m = _NUMBER.match(s, i)
            if m is None:
                raise ValueError(f"unexpected character at {i}")
            number = m.group()
            value = _js_float(number) if m.lastindex else _js_int(number)
            i = m.end()
        while True:  # attach the finished value, close finished containers
            i = _skip_ws(s, i)
            if not stack:
                if i != len(s):
                    raise ValueError(f"unexpected data after JSON at {i}")
                return value
            container, key = stack[-1]
            if key is None:
                container.append(value)
            else:
                container[key] = value
            c = s[i : i + 1]
            if c == ",":
                i = _skip_ws(s, i + 1)
                if key is not None:
                    i = _object_key(s, i, stack)
                break
            if c != ("]" if key is None else "}"):
                raise ValueError(f"expected ',' or a closing bracket at {i}")
            stack.pop()
            value, i = container, i + 1


def _object_key(s: str, i: int, stack: list[tuple[Any, str | None]]) -> int:
    if s[i : i + 1] != '"':
        raise ValueError(f"expected a property name at {i}")
    key, i = _scanstring(s, i + 1)
    i = _skip_ws(s, i)
    if s[i : i + 1] != ":":
        raise ValueError(f"expected ':' at {i}")
    stack[-1] = (stack[-1][0], key)
    return _skip_ws(s, i + 1)


# secure-json-parse tests the text for a "__proto__" or "constructor" key (also spelt with
# \u escapes) before walking the value. A key made of digits only is an array index for JS,
# which lists such keys first. In JSON that parsed, these patterns match exactly such keys.
_SUSPECT_KEY: Final = re.compile(
    r'"(?:(?:_|\\u005[Ff])(?:_|\\u005[Ff])(?:p|\\u0070)(?:r|\\u0072)(?:o|\\u006[Ff])'
    r"(?:t|\\u0074)(?:o|\\u006[Ff])(?:_|\\u005[Ff])(?:_|\\u005[Ff])"
    r"|(?:c|\\u0063)(?:o|\\u006[Ff])(?:n|\\u006[Ee])(?:s|\\u0073)(?:t|\\u0074)(?:r|\\u0072)"
    r"(?:u|\\u0075)(?:c|\\u0063)(?:t|\\u0074)(?:o|\\u006[Ff])(?:r|\\u0072)"
    r'|(?:[0-9]|\\u003[0-9])+)"[ \t\n\r]*:'
)


def _has_surrogates(text: str) -> bool:
    try:
        text.encode("utf-16-le")  # much faster than a regex or UTF-8
    except UnicodeEncodeError:
        return True
    return False


def _pair_surrogates(text: str) -> str:
    # JS strings are UTF-16: a high and a low surrogate in a row are one character.
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def _is_array_index(key: str) -> bool:
    return (
        key.isascii() and key.isdigit() and (key == "0" or key[0] != "0") and int(key) < 2**32 - 1
    )


def _check_and_order(root: Any) -> None:
    # secure-json-parse's filter(), plus JS key order for objects with array-index keys.
    todo = [root]
    while todo:
        node = todo.pop()
        if type(node) is dict:
            if "__proto__" in node or (
                type(node.get("constructor")) is dict and "prototype" in node["constructor"]
            ):
                raise ValueError("Object contains forbidden prototype property")
            indexes = sorted((k for k in node if _is_array_index(k)), key=int)
            if indexes:
                items = [(k, node[k]) for k in indexes]
                items += [(k, v) for k, v in node.items() if not _is_array_index(k)]
                node.clear()
                node.update(items)
            todo.extend(v for v in node.values() if type(v) is dict or type(v) is list)
        else:
            todo.extend(v for v in node if type(v) is dict or type(v) is list)


def parse_json_like_js(text: str) -> Any:
    """``JSON.parse`` + the SDK's ``secureJsonParse`` checks; ``ValueError`` where JS throws.

    Numbers come back as JS doubles print (``1.0`` -> ``1``, ``1e400`` -> ``None``), objects list
    array-index keys first as JS does, and a ``__proto__`` key or a ``constructor`` object holding
    ``prototype`` is rejected.
    """
    if not text.isascii() and _has_surrogates(text):
        text = _pair_surrogates(text)
    try:
        value = _DECODER.decode(text)
    except RecursionError:
        value = _parse_iterative(text)
    if (type(value) is dict or type(value) is list) and _SUSPECT_KEY.search(text):
        _check_and_order(value)
    return value


# --- fixJson ------------------------------------------------------------------------------

(
    _ROOT,
    _FINISH,
    _OBJECT_START,
    _OBJECT_AFTER_COMMA,
    _OBJECT_KEY,
    _OBJECT_AFTER_KEY,
    _OBJECT_BEFORE_VALUE,
    _OBJECT_AFTER_VALUE,
    _STRING,
    _ARRAY_START,
    _ARRAY_AFTER_VALUE,
    _ARRAY_AFTER_COMMA,
    _STRING_ESCAPE,
    _UNICODE_ESCAPE,
    _NUMBER_STATE,
    _LITERAL,
) = range(16)

_VALUE_START: Final = {
    '"': _STRING, "f": _LITERAL, "t": _LITERAL, "n": _LITERAL, "-": _NUMBER_STATE,
    "{": _OBJECT_START, "[": _ARRAY_START, **dict.fromkeys("0123456789", _NUMBER_STATE),
}  # fmt: skip
_OBJECT_STATES: Final = frozenset(
    {_OBJECT_START, _OBJECT_AFTER_COMMA, _OBJECT_KEY, _OBJECT_AFTER_KEY,
     _OBJECT_BEFORE_VALUE, _OBJECT_AFTER_VALUE}
)  # fmt: skip
_ARRAY_STATES: Final = frozenset({_ARRAY_START, _ARRAY_AFTER_VALUE, _ARRAY_AFTER_COMMA})
_LITERAL_PREFIXES: Final = frozenset(
    w[:n] for w in ("true", "false", "null") for n in range(1, len(w) + 1)
)
_HEX: Final = frozenset("0123456789abcdefABCDEF")
_STRING_STOP: Final = re.compile(r'["\\]')


def _split_astral(m: re.Match[str]) -> str:
    cp = ord(m.group()) - 0x10000
    return chr(0xD800 + (cp >> 10)) + chr(0xDC00 + (cp & 0x3FF))


_ASTRAL: Final = re.compile("[\U00010000-\U0010ffff]")

# Scanner state after a text: (text, stack, last_valid, literal_start, hex_digits). The fold
# calls fix_json on a text that grows by one delta at a time, so the scan resumes from the
# state of a recent prefix instead of starting over (the result is the same either way).
_Scan = tuple[str, tuple[int, ...], int, int, int]
_START: Final[_Scan] = ("", (_ROOT,), -1, 0, 0)
_RECENT_SCANS: Final = 16
_recent: list[_Scan] = []
_recent_strict: list[_Scan] = []


def _scan(s: str, strict: bool = False) -> _Scan:
    global _recent, _recent_strict
    recent = _recent_strict if strict else _recent
    resume = _START
    for scan in recent:
        if len(scan[0]) <= len(s) and s.startswith(scan[0]):
            resume = scan
            break
    _, frozen, last_valid, literal_start, hex_digits = resume
    stack = list(frozen)
    n = len(s)
    i = len(resume[0])
    while i < n:
        char = s[i]
        state = stack[-1]
        if state == _STRING:  # jump to the next quote or backslash: every other char is valid
            m = _STRING_STOP.search(s, i)
            if m is None:
                last_valid = n - 1
                break
            j = m.start()
            if j > i:
                last_valid = j - 1
            i = j
            if s[j] == '"':
                stack.pop()
                last_valid = j
            else:
                stack.append(_STRING_ESCAPE)
        elif state == _OBJECT_KEY:  # only the closing quote counts (escapes are not special)
            j = s.find('"', i)
            if j < 0:
                break
            stack[-1] = _OBJECT_AFTER_KEY
            i = j
        elif state in (_ROOT, _OBJECT_BEFORE_VALUE, _ARRAY_AFTER_COMMA):
            new = _VALUE_START.get(char)
            if new is not None:
                if char != "-":
                    last_valid = i
                if new == _LITERAL:
                    literal_start = i
                stack[-1] = (
                    _FINISH if state == _ROOT
                    else _OBJECT_AFTER_VALUE if state == _OBJECT_BEFORE_VALUE
                    else _ARRAY_AFTER_VALUE
                )  # fmt: skip
                stack.append(new)
        elif state == _NUMBER_STATE:
            if "0" <= char <= "9":
                last_valid = i
            elif char not in "eE-.":
                stack.pop()
                parent = stack[-1]
                if char == "," or char == "}" or char == "]":
                    if parent == _OBJECT_AFTER_VALUE and char != "]":
                        if char == ",":
                            stack[-1] = _OBJECT_AFTER_COMMA
                        else:
                            last_valid = i
                            stack.pop()
                    elif parent == _ARRAY_AFTER_VALUE and char != "}":
                        if char == ",":
                            stack[-1] = _ARRAY_AFTER_COMMA
                        else:
                            last_valid = i
                            stack.pop()
        elif state == _OBJECT_AFTER_VALUE:
            if char == ",":
                stack[-1] = _OBJECT_AFTER_COMMA
            elif char == "}":
                last_valid = i
                stack.pop()
        elif state == _ARRAY_AFTER_VALUE:
            if char == ",":
                stack[-1] = _ARRAY_AFTER_COMMA
            else:
                last_valid = i
                if char == "]":
                    stack.pop()
        elif state in (_OBJECT_START, _OBJECT_AFTER_COMMA):
            if char == '"':
                stack[-1] = _OBJECT_KEY
            elif char == "}" and state == _OBJECT_START:
                last_valid = i
                stack.pop()
        elif state == _OBJECT_AFTER_KEY:
            if char == ":":
                stack[-1] = _OBJECT_BEFORE_VALUE
        elif state == _ARRAY_START:
            if not strict or char == "]" or (char != "-" and char in _VALUE_START):
                last_valid = i  # strict (v7) counts only a character that opens a value
            if char == "]":
                stack.pop()
            else:
                new = _VALUE_START.get(char)
                if new is not None:
                    if new == _LITERAL:
                        literal_start = i
                    stack[-1] = _ARRAY_AFTER_VALUE
                    stack.append(new)
        elif state == _STRING_ESCAPE:
            stack.pop()
            if char == "u":
                hex_digits = 0
                stack.append(_UNICODE_ESCAPE)
            else:
                last_valid = i
        elif state == _UNICODE_ESCAPE:
            if char in _HEX:
                hex_digits += 1
                if hex_digits == 4:
                    stack.pop()
                    last_valid = i
        elif state == _LITERAL:
            if s[literal_start : i + 1] in _LITERAL_PREFIXES:
                last_valid = i
            else:
                stack.pop()
                parent = stack[-1]
                if parent == _OBJECT_AFTER_VALUE:
                    if char == ",":
                        stack[-1] = _OBJECT_AFTER_COMMA
                    elif char == "}":
                        last_valid = i
                        stack.pop()
                elif parent == _ARRAY_AFTER_VALUE:
                    if char == ",":
                        stack[-1] = _ARRAY_AFTER_COMMA
                    elif char == "]":
                        last_valid = i
                        stack.pop()
        i += 1
    result: _Scan = (s, tuple(stack), last_valid, literal_start, hex_digits)
    kept = [result, *(scan for scan in recent[: _RECENT_SCANS - 1] if scan is not resume)]
    if strict:
        _recent_strict = kept
    else:
        _recent = kept
    return result


def fix_json(text: str, *, strict: bool = False) -> str:
    """The SDK's ``fixJson``: keep the longest completable prefix of ``text`` and close it.

    Works on UTF-16 code units like JavaScript (characters beyond U+FFFF count as two).
    ``strict``: AI SDK 7's, which no longer keeps a half-read first value of an array (``[-`` -> ``[]``).
    """
    pair = False
    s = text
    if not text.isascii():
        try:
            astral = len(text.encode("utf-16-le")) != 2 * len(text)
        except UnicodeEncodeError:  # surrogate code points: pair them up at the end
            astral = pair = True
        if astral:
            s = _ASTRAL.sub(_split_astral, text)
            pair = True
    _, stack, last_valid, literal_start, _ = _scan(s, strict)
    closing = []
    for state in reversed(stack):
        if state == _STRING:
            closing.append('"')
        elif state in _OBJECT_STATES:
            closing.append("}")
        elif state in _ARRAY_STATES:
            closing.append("]")
        elif state == _LITERAL:
            partial = s[literal_start:]
            for word in ("true", "false", "null"):
                if word.startswith(partial):
                    closing.append(word[len(partial) :])
                    break
    result = s[: last_valid + 1] + "".join(closing)
    return _pair_surrogates(result) if pair else result


# --- parsePartialJson ---------------------------------------------------------------------

_VALUE_ENDS: Final = frozenset('}]"el0123456789')


def parse_partial_json(text: str, *, strict: bool = False) -> Any:
    """``parsePartialJson(text).value``: text parsed, else its ``fix_json(strict)`` repair, else MISSING."""
    end = text.rstrip(" \t\n\r")[-1:]
    if end in _VALUE_ENDS:  # anything else cannot be complete JSON: go straight to the repair
        try:
            return parse_json_like_js(text)
        except ValueError:
            pass
    try:
        return parse_json_like_js(fix_json(text, strict=strict))
    except ValueError:
        return MISSING
