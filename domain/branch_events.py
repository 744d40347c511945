"""The events of a conversation's branches: the view switched to another branch.

Their class paths are stored data (``chatledger.domain.branch_events:<Class>``),
as those of ``chatledger.domain.events``: never rename or move them without
registering the old topic. The tree they act on is ``chatledger.domain.branches``.
"""

from __future__ import annotations

from chatledger.domain.conversation import ConversationState
from chatledger.domain.errors import StoredDataError
from chatledger.domain.events import ConversationEvent

__all__ = ["BranchSwitched"]


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
