"""Across conversations: the approvals inbox and the continuation queue.

The inbox reads the read models (brought up to date first), so it never scans
conversations; ``claim_continuation`` then re-checks the request against the
conversation itself, through the unit of work, so exactly one worker wins it.
"""

from __future__ import annotations

from datetime import UTC, datetime

from chatledger.adapters.store.unit_of_work import UnitOfWork
from chatledger.domain.aggregate import Conversation
from chatledger.domain.errors import ChatLedgerError
from chatledger.domain.limits import check_name
from chatledger.projections.projector import Projector, continuation_of
from chatledger.projections.read_models import ContinuationRequest, PendingApproval, ReadModelView

__all__ = [
    "ContinuationRequest",
    "PendingApproval",
    "claim_continuation",
    "pending_approvals",
    "pending_continuations",
]


def pending_approvals(
    view: ReadModelView, projector: Projector, tenant: str
) -> list[PendingApproval]:
    """Every tool call awaiting approval across the tenant's conversations, oldest first."""
    projector.catch_up()
    return view.pending_approvals(tenant)


def pending_continuations(
    view: ReadModelView, projector: Projector, tenant: str
) -> list[ContinuationRequest]:
    """Continuation requests not yet started (claimed or not), oldest first."""
    projector.catch_up()
    return view.pending_continuations(tenant)


def claim_continuation(
    uow: UnitOfWork,
    queue: list[ContinuationRequest],
    worker: str,
    *,
    lease_seconds: float,
    chat_id: str | None,
    min_age_seconds: float,
) -> ContinuationRequest | None:
    """Take the oldest claimable request of ``queue``; see ``ConversationStore.claim_continuation``."""
    check_name("worker", worker)
    now = datetime.now(UTC)
    for request in queue:
        if request.lease_until is not None and request.lease_until > now:
            continue
        if chat_id is not None and request.chat_id != chat_id:
            continue
        if (now - request.requested_at).total_seconds() < min_age_seconds:
            continue

        def claim(conversation: Conversation, request: ContinuationRequest = request) -> bool:
            return conversation.claim_continuation(
                request.request_id, worker=worker, lease_seconds=lease_seconds, now=now
            )

        conversation, _, won = uow.act(request.tenant, request.chat_id, claim)
        if won:
            if conversation.state.continuation is None:
                raise ChatLedgerError("a won claim left no continuation: please report this bug")
            return continuation_of(conversation.state)
    return None
