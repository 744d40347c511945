"""Forks: a new conversation that continues another one's path from a message on.

The fork shares its origin's messages up to a leaf *by reference*
(``ConversationForked`` names the origin, its version and the leaf; the
prefix is resolved from the origin's log whenever the fork is read), and the
origin records ``ForkMade`` so its audit names every fork. A fork may itself
be forked. Erasing an origin erases its forks too (they hold its messages):
see ``docs/branches.md``.
"""

from __future__ import annotations

from typing import Any

from chatledger.domain.aggregate import Conversation
from chatledger.domain.branch_events import ConversationForked, ForkMade
from chatledger.domain.branches import path_messages
from chatledger.domain.conversation import ConversationState
from chatledger.domain.errors import InvalidMessageError
from chatledger.domain.limits import check_name, check_names, check_text

__all__ = ["fork_prefix", "mark_fork", "start_fork"]


def fork_prefix(
    origin: ConversationState, leaf: str | None
) -> tuple[str | None, list[dict[str, Any]]]:
    """``(leaf's node key, the messages up to it)`` of ``origin``; ``leaf`` None: its whole view."""
    tree = origin.branches
    if leaf is None:
        if not origin.messages:
            return None, []
        leaf = tree.path[-1] if tree is not None else origin.messages[-1]["id"]
    prefix = path_messages(tree, origin.messages, leaf)
    key = tree.key_of(leaf) if tree is not None else leaf
    return key, prefix


def start_fork(
    origin: ConversationState,
    origin_version: int,
    chat_id: str,
    *,
    leaf: str | None,
    actor: str,
    reason: str | None,
) -> Conversation:
    """A new conversation ``chat_id`` (in the origin's tenant, speaking its AI SDK) forked from ``origin``."""
    check_names(chat_id=chat_id, actor=actor)
    check_text("reason", reason)
    if chat_id == origin.chat_id:
        raise InvalidMessageError("a fork needs a chat id of its own, not its origin's")
    key, prefix = fork_prefix(origin, leaf)
    fork = Conversation.start(origin.tenant, chat_id, actor=actor, ai_sdk=origin.ai_sdk)
    fork.trigger_event(
        ConversationForked,
        origin_tenant=origin.tenant,
        origin_chat_id=origin.chat_id,
        origin_version=origin_version,
        leaf=key,
        reason=reason,
        actor=actor,
        prefix=prefix,
    )
    return fork


def mark_fork(
    origin: Conversation, fork: ConversationState, *, actor: str, reason: str | None
) -> None:
    """Record on the origin that ``fork`` was made from it."""
    check_name("actor", actor)
    made = fork.forked_from
    assert made is not None, "mark_fork takes a fork"
    origin.trigger_event(
        ForkMade,
        fork_tenant=fork.tenant,
        fork_chat_id=fork.chat_id,
        at_version=made["version"],
        leaf=made["leaf"],
        reason=reason,
        actor=actor,
    )
