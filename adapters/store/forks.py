"""Forking a conversation (``ConversationStore.fork``), and what reaches a conversation's forks.

A fork shares its origin's messages by reference, so what hides them in the
origin hides them in its forks too: a redaction of the origin is recorded on
each fork that holds the message or tool call (an audited ``Redacted`` of its
own), and erasing the origin erases its forks (``operations.erasure``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from uuid import UUID

from chatledger.domain.aggregate import Conversation, conversation_id
from chatledger.domain.branch_events import ForkMade
from chatledger.domain.errors import (
    ConcurrentWriteError,
    ConversationErasedError,
    ConversationExistsError,
    ConversationNotFoundError,
    InvalidInputError,
    StoredDataError,
)
from chatledger.domain.forks import mark_fork, start_fork
from chatledger.domain.limits import check_position

if TYPE_CHECKING:
    from chatledger.adapters.store.unit_of_work import UnitOfWork

__all__ = ["fork", "forks_of", "redact_forks", "routed_fork"]


def fork(
    uow: UnitOfWork,
    tenant: str,
    chat_id: str,
    new_chat_id: str,
    *,
    leaf: str | None,
    at_version: int | None,
    actor: str,
    reason: str | None,
) -> str | None:
    """Fork ``chat_id`` into ``new_chat_id``; the node key of the last shared message (None: none)."""
    check_position("at_version", at_version, optional=True)
    origin = uow.load(tenant, chat_id, at_version)
    conversation = start_fork(
        origin.state, origin.version, new_chat_id, leaf=leaf, actor=actor, reason=reason
    )
    try:
        uow.create(conversation)
    except ConcurrentWriteError:
        raise ConversationExistsError(tenant, new_chat_id) from None
    made = conversation.state
    uow.act(tenant, chat_id, lambda c: mark_fork(c, made, actor=actor, reason=reason))
    forked_from = made.forked_from
    assert forked_from is not None
    leaf_key: str | None = forked_from["leaf"]
    return leaf_key


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


def redact_forks(
    uow: UnitOfWork,
    tenant: str,
    chat_id: str,
    redact: Callable[[str], Callable[[Conversation], Any]],
    reason: str,
) -> None:
    """Record the redaction ``redact(reason)`` of ``chat_id`` on each of its forks (and theirs) that hold its target."""
    for fork_tenant, fork_chat in forks_of(uow.log, conversation_id(tenant, chat_id)):
        why = f"{reason} (redacted in its origin {chat_id!r})"
        try:
            uow.act(fork_tenant, fork_chat, redact(why))
        except (ConversationErasedError, ConversationNotFoundError, InvalidInputError):
            continue  # erased, or the fork does not hold what was redacted
        redact_forks(uow, fork_tenant, fork_chat, redact, reason)


def routed_fork(store: Any) -> Callable[..., str | None]:
    """``fork`` for a sharded store: the fork must live in its origin's shard (it reads the origin's log)."""

    def fork_in_shard(chat_id: str, new_chat_id: str, **options: Any) -> str | None:
        tenant = options.get("tenant")
        shard = store.shard(chat_id, tenant)
        if store.shard(new_chat_id, tenant) is not shard:
            raise InvalidInputError(
                f"chat id {new_chat_id!r} lives in another shard than {chat_id!r}: a fork reads "
                "its origin's log, so choose a new chat id of the same shard (shard_index)"
            )
        forked: str | None = shard.chats.fork(chat_id, new_chat_id, **options)
        return forked

    return fork_in_shard
