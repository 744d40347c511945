"""What the framework plug-ins share: a chatledger store written as one tenant and one actor.

``ChatLedgerSession`` (OpenAI Agents) and ``ChatLedgerConversationStore``
(Pydantic AI) both keep a framework's conversations as chatledger
conversations: both read a chat that may not exist yet, start a chat once,
and record a human's decision on a call the framework's run paused on. The
framework drives its own turns, so that decision never queues a continuation;
the chats they start are owned by the framework (``chatledger.domain.owners``),
so no continuation worker answers them, and a request queued by an approval
given elsewhere is retired when the framework resumes its run.
"""

from __future__ import annotations

import contextlib
import threading
from typing import TYPE_CHECKING, Any

from chatledger.domain.errors import ConversationExistsError, ConversationNotFoundError
from chatledger.domain.owners import ANY

if TYPE_CHECKING:
    from chatledger.adapters.store import ConversationStore
    from chatledger.adapters.store.actions import ActionResult

__all__ = ["StoreBinding"]


class StoreBinding:
    """A chatledger store as a framework plug-in uses it: which tenant, which actor, one write at a time.

    ``tenant`` defaults to the store's; ``actor`` names the plug-in in the
    audit. ``_lock`` keeps this instance's writes (each a read, a decision and
    one commit) in order; it is re-entrant so a write may read through the
    instance's own methods.
    """

    def __init__(self, store: ConversationStore, *, tenant: str | None, actor: str) -> None:
        self.store = store
        self.tenant = tenant
        self.actor = actor
        self._lock = threading.RLock()

    def _messages_or_none(self, chat_id: str) -> list[dict[str, Any]] | None:
        """The chat's current messages, or None when the chat does not exist."""
        try:
            return self.store.messages(chat_id, tenant=self.tenant)
        except ConversationNotFoundError:
            return None

    owner: str = ANY
    """The owner of the chats it starts: the framework, which resumes its own runs."""

    def _start_once(self, chat_id: str, **options: Any) -> None:
        """Start the chat with this actor, owned by the framework, unless it exists."""
        with contextlib.suppress(ConversationExistsError):
            self.store.start_conversation(
                chat_id, tenant=self.tenant, actor=self.actor, owner=self.owner, **options
            )

    def _retire_continuation(self, chat_id: str, reason: str) -> str | None:
        """Retire the chat's pending continuation request: the framework continues the run itself.

        An approval given elsewhere (``chatledger approve``, the HTTP route, the
        inbox page) queues a request; the framework's resume consumes it here,
        so nothing stays pending and no worker answers the conversation.
        """
        try:
            return self.store.retire_continuation(
                chat_id, actor=self.actor, reason=reason, tenant=self.tenant
            )
        except ConversationNotFoundError:
            return None

    def _record_decision(
        self, chat_id: str, tool_call_id: str, *, approved: bool, actor: str, reason: str | None
    ) -> ActionResult:
        """Record who approved or denied a call the framework's run paused on, and why.

        No continuation is queued: the framework resumes its own run.
        """
        return self.store.respond_to_approval(
            chat_id,
            tool_call_id=tool_call_id,
            approved=approved,
            reason=reason,
            actor=actor,
            auto_continue=False,
            tenant=self.tenant,
        )
