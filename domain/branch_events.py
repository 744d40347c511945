"""The events of a conversation's branches and forks: a branch switch, a fork and its origin's mark.

Their class paths are stored data (``chatledger.domain.branch_events:<Class>``),
as those of ``chatledger.domain.events``: never rename or move them without
registering the old topic. The tree they act on is ``chatledger.domain.branches``.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from chatledger.domain._event_folds import own
from chatledger.domain.conversation import ConversationState
from chatledger.domain.errors import StoredDataError
from chatledger.domain.events import ConversationEvent

__all__ = ["BranchSwitched", "ConversationForked", "ForkMade"]


class BranchSwitched(ConversationEvent):
    """Someone switched the conversation's view to another branch (an edit's or a regeneration's).

    The messages of the branch left stay in the tree; the next turn follows the
    new active path.
    """

    leaf: str
    """The node key of the new active leaf (``chatledger.domain.branches``)."""
    previous_leaf: str | None
    """The node key of the active leaf before (None: the view was empty)."""
    reason: str | None = None
    """Why, as given."""

    def apply_to(self, state: ConversationState) -> None:
        """Show the path that ends at ``leaf``."""
        if state.branches is None or self.leaf not in state.branches.parents:
            raise StoredDataError(
                f"a branch switch to {self.leaf!r} (version {self.originator_version}) names no "
                "message of the conversation's tree: the log is corrupt"
            )
        state.switch_to(self.leaf)


class ConversationForked(ConversationEvent):
    """This conversation continues another one's path (its *origin*) from a message on.

    The origin's messages up to ``leaf``, as they stood at ``origin_version``,
    are this conversation's first messages *by reference*: the log holds only
    this event, and each read resolves the prefix from the origin's log
    (``prefix``, filled in when the event is read, never stored).
    """

    origin_tenant: str
    """The origin's tenant."""
    origin_chat_id: str
    """The origin's chat id."""
    origin_version: int
    """The origin's version the fork was made at."""
    leaf: str | None
    """The node key (``chatledger.domain.branches``) of the origin's last shared message (None: none)."""
    reason: str | None = None
    """Why, as given."""
    prefix: list[dict[str, Any]] | None = Field(default=None, exclude=True)
    """The shared messages, resolved from the origin when the event is read (not stored)."""

    def apply_to(self, state: ConversationState) -> None:
        """The shared messages become this conversation's first ones."""
        if self.prefix is None:
            raise StoredDataError(
                f"the fork of {self.origin_chat_id!r} (version {self.originator_version}) was "
                "read without its origin's messages: read it through a store"
            )
        for message in self.prefix:
            state.append_message(own(message))
        state.forked_from = self.origin()

    def origin(self) -> dict[str, Any]:
        """Where the conversation came from, as ``ConversationState.forked_from`` keeps it."""
        return {
            "tenant": self.origin_tenant,
            "chatId": self.origin_chat_id,
            "version": self.origin_version,
            "leaf": self.leaf,
        }


class ForkMade(ConversationEvent):
    """Someone forked this conversation into another one (recorded on the origin, for its audit)."""

    fork_tenant: str
    """The fork's tenant."""
    fork_chat_id: str
    """The fork's chat id."""
    at_version: int
    """This conversation's version the fork shares."""
    leaf: str | None
    """The node key of the last message the fork shares."""
    reason: str | None = None
    """Why, as given."""
