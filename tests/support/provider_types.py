"""Validate provider payloads against the official SDKs' own request types, strictly.

The ``anthropic`` and ``openai`` packages describe request bodies as
``TypedDict``s. Validated as they are by pydantic, those types let three kinds
of mistake through:

- unknown keys of a ``TypedDict`` are ignored (a misspelled ``tool_use_idd``
  passes as long as the required keys are there);
- ``Iterable[...]`` fields are validated lazily (pydantic returns a
  ``ValidatorIterator``; nothing inside, e.g. a message's content blocks, is
  checked until someone iterates it);
- many unions also accept the SDKs' *response* models (pydantic
  ``BaseModel``s that allow extra keys), so a request block with a stray key
  can match a response model instead.

``strict_type`` therefore rewrites a request type before building the pydantic
``TypeAdapter``: every ``TypedDict`` becomes a copy with
``extra="forbid"`` and ``strict=True``, every ``Iterable``/``Sequence`` becomes
``list``, ``Annotated`` metadata (the SDKs' ``PropertyInfo``) is dropped, and
response models are removed from unions. What is left is exactly the request
schema the SDK declares: each dict must carry the required keys of one
declared ``TypedDict``, no undeclared key, and values of the declared types.
"""

from __future__ import annotations

import collections.abc
import functools
import types
import typing
from typing import Annotated, Any, Literal, NotRequired, Required, Union, get_args, get_origin

import typing_extensions
from anthropic.types import MessageParam, TextBlockParam
from openai.types.chat import ChatCompletionMessageParam
from openai.types.responses import ResponseInputParam
from pydantic import BaseModel, ConfigDict, TypeAdapter

__all__ = [
    "ANTHROPIC_MESSAGES",
    "ANTHROPIC_SYSTEM",
    "OPENAI_CHAT_MESSAGES",
    "OPENAI_RESPONSES_INPUT",
    "strict_type",
    "validate_anthropic",
    "validate_openai_chat",
    "validate_openai_responses",
    "validate_payload",
]

_STRICT = ConfigDict(extra="forbid", strict=True)
_SEQUENCES = (
    collections.abc.Iterable,
    collections.abc.Sequence,
    collections.abc.Collection,
    list,
    tuple,
)
_MAPPINGS = (collections.abc.Mapping, dict)
_REQUIREDNESS = (Required, NotRequired, typing_extensions.Required, typing_extensions.NotRequired)


def strict_type(annotation: Any) -> Any:
    """``annotation`` rewritten so that pydantic validates it eagerly and rejects unknown keys."""
    rewritten = _rewrite(annotation)
    return typing_extensions.Never if rewritten is _NOT_JSON else rewritten


_NOT_JSON: Any = object()
"""A type no JSON value can be (the SDKs' file-upload types ``IO[bytes]``, ``PathLike``)."""


def _rewrite(annotation: Any) -> Any:
    if typing_extensions.is_typeddict(annotation):
        return _strict_typeddict(annotation)
    origin = get_origin(annotation)
    args = get_args(annotation)
    if origin is Annotated:
        return _rewrite(args[0])
    if origin in (Union, types.UnionType):
        members = [_rewrite(arg) for arg in args if not _is_response_only(arg)]
        members = [member for member in members if member is not _NOT_JSON]
        if not members:
            return _NOT_JSON
        return Union[tuple(members)]  # noqa: UP007 (built from a runtime tuple)
    if origin is Literal or annotation in (Any, object, str, int, float, bool, None, type(None)):
        return annotation
    if origin in _SEQUENCES or _is_sequence_not_str(origin):
        return list[strict_type(args[0]) if args else Any]  # type: ignore[misc]
    if origin in _MAPPINGS:
        key, value = args if args else (Any, Any)
        return dict[strict_type(key), strict_type(value)]  # type: ignore[misc]
    if origin is None and isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return _NOT_JSON  # a response model: not a request shape
    return _NOT_JSON  # IO[bytes], PathLike, ...: file uploads, never JSON


def _is_response_only(annotation: Any) -> bool:
    """A response model, or a union (maybe ``Annotated``) made only of response models."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return True
    origin = get_origin(annotation)
    if origin is Annotated:
        return _is_response_only(get_args(annotation)[0])
    if origin in (Union, types.UnionType):
        return all(_is_response_only(arg) for arg in get_args(annotation))
    return False


def _is_sequence_not_str(origin: Any) -> bool:
    """The SDKs' ``SequenceNotStr`` protocol (any sequence but a string)."""
    return getattr(origin, "__name__", "") == "SequenceNotStr"


