"""The slice of the ``ConversationStore`` API the benchmarks call, and how the store class is found.

The store class is loaded by import path (``--store module:attr``, default
``chatledger:ConversationStore``) so the benchmarks type-check without seeing
through the editable install, and can be pointed at another implementation.
"""

from __future__ import annotations

import importlib
from typing import Any, Protocol, cast

DEFAULT_STORE = "chatledger:ConversationStore"
USER_ACTOR = "user:alice"
AGENT_ACTOR = "agent:bot"


class Stream(Protocol):
    """An open assistant-message stream."""

    def append(self, chunk: dict[str, Any]) -> object:
        """Append one AI SDK UI message chunk (committed in batches)."""

    def close(self, *, outcome: str) -> object:
        """Commit what is left and close the stream."""


class Store(Protocol):
    """An open conversation store."""

    def start_conversation(self, chat_id: str, *, actor: str) -> object:
        """Create a conversation."""

    def append_message(self, chat_id: str, message: dict[str, Any], *, actor: str) -> object:
        """Append a whole UIMessage."""

    def open_stream(
        self,
        chat_id: str,
        *,
        actor: str,
        user_message: dict[str, Any] | None = None,
        user_actor: str = "system",
    ) -> Stream:
        """Open a stream writing a new assistant message (after ``user_message``, same commit)."""

    def messages(self, chat_id: str) -> list[dict[str, Any]]:
        """The conversation's current UIMessages."""

    def close(self) -> object:
        """Release connections and files."""


class StoreOpener(Protocol):
    """``ConversationStore.open``: URL in, open store out."""

    def __call__(self, url: str) -> Store: ...


def load_opener(spec: str = DEFAULT_STORE) -> StoreOpener:
    """Import ``module:attr`` and return its ``open`` classmethod."""
    module_name, _, attr = spec.partition(":")
    cls: Any = getattr(importlib.import_module(module_name), attr or "ConversationStore")
    return cast(StoreOpener, cls.open)
