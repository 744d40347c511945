"""A tenant's standing approval grants as an event-sourced ledger: given, used, revoked, expired.

One ledger per tenant (its id derives from the tenant). Every change is an
event, the source of truth; ``grants()`` is their fold. Event class paths
are stored data (``chatledger.domain.grant_ledger:GrantLedger.<Event>``):
never rename the class or its methods without registering the old topic.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import Any
from uuid import NAMESPACE_URL, UUID, uuid5

from eventsourcing.domain import Aggregate, event

from chatledger.domain.grants import RECENT, Grant

__all__ = ["GrantLedger", "ledger_id"]


def ledger_id(tenant: str) -> UUID:
    """The id of ``tenant``'s grant ledger."""
    return uuid5(NAMESPACE_URL, f"chatledger:grants:{tenant}")


class GrantLedger(Aggregate):
    """The grants of one tenant, in the order they were given."""

    @staticmethod
    def create_id(tenant: str) -> UUID:
        """The ledger's id (one per tenant)."""
        return ledger_id(tenant)

    @event("Started")
    def __init__(self, tenant: str) -> None:
        self.tenant = tenant
        self.book: dict[str, Grant] = {}

    @event("GrantIssued")
    def issue(
        self, grant_id: str, scope: str, tool_name: str | None, input: Any, chat_id: str | None,
        actor: str, reason: str | None, at: datetime, expires_at: datetime | None,
        source: dict[str, Any] | None, input_digest: str | None = None,
    ) -> None:  # fmt: skip
        """A person gave a grant (``source``: the approval it was given with, if any).

        ``input_digest``: an ``input`` grant's digest of its input (``input`` then None).
        """
        self.book[grant_id] = Grant(
            grant_id, self.tenant, scope, tool_name, input, chat_id, actor, reason, at, expires_at,
            input_digest=input_digest, given_in=(source or {}).get("chatId"),
        )  # fmt: skip

    @event("GrantUsed")
    def use(
        self, grant_id: str, chat_id: str, tool_call_id: str, approval_id: str, at: datetime
    ) -> None:
        """The grant approved a call, automatically."""
        grant = self.book[grant_id]
        recent = (*grant.recent, (chat_id, tool_call_id, at))[-RECENT:]
        self.book[grant_id] = dataclasses.replace(grant, uses=grant.uses + 1, recent=recent)

    @event("GrantRevoked")
    def revoke(self, grant_id: str, actor: str, reason: str | None, at: datetime) -> None:
        """A person revoked the grant: it covers nothing from now on."""
        self.book[grant_id] = dataclasses.replace(
            self.book[grant_id], revoked_at=at, revoked_by=actor, revoke_reason=reason
        )

    @event("GrantExpired")
    def expire(self, grant_id: str, at: datetime) -> None:
        """The grant's time ran out (recorded when it was noticed)."""
        self.book[grant_id] = dataclasses.replace(self.book[grant_id], expired_at=at)

    def grants(self) -> list[Grant]:
        """Every grant, oldest first."""
        return list(self.book.values())
