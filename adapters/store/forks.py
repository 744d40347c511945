"""Forking a conversation (``ConversationStore.fork``): the use case around ``chatledger.domain.forks``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from chatledger.domain.errors import ConcurrentWriteError, ConversationExistsError
from chatledger.domain.forks import mark_fork, start_fork
from chatledger.domain.limits import check_position

if TYPE_CHECKING:
    from chatledger.adapters.store.unit_of_work import UnitOfWork

__all__ = ["fork"]


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
