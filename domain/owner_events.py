"""The events of a conversation's ownership: its owner changed, a continuation request retired.

Their class paths are stored data (``chatledger.domain.owner_events:<Class>``),
as those of ``chatledger.domain.events``: never rename or move them without
registering the old topic. The rules they follow are in ``chatledger.domain.owners``.
"""

from __future__ import annotations

from chatledger.domain.conversation import ConversationState
from chatledger.domain.events import ConversationEvent

__all__ = ["ContinuationRetired", "OwnerSet"]

_CLAIM = ("claimedBy", "leaseUntil")
"""What a claim added to a request: a hand-over drops it, so the new owner may claim at once."""


class OwnerSet(ConversationEvent):
    """Someone handed the conversation to another owner (the runtime that continues it)."""

    owner: str
    """The new owner (``chatledger.domain.owners``)."""
    previous: str
    """The owner before (as it was recorded, or the default of an older conversation)."""
    reason: str | None = None
    """Why, as given."""

    def apply_to(self, state: ConversationState) -> None:
        """Record the owner; a pending continuation request goes to the new owner, unclaimed."""
        state.owner = self.owner
        if state.continuation is not None:
            kept = {k: v for k, v in state.continuation.items() if k not in _CLAIM}
            state.continuation = {**kept, "owner": self.owner}


class ContinuationRetired(ConversationEvent):
    """The owner continued the turn by its own means (a framework resumed its run): the request is done."""

    request_id: str
    """The request retired."""
    reason: str
    """How the turn was continued instead."""

    def apply_to(self, state: ConversationState) -> None:
        """Take the request off the queue."""
        if state.continuation is not None and state.continuation["requestId"] == self.request_id:
            state.continuation = None
