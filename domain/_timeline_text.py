"""Shared helpers of the audit timeline (``timeline``): short, printable text and state look-ups.

The text helpers shape ids, quotes, previews and the one-line summary; the
look-ups find a tool part or the open stream in the state before an event.
"""

from __future__ import annotations

import json
import unicodedata
from typing import Any, Final

from chatledger.domain.conversation import ConversationState
from chatledger.domain.events import ConversationEvent
from chatledger.domain.tool_parts import tool_name

SUMMARY_LIMIT: Final = 160
"""Longest summary, in characters."""

_Described = tuple[str, dict[str, Any], tuple[str, ...]]
"""What a describer returns: the summary, the details and the marks."""


# -- state look-ups ---------------------------------------------------------------


def _tool(state: ConversationState, call_id: Any) -> tuple[dict[str, Any] | None, str | None]:
    """The tool part with this id in ``state`` and its message's id, or (None, None)."""
    if not isinstance(call_id, str):
        return None, None
    try:
        where = state.tool_index.get(call_id)  # the state's own index (built once, kept up to date)
        if where is None:
            return None, None
        message = state.messages[where[0]]
        part: dict[str, Any] = message["parts"][where[1]]
    except (LookupError, TypeError, AttributeError):  # a state that does not fit the event
        return None, None
    return part, message.get("id")


def _name(part: dict[str, Any] | None) -> str | None:
    try:
        return tool_name(part) if part is not None else None
    except (KeyError, ValueError):
        return None


def _stream_matches(state: ConversationState, stream_id: str) -> bool:
    return state.stream is not None and state.stream.stream_id == stream_id


def _stream_message_id(state: ConversationState) -> Any:
    assert state.stream is not None
    index = state.stream.message_index
    return state.messages[index].get("id") if 0 <= index < len(state.messages) else None


# -- text -------------------------------------------------------------------------


def _call(part: dict[str, Any] | None, call_id: Any) -> str:
    return _named_call(_name(part), call_id)


def _named_call(name: str | None, call_id: Any) -> str:
    """```name` (call_id)``, or ``call_id`` alone when the tool is unknown."""
    return f"`{_id(name)}` ({_id(call_id)})" if name is not None else _id(call_id)


def _who(event: ConversationEvent) -> str:
    return _id(event.actor) if event.actor else "someone"


def _id(value: Any) -> str:
    return _clip(value if isinstance(value, str) else str(value), 40)


def _quote(text: str, limit: int) -> str:
    return f'"{_clip(" ".join(text.split()), limit)}"'


def _listed(ids: list[Any], most: int = 3) -> str:
    shown = ", ".join(_id(value) for value in ids[:most])
    return shown + (", …" if len(ids) > most else "")


def _preview(value: Any, limit: int) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return _clip(text, limit)


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[: max(limit - 1, 0)] + "…"


def _line(text: str) -> str:
    """``text`` on one line of at most ``SUMMARY_LIMIT`` characters, safe to print and export.

    Whitespace runs become one space; control characters and bidirectional
    overrides become U+FFFD, lone surrogates "?".
    """
    text = " ".join(text.split())
    if not text.isprintable():
        text = "".join(_UNSAFE.get(c, c) if unicodedata.category(c) != "Cc" else "�" for c in text)
        text = text.encode("utf-8", "replace").decode("utf-8")  # lone surrogates -> "?"
    return _clip(text, SUMMARY_LIMIT)


_UNSAFE: Final = {c: "�" for c in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"}
"""Bidirectional overrides, which could make a summary read differently than it is."""
