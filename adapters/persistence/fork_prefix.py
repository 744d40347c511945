"""A fork's shared messages, read from its origin's log when the fork's ``ConversationForked`` is read.

A fork holds its origin's messages by reference only (``chatledger.domain.forks``):
the decoder of every event read completes that one event with the messages of
the origin's path up to the fork's leaf, as they stood at the fork's version
(the origin itself may be a fork: its own prefix resolves the same way). An
origin erased since gives an empty prefix: the fork shows its own messages
only (erasing an origin erases its forks too, so this is seen only between the
two, or of a fork made before that rule).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chatledger.domain.aggregate import conversation_id
from chatledger.domain.branch_events import ConversationForked
from chatledger.domain.errors import (
    ConversationErasedError,
    ConversationNotFoundError,
    StoredDataError,
)
from chatledger.domain.forks import fork_prefix

if TYPE_CHECKING:
    from chatledger.adapters.persistence.log import ConversationLog

__all__ = ["resolve_fork"]


def resolve_fork(log: ConversationLog, event: Any) -> Any:
    """``event``, with its shared messages when it is a fork's ``ConversationForked``."""
    if not isinstance(event, ConversationForked) or event.prefix is not None:
        return event
    tenant, chat_id = event.origin_tenant, event.origin_chat_id
    try:
        origin = log.load(conversation_id(tenant, chat_id), tenant, chat_id, event.origin_version)
    except ConversationErasedError:
        return event.model_copy(update={"prefix": []})
    except ConversationNotFoundError:
        raise StoredDataError(
            f"the fork's origin {chat_id!r} is not in this store (a fork lives in its origin's "
            "database)"
        ) from None
    prefix = fork_prefix(origin.state, event.leaf)[1] if event.leaf is not None else []
    return event.model_copy(update={"prefix": prefix})
