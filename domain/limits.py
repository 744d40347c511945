"""What the store can accept: sizes, nesting, and values that have a UTF-8 JSON form (docs/behaviour.md §3.4)."""

from __future__ import annotations

import json
import re
import reprlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from chatledger.domain.errors import (
    InvalidChunkError,
    InvalidInputError,
    InvalidMessageError,
    InvalidToolOutputError,
    OversizedChunkError,
    OversizedInputError,
)

__all__ = [
    "NAME_LIMIT",
    "PART_ALLOWANCE",
    "TITLE_LIMIT",
    "Limits",
    "NotStorableError",
    "check_choice",
    "check_flag",
    "check_moment",
    "check_name",
    "check_names",
    "check_position",
    "check_text",
    "check_title",
    "chunk_cost",
    "delta_text",
    "json_size",
]

PART_ALLOWANCE = 16
"""Bytes a chunk that is not a delta adds to its message besides its JSON (keys its part may gain)."""
_DELTA_KEYS = {
    "text-delta": "delta",
    "reasoning-delta": "delta",
    "tool-input-delta": "inputTextDelta",
}


class NotStorableError(InvalidInputError, ValueError):
    """The value has no UTF-8 JSON form (lone surrogate, NaN, non-JSON type, too deep)."""


_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")
"""What a name may not hold: C0/C1 control characters (NUL among them) and lone surrogates."""
_UNSTORABLE_TEXT = re.compile("[\x00\ud800-\udfff]")
"""What free text may not hold: NUL (no SQL text column takes it) and lone surrogates (no UTF-8 form)."""

# Fields of a chunk or message part whose value is a name that read models keep in a column.
_NAME_KEYS = ("toolCallId", "toolName", "approvalId", "messageId")


NAME_LIMIT = 256
"""The longest name (chat id, message id, tool call id, approval id, tool name, tenant, actor), in characters."""


def check_name(what: str, value: object, *, optional: bool = False) -> None:
    """Refuse a name (id, tenant, actor, tool name) that is not a plain, printable, short string.

    Names end up in SQL text columns, in logs and on pages: a value that is
    not a string, is empty or longer than ``NAME_LIMIT`` characters, or holds
    NUL, another control character or a lone UTF-16 surrogate is refused here,
    before anything is recorded, with an error that names the field.
    """
    if value is None and optional:
        return
    problem = _name_problem(what, value)
    if problem is not None:
        raise InvalidInputError(problem)


def _name_problem(what: str, value: object) -> str | None:
    """What is wrong with a name, in words, or None."""
    if not isinstance(value, str):
        return f"{what} must be a string, not {type(value).__name__}"
    if not value:
        return f"{what} must not be empty"
    if len(value) > NAME_LIMIT:
        return (
            f"{what} {_shown(value[:40])}... has {len(value)} characters; names (chat, message, "
            f"tool call and approval ids, tool names, tenants, actors) have at most {NAME_LIMIT}"
        )
    bad = _CONTROL.search(value)
    if bad is not None:
        return (
            f"{what} {_shown(value)} holds the control character or lone surrogate "
            f"U+{ord(bad.group()):04X} at index {bad.start()}; use printable characters only"
        )
    return None


def check_names(*, optional: bool = False, **names: object) -> None:
    """``check_name`` for each keyword in order, the keyword naming the field (``chat_id``: chat id)."""
    for key, value in names.items():
        check_name(key.replace("_", " "), value, optional=optional)


def check_text(what: str, value: object) -> None:
    """Refuse free text (a reason, an error text) that holds NUL or a lone surrogate (None passes)."""
    if value is None:
        return
    if not isinstance(value, str):
        raise InvalidInputError(f"{what} must be a string, not {type(value).__name__}")
    bad = _UNSTORABLE_TEXT.search(value)
    if bad is not None:
        raise InvalidInputError(
            f"{what} holds U+{ord(bad.group()):04X} at index {bad.start()}, "
            "which cannot be stored (NUL or a lone UTF-16 surrogate)"
        )


MAX_POSITION = 2**63 - 1
"""The largest version, position or count a SQL column can compare with."""


def check_position(what: str, value: object, *, optional: bool = False) -> None:
    """Refuse a version, position or count that is not a whole number from 0 to ``MAX_POSITION``."""
    if value is None and optional:
        return
    if type(value) is not int or not 0 <= value <= MAX_POSITION:
        raise InvalidInputError(
            f"{what} must be a whole number from 0 to {MAX_POSITION}, not {_shown(value)}"
        )