_COPIES: dict[type, Any] = {}
_TYPED_DICT: Any = typing_extensions.TypedDict
"""Called with a name made at run time (pydantic wants typing_extensions' TypedDict before 3.12)."""


def _strict_typeddict(cls: type) -> Any:
    """A copy of the ``TypedDict`` ``cls`` that forbids extra keys and has strict field types."""
    if cls in _COPIES:
        return _COPIES[cls]
    # Created empty first and registered, so that a recursive TypedDict refers to its own copy.
    strict = _TYPED_DICT(f"Strict{cls.__name__}", {}, total=False)
    strict.__pydantic_config__ = _STRICT
    _COPIES[cls] = strict
    hints = typing.get_type_hints(cls, include_extras=True)
    fields: dict[str, Any] = {}
    required: set[str] = set()
    for key, hint in hints.items():
        # Requiredness comes from the resolved hints: with postponed annotations the
        # class's own __required_keys__ cannot see the Required[...] markers.
        if _is_required(hint, total=getattr(cls, "__total__", True)):
            required.add(key)
        marker = Required if key in required else NotRequired
        fields[key] = marker[strict_type(_without_requiredness(hint))]
    strict.__annotations__ = fields
    strict.__required_keys__ = frozenset(required)
    strict.__optional_keys__ = frozenset(fields) - frozenset(required)
    return strict


def _is_required(hint: Any, *, total: bool) -> bool:
    while get_origin(hint) is Annotated:
        hint = get_args(hint)[0]
    origin = get_origin(hint)
    if origin in (Required, typing_extensions.Required):
        return True
    if origin in (NotRequired, typing_extensions.NotRequired):
        return False
    return total


def _without_requiredness(hint: Any) -> Any:
    while get_origin(hint) in (*_REQUIREDNESS, Annotated):
        hint = get_args(hint)[0]
    return hint


@functools.cache
def _adapter(annotation: Any) -> TypeAdapter[Any]:
    return TypeAdapter(strict_type(annotation))


ANTHROPIC_MESSAGES: Any = list[MessageParam]
"""``messages`` of ``anthropic.messages.create``: a list of ``anthropic.types.MessageParam``."""
ANTHROPIC_SYSTEM: Any = Union[str, list[TextBlockParam]]  # noqa: UP007
"""``system`` of ``anthropic.messages.create``: a string or ``TextBlockParam``s."""
OPENAI_CHAT_MESSAGES: Any = list[ChatCompletionMessageParam]
"""``messages`` of ``openai.chat.completions.create``."""
OPENAI_RESPONSES_INPUT: Any = ResponseInputParam
"""``input`` of ``openai.responses.create`` (a list of input items)."""


def validate_payload(annotation: Any, payload: Any) -> None:
    """Raise ``pydantic.ValidationError`` unless ``payload`` is strictly an instance of ``annotation``."""
    _adapter(annotation).validate_python(payload)


def validate_anthropic(payload: Any) -> None:
    """``{"system"?: ..., "messages": [...]}`` against the Anthropic SDK's request types.

    Also refuses any top-level key other than ``system`` and ``messages``, and
    ``role: "system"`` inside ``messages`` (system text belongs in ``system``).
    """
    if not isinstance(payload, dict):
        raise TypeError(f"an anthropic payload is a dict, not {type(payload).__name__}")
    unknown = set(payload) - {"system", "messages"}
    if unknown:
        raise KeyError(f"unexpected top-level keys {sorted(unknown)}")
    if "system" in payload:
        validate_payload(ANTHROPIC_SYSTEM, payload["system"])
    validate_payload(ANTHROPIC_MESSAGES, payload["messages"])
    roles = {message["role"] for message in payload["messages"]}
    if not roles <= {"user", "assistant"}:
        raise ValueError(f"anthropic messages must be user or assistant, got roles {sorted(roles)}")


def validate_openai_chat(messages: Any) -> None:
    """A Chat Completions ``messages`` list against ``ChatCompletionMessageParam``."""
    validate_payload(OPENAI_CHAT_MESSAGES, messages)


def validate_openai_responses(items: Any) -> None:
    """A Responses API ``input`` list against ``ResponseInputParam``."""
    validate_payload(OPENAI_RESPONSES_INPUT, items)
