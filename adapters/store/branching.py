"""A conversation's branches: switch the path shown, fork a conversation from a path.

``Chats`` answers these (its base class ``ChatBranches``). The tree itself is
the pure fold of ``chatledger.domain.branches``; a fork is written by ``forks``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from chatledger.adapters.store import forks

if TYPE_CHECKING:
    from chatledger.adapters.store.unit_of_work import UnitOfWork
    from chatledger.domain.limits import Limits

__all__ = ["ChatBranches"]


class ChatBranches:
    """Branch switches and forks, for ``Chats`` (which sets ``tenant``, ``_uow`` and ``_limits``)."""

    tenant: str
    _uow: UnitOfWork
    _limits: Limits

    def switch_branch(
        self,
        chat_id: str,
        to: str,
        *,
        reason: str | None = None,
        actor: str = "system",
        tenant: str | None = None,
    ) -> str | None:
        """Show the branch of message ``to`` (an id or branch key, ``reads.branches``): an audited switch.

        The view goes down that branch's latest path to its leaf; the branch
        left stays in the tree, and the next turn follows the new path.
        Returns the new leaf's key, or None when that branch is already shown.
        """
        self._limits.check_value("reason", reason)
        decide = lambda c: c.switch_branch(to, reason=reason, actor=actor)  # noqa: E731
        leaf: str | None = self._uow.act(tenant or self.tenant, chat_id, decide)[2]
        return leaf

    def fork(
        self,
        chat_id: str,
        new_chat_id: str,
        *,
        leaf: str | None = None,
        at_version: int | None = None,
        reason: str | None = None,
        actor: str = "system",
        tenant: str | None = None,
    ) -> str | None:
        """Start ``new_chat_id`` from this conversation's path up to ``leaf`` (default: the active leaf).

        The fork shares those messages by reference (its log names the origin,
        the version and the leaf; ``at_version`` forks the conversation as it
        stood then); the origin's audit records the fork. Forks can be forked.
        Erasing the origin erases its forks. Returns the last shared message's key.
        """
        self._limits.check_value("reason", reason)
        return forks.fork(
            self._uow, tenant or self.tenant, chat_id, new_chat_id,
            leaf=leaf, at_version=at_version, actor=actor, reason=reason,
        )  # fmt: skip
