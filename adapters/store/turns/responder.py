"""The model port: what answers a conversation (a ``Responder``) and what it is asked (a ``ResponderRequest``).

A responder is given the conversation as the store holds it (its UIMessages,
after the request's user message, approvals and tool outputs were recorded,
as every view shows them) and the trigger, and yields UI message chunks of
the conversation's AI SDK major: what ``streamText(...).toUIMessageStream()``
sends. The turn runner stores every chunk and hands the client what it must
get; the responder never touches the store. It may be an async generator (a
model SDK with an async client) or a plain generator (a blocking client: the
runner iterates it in a worker thread). Implementations live in
``chatledger.adapters.responders``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

__all__ = ["Chunk", "Responder", "ResponderRequest", "actor_of"]

Chunk = dict[str, Any]


@dataclass(frozen=True)
class ResponderRequest:
    """What a responder is asked to answer."""

    chat_id: str
    """The conversation."""
    tenant: str
    """Its tenant."""
    messages: list[dict[str, Any]]
    """The conversation's UIMessages as stored now (a continued assistant message is the last one),
    as the model reads them: a compaction's summary (a system message) in place of its range."""
    trigger: str
    """``submit-message`` (a new user message), ``regenerate-message`` or ``continuation``
    (the same assistant message continues after approvals or tool outputs)."""
    message_id: str
    """The id of the assistant message being written (on a continuation: the continued one)."""
    body: dict[str, Any] = field(default_factory=dict)
    """The request's JSON body as the client sent it (custom ``body`` fields of the transport too)."""
    ai_sdk: int = 6
    """The AI SDK major the conversation speaks (6 or 7): the chunks to write are that version's."""


@runtime_checkable
class Responder(Protocol):
    """Answers a conversation with a stream of UI message chunks (dicts)."""

    def respond(self, request: ResponderRequest) -> AsyncIterator[Chunk] | Iterator[Chunk]:
        """Yield the chunks of the answer; an exception ends the stream with an ``error`` chunk."""
        ...


def actor_of(responder: Responder) -> str:
    """Who a responder is in the audit: its ``actor`` attribute, else ``agent:responder``."""
    return str(getattr(responder, "actor", "agent:responder"))
