"""Shared parts of the AI SDK wire schemas: the base model, JSON value rules, error wording."""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from typing import Annotated, Any, ClassVar, Final, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    JsonValue,
    PlainValidator,
    ValidationError,
    model_validator,
)
from pydantic.alias_generators import to_camel
from pydantic_core import ErrorDetails, PydanticCustomError

__all__ = [
    "Absent",
    "FalseOnly",
    "OptBool",
    "OptFalse",
    "OptInputEncoding",
    "OptProviderMetadata",
    "OptStr",
    "OptToolMetadata",
    "ProviderMetadata",
    "ToolMetadata",
    "TrueOnly",
    "Unknown",
    "WireModel",
    "describe_error",
    "forbidden_key_path",
    "prefixed",
    "refuse_null",
    "show_value",
    "type_name",
]

ProviderMetadata = dict[str, dict[str, JsonValue]]
ToolMetadata = dict[str, JsonValue]

# A decimal this large is read by JavaScript's JSON.parse as Infinity, which zod's
# z.number() refuses: 2**1024 - 2**970 is the first value that rounds up past the
# largest double.
_JS_INFINITY: Final = 2**1024 - 2**970
# json.dumps refuses integers with more digits than this (CPython's int/str limit).
_MAX_DIGITS: Final = sys.get_int_max_str_digits() or 4300
_SERIALISABLE_INT: Final = 10**_MAX_DIGITS

Problem = tuple[str, str, str]
"""Why a value was refused: (sub-path, what was expected, what was found)."""


def type_name(value: object) -> str:
    """Name a value's type for an error message (``null`` for None)."""
    return "null" if value is None else type(value).__name__


def show_value(value: object) -> str:
    """Show a value in an error message: short strings quoted, anything else by its type."""
    if isinstance(value, str):
        return repr(value if len(value) <= 40 else value[:37] + "...")
    return type_name(value)


def _key_path(key: str) -> str:
    plain = key and not any(c in ".[]'\"" or c.isspace() for c in key)
    return f".{key}" if plain else f"[{key!r}]"


def json_problem(value: object, *, zod: bool) -> Problem | None:
    """Why ``value`` is no JSON value (with ``zod``: none zod's ``jsonValueSchema`` takes)."""
    if value is None or isinstance(value, str | bool):
        return None
    if isinstance(value, int):
        if abs(value) >= _SERIALISABLE_INT:
            return ("", "a JSON number", f"an integer of more than {_MAX_DIGITS} digits")
        if zod and abs(value) >= _JS_INFINITY:
            return ("", "a finite number", "a number JavaScript reads as Infinity")
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else ("", "a finite number", repr(value))
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                return ("", "an object with string keys", f"a key of type {type_name(key)}")
            if type(item) is str:
                continue  # the usual leaf, without a call
            # zod's z.record skips a "__proto__" key without checking its value.
            problem = json_problem(item, zod=zod and key != "__proto__")
            if problem is not None:
                return (_key_path(key) + problem[0], problem[1], problem[2])
        return None
    if isinstance(value, list):
        for index, item in enumerate(value):
            if type(item) is str:
                continue
            problem = json_problem(item, zod=zod)
            if problem is not None:
                return (f"[{index}]{problem[0]}", problem[1], problem[2])
        return None
    return ("", "a JSON value", type_name(value))


def _refuse(problem: Problem) -> PydanticCustomError:
    subpath, expected, got = problem
    return PydanticCustomError(
        "wire",
        "must be {expected}, got {got}",
        {"subpath": subpath, "expected": expected, "got": got},
    )


def _record_problem(value: Any, item_problem: Callable[[Any], Problem | None]) -> Problem | None:
    if not isinstance(value, dict):
        return ("", "an object", type_name(value))
    for key, item in value.items():
        if not isinstance(key, str):
            return ("", "an object with string keys", f"a key of type {type_name(key)}")
        # zod's z.record skips a "__proto__" key without checking its value.
        problem = json_problem(item, zod=False) if key == "__proto__" else item_problem(item)
        if problem is not None:
            return (_key_path(key) + problem[0], problem[1], problem[2])
    return None


def _json_item(item: Any) -> Problem | None:
    return json_problem(item, zod=True)


def _tool_metadata(value: Any) -> Problem | None:
    return _record_problem(value, _json_item)


def _provider_metadata(value: Any) -> Problem | None:
    return _record_problem(value, _tool_metadata)


def _checked(find: Callable[[Any], Problem | None], expected: str | None) -> PlainValidator:
    """Validate with ``find``; with ``expected``, the field is optional and null is refused."""

    def run(value: Any) -> Any:
        if value is None and expected is not None:
            raise _refuse(("", expected, "null"))
        problem = find(value)
        if problem is not None:
            raise _refuse(problem)
        return value

    return PlainValidator(run)


def refuse_null(expected: str) -> BeforeValidator:
    """A validator for an optional field: zod's ``.optional()`` takes absence, never null."""

    def check(value: Any) -> Any:
        if value is None:
            raise _refuse(("", expected, "null"))
        return value

    return BeforeValidator(check)


def _present(value: Any) -> None:
    raise PydanticCustomError("absent", "must be absent")


