"""Snapshots of a conversation: its whole state as JSON, so loading skips the events before it."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from uuid import UUID

from eventsourcing.domain import CanSnapshotAggregate
from eventsourcing.utils import get_topic
from pydantic import BaseModel, ConfigDict

from chatledger.domain.aggregate import Conversation
from chatledger.domain.conversation import ConversationState

__all__ = ["ConversationSnapshot"]


class ConversationSnapshot(BaseModel, CanSnapshotAggregate[UUID]):
    """The state of a conversation at one version."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    originator_id: UUID
    """The conversation's aggregate id."""
    originator_version: int
    """The version the snapshot was taken at."""
    timestamp: datetime
    """When it was taken."""
    topic: str
    """The aggregate class."""
    state: dict[str, Any]
    """``createdOn``, ``modifiedOn`` and ``conversation`` (``ConversationState.to_json()``)."""

    @classmethod
    def take(cls, aggregate: Any) -> ConversationSnapshot:
        """Snapshot ``aggregate`` as it is now."""
        assert isinstance(aggregate, Conversation)
        return cls(
            originator_id=aggregate.id,
            originator_version=aggregate.version,
            timestamp=cls.create_timestamp(),
            topic=get_topic(type(aggregate)),
            state={
                "createdOn": aggregate.created_on.isoformat(),
                "modifiedOn": aggregate.modified_on.isoformat(),
                "conversation": aggregate.state.to_json(),
            },
        )

    def mutate(self, _: Any) -> Conversation:
        """Rebuild the aggregate from the snapshot."""
        conversation = Conversation.__new__(Conversation)
        conversation.__base_init__(
            self.originator_id,
            self.originator_version,
            datetime.fromisoformat(self.state["createdOn"]),
        )
        conversation.modified_on = datetime.fromisoformat(self.state["modifiedOn"])
        conversation.state = ConversationState.from_json(self.state["conversation"])
        stream = conversation.state.stream
        if stream is not None and stream.renewed_at is None:
            # Taken before leases were recorded: the stream's lease runs from its last event.
            stream.renewed_at = conversation.modified_on
        return conversation
