"""Which forks an erasure takes with it: every fork made from the conversation (they share its messages)."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from chatledger.domain.branch_events import ForkMade
from chatledger.domain.errors import ConversationErasedError, StoredDataError

__all__ = ["forks_of"]


def forks_of(log: Any, key: UUID) -> list[tuple[str, str]]:
    """(tenant, chat id) of each fork the conversation ``key`` records (``ForkMade``), in order."""
    forks: list[tuple[str, str]] = []
    for stored in log.select_events(key):
        if not stored.topic.endswith(":ForkMade"):
            continue  # decode only what may name a fork
        try:
            event = log.decode(stored)
        except (ConversationErasedError, StoredDataError):
            continue
        if isinstance(event, ForkMade):
            forks.append((event.fork_tenant, event.fork_chat_id))
    return forks
