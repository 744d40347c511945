"""The chat surface: the names ``ConversationStore`` answers, each a typed one-line forward to a service.

A store is composed of services by concern (``chats``, ``streams``,
``turns``, ``reads``, ``inbox``, ``operations``); the façade names the
chat-facing use cases once, as ``forward(service, method)``: the attribute
*is* that service's method, with its signature, types and docstring, so
nothing is written twice and a newcomer sees at a glance where each lives.
``ChatSurface`` is the set of forwards both ``ConversationStore`` and
``ShardedStore`` answer (the latter with services that route each call to
the conversation's database); ``Store`` is the protocol they satisfy.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import (
    TYPE_CHECKING,
    Any,
    Concatenate,
    Generic,
    ParamSpec,
    Protocol,
    TypeVar,
    overload,
    runtime_checkable,
)

from chatledger.adapters.store.chats import Chats
from chatledger.adapters.store.inbox import Inbox
from chatledger.adapters.store.reads.reader import Reader
from chatledger.adapters.store.streams.service import Streams
from chatledger.adapters.store.turns.service import Turns

__all__ = ["DEPRECATED", "ChatSurface", "Store", "forward"]

P = ParamSpec("P")
R = TypeVar("R")


class forward(Generic[P, R]):  # lower case: it reads like a function where it is used
    """A façade attribute that is ``service``'s ``method``, bound on each access.

    On the class it is the service's function (so ``help()`` and the docs show
    the one docstring); on an instance, the bound method of that instance's
    service.
    """

    def __init__(self, service: str, method: Callable[Concatenate[Any, P], R]) -> None:
        self.service = service
        self.name = method.__name__
        self.__doc__ = method.__doc__
        self.__wrapped__ = method

    def __set_name__(self, owner: type, name: str) -> None:
        if name != self.name:
            raise TypeError(f"{owner.__name__}.{name} forwards to {self.service}.{self.name}")

    @overload
    def __get__(self, instance: None, owner: type) -> Callable[Concatenate[Any, P], R]: ...

    @overload
    def __get__(self, instance: object, owner: type) -> Callable[P, R]: ...

    def __get__(self, instance: object | None, owner: type) -> Callable[..., R]:
        if instance is None:
            return self.__wrapped__
        bound: Callable[P, R] = getattr(getattr(instance, self.service), self.name)
        return bound


DEPRECATED = {
    **dict.fromkeys(
        ("verify", "seal", "head", "export", "erase", "retain", "rebuild", "catch_up",
         "quarantined", "read_model_counts", "forget_cached", "otel_exporter"),
        "operations",
    ),
    "expire_stream": "streams",
    "expire_streams": "streams",
}  # fmt: skip
"""Names the store answered before its services had them: each still answers, with a
DeprecationWarning naming its new home, for one release."""


@runtime_checkable
class Store(Protocol):
    """What every store answers (``ConversationStore``, ``ShardedStore``): the services and ``close``."""

    tenant: str
    chats: Chats
    streams: Streams
    turns: Turns
    reads: Reader
    inbox: Inbox
    operations: Any

    def close(self) -> None:
        """Release database connections."""


class ChatSurface:
    """The chat-facing use cases every store answers, each a forward to the service that holds it.

    Every method takes the chat id and, optionally, a ``tenant`` (default:
    the one the store was opened with). What operators run is on
    ``operations``; taking a turn for a transport is on ``turns``.
    """

    chats: Chats
    """Writing a conversation: start it, messages, tool outputs, approvals, titles, redactions."""
    streams: Streams
    """A model's answer: open, close and expire streams; ingest recorded ones."""
    reads: Reader
    """The one reader: messages, model messages, the timeline, status, follows."""
    inbox: Inbox
    """What waits across conversations: approvals, continuations, the conversation list."""
    turns: Turns
    """Taking a turn for a transport: record what a request adds, open its answer's stream."""
    operations: Any
    """What operators run: verify, seal, export, erase, retain, rebuild, OTel (``Operations``)."""

    # -- writing a conversation ----------------------------------------------------------
    start_conversation = forward("chats", Chats.start_conversation)
    append_message = forward("chats", Chats.append_message)
    add_tool_output = forward("chats", Chats.add_tool_output)
    respond_to_approval = forward("chats", Chats.respond_to_approval)
    regenerate = forward("chats", Chats.regenerate)
    cut = forward("chats", Chats.cut)
    edit = forward("chats", Chats.edit)
    switch_branch = forward("chats", Chats.switch_branch)
    fork = forward("chats", Chats.fork)
    transact = forward("chats", Chats.transact)
    set_title = forward("chats", Chats.set_title)
    set_metadata = forward("chats", Chats.set_metadata)
    redact = forward("chats", Chats.redact)
    set_owner = forward("chats", Chats.set_owner)
    retire_continuation = forward("chats", Chats.retire_continuation)

    # -- a model's answer -------------------------------------------------------------------
    open_stream = forward("streams", Streams.open_stream)
    close_stream = forward("streams", Streams.close_stream)
    ingest = forward("streams", Streams.ingest)

    # -- reading ------------------------------------------------------------------------------
    messages = forward("reads", Reader.messages)
    model_messages = forward("reads", Reader.model_messages)
    branches = forward("reads", Reader.branches)
    ai_sdk_of = forward("reads", Reader.ai_sdk_of)
    history = forward("reads", Reader.history)
    timeline = forward("reads", Reader.timeline)
    status = forward("reads", Reader.status)
    steering = forward("reads", Reader.steering)
    follow = forward("reads", Reader.follow)
    follow_async = forward("reads", Reader.follow_async)
    version = forward("reads", Reader.version)
    conversation = forward("reads", Reader.conversation)

    # -- across conversations ------------------------------------------------------------------
    pending_approvals = forward("inbox", Inbox.pending_approvals)
    pending_continuations = forward("inbox", Inbox.pending_continuations)
    claim_continuation = forward("inbox", Inbox.claim_continuation)
    list_conversations = forward("inbox", Inbox.list_conversations)

    if not TYPE_CHECKING:  # type checkers keep flagging misspelt names, and point at old callers

        def __getattr__(self, name: str) -> Any:
            """``store.verify(...)`` and the other names that moved to a service: that service's, with a warning.

            Called only for names the store does not have, so real attributes
            never come here; any other missing name raises AttributeError. The
            deprecated names are answered but not listed by ``dir()``.
            """
            service = DEPRECATED.get(name)
            if service is None:
                message = f"{type(self).__name__!r} object has no attribute {name!r}"
                raise AttributeError(message, name=name, obj=self)
            warnings.warn(
                f"store.{name}(...) is deprecated: use store.{service}.{name}(...)",
                DeprecationWarning,
                stacklevel=2,
            )
            return getattr(getattr(self, service), name)
