"""Several actions on one conversation decided together and recorded in one commit.

A store of another framework often needs a few actions to be one decision:
check a revision, cut, append, answer a tool call. Done as separate store
calls, two writers can interleave between them. ``transact`` runs a decision
function against the conversation as it is now; every action it takes is
recorded in one commit (all or nothing). If another writer committed to the
conversation meanwhile, the commit is refused and the decision runs again
against the new state, so a decision never acts on a stale view::

    def decide(tx: Transaction) -> int:
        if tx.messages and tx.messages[-1]["id"] == "m2":
            return tx.cut("m2", trigger="pop-item", actor="me")
        return 0

    cut = store.transact("chat-1", decide)

The decision may raise to give up (nothing is recorded): an exception raised
inside it propagates unchanged. It must not have side effects outside the
transaction, since it can run more than once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from chatledger.adapters.store.reads.shown import shown_messages

if TYPE_CHECKING:
    from chatledger.adapters.store.unit_of_work import UnitOfWork
    from chatledger.domain.aggregate import Conversation
    from chatledger.domain.limits import Limits

__all__ = ["Transaction", "transact"]

T = TypeVar("T")


class Transaction:
    """The actions a decision can take; each one changes ``messages`` at once, all commit together."""

    def __init__(self, conversation: Conversation, limits: Limits) -> None:
        self._conversation = conversation
        self._limits = limits

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The conversation's current messages, including this transaction's actions so far.

        As every view shows them: redacted content reads ``[redacted]``.
        """
        return shown_messages(self._conversation.state)

    @property
    def version(self) -> int:
        """The version (event count) the decision started from, plus this transaction's events."""
        return int(self._conversation.version)

    @property
    def started_at(self) -> int:
        """The version the decision started from (events after it are this transaction's)."""
        return self.version - len(self._conversation.pending_events)

    def append_message(self, message: dict[str, Any], *, actor: str) -> None:
        """Append a whole UIMessage (checked as ``ConversationStore.append_message`` checks it)."""
        self._conversation.append_message(message, actor=actor, limits=self._limits)

    def cut(
        self, from_message_id: str, *, trigger: str, actor: str, reason: str | None = None
    ) -> int:
        """Cut ``from_message_id`` and every later message from the view; returns how many."""
        return self._conversation.cut_messages(
            from_message_id, trigger=trigger, reason=reason, actor=actor
        )

    def add_tool_output(
        self,
        tool_call_id: str,
        *,
        actor: str,
        output: Any = None,
        state: str = "output-available",
        error_text: str | None = None,
    ) -> bool:
        """Give a tool call's result or error (no continuation is queued); False for a duplicate."""
        decision = self._conversation.add_tool_output(
            tool_call_id,
            state=state,
            output=output,
            error_text=error_text,
            actor=actor,
            auto_continue=False,
            limits=self._limits,
        )
        return bool(decision.changed)

    def respond_to_approval(
        self, tool_call_id: str, *, approved: bool, actor: str, reason: str | None = None
    ) -> bool:
        """Approve or deny a call awaiting approval (no continuation is queued); False for a duplicate."""
        decision = self._conversation.respond_to_approval(
            approval_id=None,
            tool_call_id=tool_call_id,
            approved=approved,
            reason=reason,
            actor=actor,
            auto_continue=False,
        )
        return bool(decision.changed)

    def retire_continuation(self, *, actor: str, reason: str) -> str | None:
        """Retire the pending continuation request (the caller continues the turn); its id, or None."""
        return self._conversation.retire_continuation(actor=actor, reason=reason)


def transact(
    uow: UnitOfWork,
    tenant: str,
    chat_id: str,
    decide: Callable[[Transaction], T],
    *,
    limits: Limits,
) -> T:
    """Run ``decide`` on the conversation as it is now and record all its actions in one commit.

    Returns what ``decide`` returned (from the run that committed). Raises
    ConversationNotFoundError for an unknown chat, whatever ``decide``
    raises, and ConcurrentWriteError if other writers kept winning.
    """
    _, _, decided = uow.act(
        tenant, chat_id, lambda conversation: decide(Transaction(conversation, limits))
    )
    result: T = decided
    return result
