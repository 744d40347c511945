"""What a conversation's compactions are at a version: read for ``Reader.compactions`` and model input.

The compactions live in the conversation's state (``chatledger.domain.compaction``);
here they are read as they stood now, at a version or at a time, each with the
ids of the messages it stands in for in that state's model input.
"""

from __future__ import annotations

import copy
from datetime import datetime
from typing import TYPE_CHECKING, Any

from chatledger.domain.compaction import compacted_messages, effective_compactions
from chatledger.domain.limits import check_position

if TYPE_CHECKING:
    from uuid import UUID

    from chatledger.adapters.store.unit_of_work import UnitOfWork
    from chatledger.domain.conversation import ConversationState

__all__ = ["CompactionReads", "compactions_at", "compactions_of"]


class CompactionReads:
    """The compaction reads of ``Reader`` (its base class): what stands in for what in model input."""

    tenant: str
    _uow: UnitOfWork

    def _settle(self, tenant: str, chat_id: str) -> UUID:
        raise NotImplementedError  # the Reader's: commit what this process's writers hold back

    def compactions(
        self,
        chat_id: str,
        *,
        tenant: str | None = None,
        at_version: int | None = None,
        at_time: datetime | None = None,
    ) -> list[dict[str, Any]]:
        """The conversation's compactions (now, or at a version or time), in order: ``from``, ``to``,
        ``count``, ``summary``, ``reason``, ``actor``, ``time``, ``version``, and ``messageIds`` (the
        messages its summary stands in for in model input; none when it no longer applies)."""
        tenant = tenant or self.tenant
        self._settle(tenant, chat_id)
        return compactions_at(self._uow, tenant, chat_id, at_version, at_time)

    def _model_input(
        self,
        messages: list[dict[str, Any]],
        chat_id: str,
        tenant: str | None,
        at_version: int | None,
        at_time: datetime | None,
    ) -> list[dict[str, Any]]:
        """``messages`` with each compaction's summary in place of its range (as it stood then)."""
        found = self.compactions(chat_id, tenant=tenant, at_version=at_version, at_time=at_time)
        return compacted_messages(messages, found) if found else messages


def compactions_at(
    uow: UnitOfWork,
    tenant: str,
    chat_id: str,
    at_version: int | None = None,
    at_time: datetime | None = None,
) -> list[dict[str, Any]]:
    """The compactions of the conversation now (or at ``at_version`` / ``at_time``), see ``compactions_of``."""
    if at_time is not None:
        at_version = uow.version_at(tenant, chat_id, at_time)
        if at_version == 0:
            return []
    if at_version is not None:
        check_position("at_version", at_version)
        return compactions_of(uow.load(tenant, chat_id, at_version).state)
    conversation = uow.current(tenant, chat_id)
    try:
        return compactions_of(conversation.state)
    finally:
        uow.give_back(conversation)


def compactions_of(state: ConversationState) -> list[dict[str, Any]]:
    """Each compaction of ``state`` (a copy), with ``messageIds``: the messages it stands in for now.

    ``messageIds`` is empty when the compaction no longer applies (its messages
    were cut, or a later compaction covers it).
    """
    applied = {
        record["version"]: [m["id"] for m in state.messages[start : end + 1]]
        for start, end, record in effective_compactions(state.messages, state.compactions)
    }
    return [
        {**copy.deepcopy(record), "messageIds": applied.get(record["version"], [])}
        for record in state.compactions
    ]