def _only(wanted: bool) -> AfterValidator:
    def check(value: bool | None) -> bool | None:
        if value is not None and value is not wanted:
            raise _refuse(("", str(wanted).lower(), str(value).lower()))
        return value

    return AfterValidator(check)


def prefixed(prefix: str) -> AfterValidator:
    """A validator for a ``type`` family such as ``data-*`` or ``tool-*``."""

    def check(value: str) -> str:
        if not value.startswith(prefix):
            raise _refuse(("", f"a string starting with {prefix!r}", show_value(value)))
        return value

    return AfterValidator(check)


Unknown = Annotated[JsonValue, _checked(lambda value: json_problem(value, zod=False), None)]
"""zod ``z.unknown()``: any JSON value, null included."""
OptStr = Annotated[str | None, refuse_null("a string")]
OptBool = Annotated[bool | None, refuse_null("a boolean")]
OptFalse = Annotated[bool | None, refuse_null("false"), _only(False)]
TrueOnly = Annotated[bool, _only(True)]
FalseOnly = Annotated[bool, _only(False)]
OptInputEncoding = Annotated[Literal["json", "text"] | None, refuse_null("'json' or 'text'")]
OptProviderMetadata = Annotated[
    ProviderMetadata | None, _checked(_provider_metadata, "an object of provider objects")
]
OptToolMetadata = Annotated[ToolMetadata | None, _checked(_tool_metadata, "an object")]
Absent = Annotated[None, BeforeValidator(_present)]
"""zod ``z.never().optional()``: the key must not be there at all."""


class WireModel(BaseModel):
    """Base of the wire models: frozen, strict, camelCase on the wire, unknown keys kept."""

    model_config = ConfigDict(
        frozen=True,
        strict=True,
        alias_generator=to_camel,
        populate_by_name=True,
        extra="allow",
        use_attribute_docstrings=True,
    )

    _wire_keys: ClassVar[frozenset[str]] = frozenset()

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        cls._wire_keys = frozenset(f.alias or n for n, f in cls.model_fields.items())

    @model_validator(mode="before")
    @classmethod
    def _unknown_keys_hold_json(cls, data: Any) -> Any:
        # Unknown keys are kept (zod looseObject), so they must at least be JSON.
        if isinstance(data, dict):
            for key, value in data.items():
                if key in cls._wire_keys:
                    continue
                if not isinstance(key, str):
                    raise _refuse(
                        ("", "an object with string keys", f"a key of type {type_name(key)}")
                    )
                problem = json_problem(value, zod=False)
                if problem is not None:
                    raise _refuse((_key_path(key) + problem[0], problem[1], problem[2]))
        return data


def forbidden_key_path(value: object) -> str | None:
    """Where ``value`` holds a key the AI SDK's secure JSON parser refuses, or None.

    The SDK parses streamed chunks with ``secureJsonParse``: an object with an own
    ``__proto__`` key, or a ``constructor`` object with a ``prototype`` key, fails
    the whole chunk (``AI_JSONParseError``).
    """
    # Once per chunk, over every value: only containers are looked into, and a key's path
    # is spelled out only when something was found.
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "__proto__" or (
                key == "constructor" and isinstance(item, dict) and "prototype" in item
            ):
                return _step(key)
            if isinstance(item, dict | list):
                inner = forbidden_key_path(item)
                if inner is not None:
                    return _step(key) + inner
    elif isinstance(value, list):
        for index, item in enumerate(value):
            if isinstance(item, dict | list):
                inner = forbidden_key_path(item)
                if inner is not None:
                    return f"[{index}]{inner}"
    return None


def _step(key: object) -> str:
    return _key_path(key) if isinstance(key, str) else f"[{key!r}]"


_EXPECTED: Final = {
    "string_type": "a string",
    "bool_type": "a boolean",
    "dict_type": "an object",
    "model_type": "an object",
    "model_attributes_type": "an object",
    "list_type": "an array",
}


def _where(loc: tuple[int | str, ...], subpath: str = "") -> str:
    text = "".join(f"[{p}]" if isinstance(p, int) else _key_path(p) for p in loc) + subpath
    return text[1:] if text.startswith(".") else text


def describe_error(error: ValidationError, whole: str = "value") -> str:
    """Say in one line what is wrong, from the first problem pydantic found.

    ``whole`` names the validated object when the problem is with the object itself.
    """
    detail: ErrorDetails = error.errors(include_url=False)[0]
    kind, ctx = detail["type"], detail.get("ctx") or {}
    got = show_value(detail.get("input"))
    where = _where(detail["loc"], str(ctx.get("subpath", "")))
    field = f"field '{where}'" if where else whole
    if kind == "missing":
        return f"missing required field '{where}'"
    if kind == "absent":
        return f"{field} must be absent"
    if kind == "wire":
        return f"{field} must be {ctx['expected']}, got {ctx['got']}"
    if kind in _EXPECTED:
        return f"{field} must be {_EXPECTED[kind]}, got {got}"
    if kind == "literal_error":
        return f"{field} must be {ctx['expected']}, got {got}"
    if kind == "rule":
        return str(detail["msg"])
    return f"{field} is invalid: {detail['msg']}"
