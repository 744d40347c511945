"""Builders for the messages and chunks tests write again and again.

One place for the AI SDK shapes every test speaks (a user UIMessage, an
assistant message, text chunks), so a change of shape is made once.
"""

from __future__ import annotations

from typing import Any

Json = dict[str, Any]


def user(message_id: str, text: str = "hi") -> Json:
    """A user UIMessage with one text part."""
    return {"id": message_id, "role": "user", "parts": [{"type": "text", "text": text}]}


def assistant(message_id: str, *parts: Json) -> Json:
    """An assistant UIMessage with ``parts``."""
    return {"id": message_id, "role": "assistant", "parts": list(parts)}


def delta(text: str, part_id: str = "t") -> Json:
    """One ``text-delta`` chunk of text part ``part_id``."""
    return {"type": "text-delta", "id": part_id, "delta": text}


def text_chunks(part_id: str, *deltas: str) -> list[Json]:
    """A whole text part as chunks: ``text-start``, one ``text-delta`` per delta, ``text-end``."""
    return [
        {"type": "text-start", "id": part_id},
        *(delta(d, part_id) for d in deltas),
        {"type": "text-end", "id": part_id},
    ]


def opened_text_stream(store: Any, chat: str) -> Any:
    """A new conversation ``chat`` with a user message and an answer's stream open on a text
    part ``t`` (``start``, ``start-step``, ``text-start`` committed): the stream writer."""
    store.start_conversation(chat)
    store.append_message(chat, user("u1"))
    stream = store.open_stream(chat)
    for chunk in ({"type": "start"}, {"type": "start-step"}, {"type": "text-start", "id": "t"}):
        stream.append(chunk)
    stream.flush()
    return stream