def check_flag(what: str, value: object) -> None:
    """Refuse a yes/no setting that is not ``True`` or ``False``."""
    if type(value) is not bool:
        raise InvalidInputError(f"{what} must be true or false, not {_shown(value)}")


def check_moment(what: str, value: object, *, optional: bool = False) -> None:
    """Refuse a point in time that is not a ``datetime``."""
    if value is None and optional:
        return
    if not isinstance(value, datetime):
        raise InvalidInputError(f"{what} must be a datetime, not {type(value).__name__}")


TITLE_LIMIT = 200
"""The longest title, in characters."""


def check_title(title: object) -> str | None:
    """A conversation's title with its whitespace runs made single spaces (None stays None).

    Refuses a title that is not a string, is blank, or is over ``TITLE_LIMIT`` characters.
    """
    if title is None:
        return None
    if not isinstance(title, str):
        raise InvalidInputError(f"the title must be a string or None, not {type(title).__name__}")
    title = " ".join(title.split())
    if not title:
        raise InvalidInputError("the title must not be blank (give None to clear it)")
    if len(title) > TITLE_LIMIT:
        raise InvalidInputError(
            f"the title has {len(title)} characters; at most {TITLE_LIMIT} are allowed"
        )
    return title


def check_choice(what: str, value: object, allowed: Iterable[str]) -> None:
    """Refuse a value that is not one of ``allowed``."""
    choices = tuple(allowed)
    if not isinstance(value, str) or value not in choices:
        raise InvalidInputError(f"{what} must be one of {', '.join(choices)}, not {_shown(value)}")


_SHORT = reprlib.Repr()
_SHORT.maxlevel, _SHORT.maxstring, _SHORT.maxother = 3, 60, 60


def _shown(value: object) -> str:
    """A short printable (ASCII) form of a refused value, however large or deep."""
    return _SHORT.repr(value).encode("ascii", "backslashreplace").decode("ascii")[:80]


def _check_names(fields: Mapping[str, Any], where: str) -> str | None:
    """The first problem with a name field of a chunk or part (present and not null), or None."""
    for key in _NAME_KEYS:
        value = fields.get(key)
        if value is not None:
            problem = _name_problem(f"{where}{key}", value)
            if problem is not None:
                return problem
    return None


_COMPACT_JSON = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode
"""``json.dumps`` with these options, without building an encoder per call."""


def json_size(value: Any, *, max_depth: int = 100) -> int:
    """Bytes of ``value`` as compact UTF-8 JSON; NotStorableError if it has no such form."""
    if not _shallow_enough(value, max_depth):
        raise NotStorableError(f"nested more than {max_depth} levels deep")
    try:
        text = _COMPACT_JSON(value)
        return len(text) if text.isascii() else len(text.encode())
    except UnicodeEncodeError:
        raise NotStorableError(
            "a string holds a lone UTF-16 surrogate, which UTF-8 cannot store"
        ) from None
    except (TypeError, ValueError, RecursionError) as error:
        raise NotStorableError(f"not a JSON value ({_describe(error)})") from None


