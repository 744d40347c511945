"""Reading across conversations: status, the approvals inbox and the continuation queue (SPEC §4.3-4.4).

The inbox reads the read models (``chatledger.projections``), brought up to
date first, so it never scans conversations; ``claim_continuation`` then
re-checks the request against the conversation itself.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from chatledger.domain.continuation import ConversationStatus, status_of
from chatledger.projections.projector import continuation_of
from chatledger.projections.read_models import ContinuationRequest, PendingApproval

if TYPE_CHECKING:
    from chatledger.domain.aggregate import Conversation
    from chatledger.projections.projector import Projector
    from chatledger.projections.read_models import ReadModelView

__all__ = ["ContinuationRequest", "Inbox", "PendingApproval"]


class Inbox:
    """Cross-conversation reads of ``ConversationStore`` (mixed in)."""

    if TYPE_CHECKING:
        tenant: str
        _view: ReadModelView
        _projector: Projector

        def _load(self, tenant: str, chat_id: str, version: int | None = None) -> Conversation: ...

        def _act(
            self, chat_id: str, tenant: str | None, decide: Callable[[Conversation], None]
        ) -> tuple[Conversation, list[Any]]: ...

    def status(self, chat_id: str, *, tenant: str | None = None) -> ConversationStatus:
        """Where the turn stands: idle, streaming, awaiting-approval, awaiting-tool-output, ready-to-continue."""
        return status_of(self._load(tenant or self.tenant, chat_id).state)

    def pending_approvals(self, *, tenant: str | None = None) -> list[PendingApproval]:
        """Every tool call awaiting approval across the tenant's conversations, oldest first."""
        self._projector.catch_up()
        return self._view.pending_approvals(tenant or self.tenant)

    def pending_continuations(self, *, tenant: str | None = None) -> list[ContinuationRequest]:
        """Continuation requests not yet started (claimed or not), oldest first."""
        self._projector.catch_up()
        return self._view.pending_continuations(tenant or self.tenant)

    def claim_continuation(
        self,
        worker: str,
        *,
        lease_seconds: float = 60.0,
        tenant: str | None = None,
        chat_id: str | None = None,
        min_age_seconds: float = 0.0,
    ) -> ContinuationRequest | None:
        """Take the oldest unclaimed (or lease-expired) request; exactly one worker wins each.

        Then open its stream with ``open_stream(chat_id, request_id=...)``
        within the lease; that fulfils the request. ``chat_id`` takes only
        that conversation's request; ``min_age_seconds`` leaves alone requests
        younger than that (a request its own writer is about to fulfil).
        """
        now = datetime.now(UTC)
        for request in self.pending_continuations(tenant=tenant):
            if request.lease_until is not None and request.lease_until > now:
                continue
            if chat_id is not None and request.chat_id != chat_id:
                continue
            if (now - request.requested_at).total_seconds() < min_age_seconds:
                continue
            won: list[bool] = []

            def claim(
                conversation: Conversation,
                request: ContinuationRequest = request,
                won: list[bool] = won,
            ) -> None:
                won.append(
                    conversation.claim_continuation(
                        request.request_id, worker=worker, lease_seconds=lease_seconds, now=now
                    )
                )

            conversation, _ = self._act(request.chat_id, request.tenant, claim)
            if won[-1]:
                assert conversation.state.continuation is not None
                return continuation_of(conversation.state)
        return None
