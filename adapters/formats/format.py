"""What every format module gives: ``Imported`` and ``Exported`` values, and the ``Format`` record.

A format's ``read`` turns a value in that format (parsed JSON, or the
framework's own objects) into chatledger UIMessages; its ``write`` turns a
conversation's UIMessages into that format. Both are pure and both name what
they drop in a ``LossReport``. The store-facing calls are in ``service``.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from chatledger.adapters.formats.losses import LossReport
from chatledger.domain.errors import InvalidInputError
from chatledger.domain.timeline import TimelineEntry

__all__ = [
    "Exported",
    "Format",
    "History",
    "Imported",
    "Json",
    "Step",
    "ToolOutput",
    "json_value",
    "message_list",
]

Json = dict[str, Any]

History = Callable[[list[str]], Iterable[TimelineEntry]]
"""The conversation's audit entries of some kinds (``store.history(chat, kinds=...)``)."""


@dataclass(frozen=True)
class ToolOutput:
    """An import step answering a tool call already imported (recorded as a tool output)."""

    call_id: str
    output: Any = None
    error_text: str | None = None
    """Set for an ``output-error`` (the call failed)."""


Step = Json | ToolOutput
"""One import step, in order: a UIMessage to append, or a tool call's answer."""


@dataclass
class Imported:
    """What a format's value becomes in chatledger, in order, with what the reading dropped."""

    steps: list[Step]
    report: LossReport
    ai_sdk: int | None = None
    """The AI SDK major the messages need (None: any; the store's default)."""
    title: str | None = None
    """A title the source gave the conversation, if any."""

    @property
    def messages(self) -> list[Json]:
        """The UIMessages appended (without the tool outputs given after them)."""
        return [step for step in self.steps if isinstance(step, dict)]


@dataclass
class Exported:
    """A conversation written in a format (a JSON value), with what the writing dropped."""

    value: Any
    report: LossReport


@dataclass(frozen=True)
class Format:
    """One format chatledger imports from and exports to."""

    name: str
    """Its name (``--format``)."""
    summary: str
    """One line: what it is."""
    read: Callable[[Any], Imported]
    """A value in the format (parsed JSON) -> UIMessages."""
    write: Callable[[list[Json], int, History], Exported] | None
    """(a conversation's UIMessages, its AI SDK major, its audit) -> the value in the format
    (None: written by the store itself, as the bundle is)."""


def json_value(value: Any, what: str) -> Any:
    """A private JSON copy of ``value`` (InvalidInputError naming ``what`` when it is not JSON)."""
    try:
        return json.loads(json.dumps(value, allow_nan=False))
    except (TypeError, ValueError) as error:
        raise InvalidInputError(f"{what} must be JSON: {error}") from None


def message_list(value: Any, what: str, key: str = "messages") -> list[Any]:
    """The list a file holds: the value itself, or its ``key`` field (InvalidInputError otherwise)."""
    if isinstance(value, dict) and isinstance(value.get(key), list):
        value = value[key]
    if not isinstance(value, list):
        raise InvalidInputError(
            f"{what} must be a JSON array (or an object with a {key!r} array), "
            f"not {type(value).__name__}"
        )
    return copy.deepcopy(value)