def _shallow_enough(value: Any, max_depth: int) -> bool:
    """Whether containers nest at most ``max_depth`` deep (iterative: deep input cannot crash it)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        if depth >= max_depth:
            return False
        stack.extend(
            (child, depth + 1) for child in children if isinstance(child, (dict, list, tuple))
        )
    return True


def delta_text(chunk: Mapping[str, Any]) -> str | None:
    """The text a delta chunk adds, or None for other chunks."""
    kind = chunk.get("type")
    key = _DELTA_KEYS.get(kind) if isinstance(kind, str) else None
    value = chunk.get(key) if key else None
    return value if isinstance(value, str) else None


def chunk_cost(chunk: Mapping[str, Any]) -> int:
    """What a chunk adds to its message's size, as counted against ``max_message_bytes``.

    A delta adds its text's length; any other chunk counts as its JSON size
    plus a small allowance for the keys the part it makes may add. Live
    writes and replays count the same way, so they agree on the total.
    """
    text = delta_text(chunk)
    return len(text) if text is not None else json_size(chunk) + PART_ALLOWANCE


@dataclass(frozen=True)
class Limits:
    """Largest chunk, message and tool output accepted (bytes of JSON), and deepest nesting."""

    max_chunk_bytes: int = 1_000_000
    max_message_bytes: int = 4_000_000
    """Applies to whole messages and to what a stream writes into its message."""
    max_tool_output_bytes: int = 1_000_000
    max_depth: int = 100
    """Deepest nesting of objects and arrays (the JSON encoder refuses much deeper input)."""

    def chunk_cost(self, chunk: Any) -> int:
        """Check a chunk is storable and within limits; return its ``chunk_cost``."""
        if type(chunk) is not dict and not isinstance(chunk, Mapping):
            return 0  # the schema check refuses it with a better reason
        kind = chunk.get("type")
        kind_name = kind if isinstance(kind, str) else None
        try:
            size = json_size(chunk, max_depth=self.max_depth)
        except NotStorableError as error:
            raise InvalidChunkError(error.args[0], chunk_type=kind_name) from None
        problem = _check_names(chunk, "")
        if problem is not None:
            raise InvalidChunkError(problem, chunk_type=_printable(kind_name))
        if size > self.max_chunk_bytes:
            raise OversizedChunkError("chunk", size, self.max_chunk_bytes, chunk_type=kind_name)
        if kind == "tool-output-available" and size > self.max_tool_output_bytes:
            # The output's JSON is part of the chunk's, which passed: only a chunk over the
            # output limit can hold an output over it.
            self.check_tool_output(
                chunk.get("output"), tool_call_id=chunk.get("toolCallId"), chunk_type=kind_name
            )
        text = delta_text(chunk)
        return len(text) if text is not None else size + PART_ALLOWANCE

    def check_tool_output(
        self, output: Any, *, tool_call_id: str | None = None, chunk_type: str | None = None
    ) -> None:
        """Refuse a tool output over its limit or without a JSON form."""
        try:
            size = json_size(output, max_depth=self.max_depth)
        except NotStorableError as error:
            raise InvalidToolOutputError(tool_call_id or "", error.args[0]) from None
        if size > self.max_tool_output_bytes:
            oversized = OversizedInputError if chunk_type is None else OversizedChunkError
            raise oversized(
                "tool output",
                size,
                self.max_tool_output_bytes,
                chunk_type=chunk_type,
                tool_call_id=tool_call_id,
            )

    def message_size(self, message: Any) -> int:
        """Check a whole message is storable and within the limit; return its size."""
        message_id = message.get("id") if isinstance(message, Mapping) else None
        try:
            size = json_size(message, max_depth=self.max_depth)
        except NotStorableError as error:
            raise InvalidMessageError(error.args[0], message_id=_printable(message_id)) from None
        problem = _message_name_problem(message)
        if problem is not None:
            raise InvalidMessageError(problem, message_id=_printable(message_id))
        if size > self.max_message_bytes:
            raise OversizedInputError("message", size, self.max_message_bytes)
        return size

    def check_value(self, what: str, value: Any) -> None:
        """Refuse an id or metadata that cannot be stored."""
        try:
            json_size(value, max_depth=self.max_depth)
        except NotStorableError as error:
            raise InvalidInputError(f"{what} refused: {error.args[0]}") from None

    def keepable(self, chunk: Any) -> Any:
        """What of a refused input can be kept in the log: itself, or a short stand-in."""
        try:
            size = json_size(chunk, max_depth=self.max_depth)
        except NotStorableError as error:
            return {"unserialisable": str(error), "pythonType": type(chunk).__name__}
        if size > self.max_chunk_bytes:
            kind = chunk.get("type") if isinstance(chunk, Mapping) else None
            return {"omitted": True, "type": _printable(kind), "bytes": size}
        return chunk


def _message_name_problem(message: Any) -> str | None:
    """The first name in a message (its id, its parts' tool call ids and names) that cannot be stored."""
    if not isinstance(message, Mapping):
        return None
    message_id = message.get("id")
    if message_id is not None:
        problem = _name_problem("message id", message_id)
        if problem is not None:
            return problem
    parts = message.get("parts")
    if not isinstance(parts, list):
        return None
    for index, part in enumerate(parts):
        if not isinstance(part, Mapping):
            continue
        kind = part.get("type")
        if isinstance(kind, str) and _CONTROL.search(kind) is not None:
            return f"parts[{index}].type {_shown(kind)} holds a control character or lone surrogate"
        problem = _check_names(part, f"parts[{index}].")
        approval = part.get("approval")
        if problem is None and isinstance(approval, Mapping):
            problem = _check_names({"approvalId": approval.get("id")}, f"parts[{index}].approval.")
        if problem is not None:
            return problem
    return None


def _printable(value: Any) -> str | None:
    """A str that is safe to store and print, or None."""
    if not isinstance(value, str):
        return None
    return value.encode("utf-8", "backslashreplace").decode("utf-8")[:200]


def _describe(error: BaseException) -> str:
    return "too deeply nested" if isinstance(error, RecursionError) else str(error)[:200]
