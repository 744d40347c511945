"""Closing the streams whose writers died (docs/behaviour.md §7.1): the I/O around ``domain.lease``.

A stream's writer renews its lease by committing (see ``StreamWriter``); a
writer that died (its process killed mid-answer) stops renewing, and its
stream would stay open forever: resumes would never end and every new turn
would be refused. Whoever notices first closes it as ``interrupted``:

- a new turn on the conversation (``open_stream``, ``append_message``, ``POST /api/chat``),
- a follower waiting on it (``follow``, ``GET /api/chat/{id}/stream``, the WebSocket resume),
- the periodic sweep of ``chatledger serve`` and ``chatledger worker``.

Each loads the conversation, asks the domain whether the lease ran out, and
appends the close with the usual version check: of several processes that
notice at once, one close is recorded; the others find the stream closed
when they decide again, and record nothing.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable
from datetime import datetime, timedelta

from chatledger.adapters.store.unit_of_work import UnitOfWork
from chatledger.domain.aggregate import Conversation
from chatledger.domain.errors import ConversationErasedError
from chatledger.projections.listing import MAX_LIMIT, ConversationList, ListQuery

__all__ = ["Clock", "expire_stream", "expire_streams", "process_name"]

Clock = Callable[[], datetime]
"""What the lease decisions take as now (UTC, aware); injectable for tests."""


def process_name(role: str = "chatledger") -> str:
    """``role:host:pid``: who a process is in the audit (e.g. the closer of an expired stream)."""
    return f"{role}:{socket.gethostname()}:{os.getpid()}"


def expire_stream(
    uow: UnitOfWork,
    tenant: str,
    chat_id: str,
    *,
    clock: Clock,
    default_lease_seconds: float,
    actor: str,
    noticed_by: str,
    stream_id: str | None = None,
) -> bool:
    """Close the conversation's open stream (or only ``stream_id``) if its lease ran out; whether it did.

    The clock is read inside the decision, so a retry after a version clash
    judges the new state at a new moment.
    """

    def decide(conversation: Conversation) -> bool:
        return conversation.expire_stream(
            now=clock(),
            default_lease_seconds=default_lease_seconds,
            actor=actor,
            noticed_by=noticed_by,
            stream_id=stream_id,
        )

    _, events, _ = uow.act(tenant, chat_id, decide)
    return bool(events)


def expire_streams(
    uow: UnitOfWork,
    list_conversations: Callable[[ListQuery], ConversationList],
    tenant: str,
    *,
    clock: Clock,
    default_lease_seconds: float,
    actor: str,
    noticed_by: str,
) -> list[str]:
    """The sweep: close every stream of ``tenant`` whose lease ran out; the chat ids closed.

    Only conversations listed as ``streaming`` and unchanged for some time are
    loaded (the list read model says which): a stream written to within the
    shortest lease cannot have expired. That bound is ``default_lease_seconds``
    capped at 1 s, so streams that asked for a shorter lease are still found.
    """
    quiet_since = clock() - timedelta(seconds=min(default_lease_seconds, 1.0))
    closed: list[str] = []
    cursor: str | None = None
    while True:
        page = list_conversations(
            ListQuery(tenant, None, "streaming", quiet_since, None, MAX_LIMIT, cursor)
        )
        for summary in page.conversations:
            try:
                expired = expire_stream(
                    uow,
                    tenant,
                    summary.chat_id,
                    clock=clock,
                    default_lease_seconds=default_lease_seconds,
                    actor=actor,
                    noticed_by=noticed_by,
                )
            except ConversationErasedError:
                continue  # erased since the list was read: no stream left to close
            if expired:
                closed.append(summary.chat_id)
        cursor = page.next_cursor
        if cursor is None:
            return closed
