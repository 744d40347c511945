"""Across conversations: the approvals inbox, the continuation queue and the conversation list.

The inbox reads the read models (brought up to date first), so it never scans
conversations; ``claim_continuation`` then re-checks the request against the
conversation itself, through the unit of work, so exactly one worker wins it.
What this process's writers hold back is committed before each read.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from chatledger.domain.aggregate import Conversation
from chatledger.domain.errors import ChatLedgerError
from chatledger.domain.grants import RECENT, AutomaticApproval
from chatledger.domain.limits import check_name
from chatledger.domain.owners import ClaimWatch, is_overdue, may_claim, wall_clock_watch
from chatledger.projections.listing import ConversationList, ListQuery
from chatledger.projections.projector import continuation_of
from chatledger.projections.read_models import ContinuationRequest, PendingApproval

if TYPE_CHECKING:
    from chatledger.adapters.grants.service import Grants
    from chatledger.adapters.store.unit_of_work import UnitOfWork
    from chatledger.projections.projector import Projector
    from chatledger.projections.read_models import ReadModelView

__all__ = ["AutomaticApproval", "ContinuationRequest", "Inbox", "PendingApproval"]


class Inbox:
    """What waits across one store's conversations (``tenant=None``: the store's default tenant)."""

    def __init__(
        self,
        uow: UnitOfWork,
        view: ReadModelView,
        projector: Projector,
        *,
        tenant: str,
        settle_all: Callable[[], None],
        overdue: ClaimWatch = wall_clock_watch,
    ) -> None:
        self.tenant = tenant
        self._uow, self._view, self._projector, self._settle_all = uow, view, projector, settle_all
        self._watch = overdue
        self.grants: Grants | None = None
        """The store's standing grants (set when composed): what ``automatic_approvals`` reads."""

    def pending_approvals(self, *, tenant: str | None = None) -> list[PendingApproval]:
        """Every tool call awaiting approval across the tenant's conversations, oldest first."""
        self._catch_up()
        return self._view.pending_approvals(tenant or self.tenant)

    def automatic_approvals(
        self, *, tenant: str | None = None, limit: int = RECENT
    ) -> list[AutomaticApproval]:
        """The calls standing grants approved lately, newest first, each naming its grant (actor, reason, id).

        The inbox's other half: what was approved without asking (see
        ``store.grants.automatic_approvals``).
        """
        if self.grants is None:
            return []
        return self.grants.automatic_approvals(tenant=tenant or self.tenant, limit=limit)

    def pending_continuations(self, *, tenant: str | None = None) -> list[ContinuationRequest]:
        """Continuation requests not yet started (claimed or not), oldest first.

        Each says whether it is ``overdue``: unclaimed (or its claim's lease ran
        out) for longer than the store's ``owner_claim_limit_seconds``.
        """
        self._catch_up()
        now, limit = self._watch()
        return [
            replace(r, overdue=is_overdue(r.requested_at, now, limit, r.lease_until))
            for r in self._view.pending_continuations(tenant or self.tenant)
        ]

    def claim_continuation(
        self,
        worker: str,
        *,
        lease_seconds: float = 60.0,
        tenant: str | None = None,
        chat_id: str | None = None,
        min_age_seconds: float = 0.0,
        owner: str | None = None,
    ) -> ContinuationRequest | None:
        """Take the oldest unclaimed (or lease-expired) request of ``owner``; exactly one worker wins each.

        Then open its stream with ``open_stream(chat_id, request_id=...)``
        within the lease; that fulfils the request. Only the requests a worker
        of ``owner`` may continue are taken: those of conversations it owns,
        and those owned by ``any`` (None: only those); another owner's request
        is never taken (``chatledger.domain.owners``). ``chat_id`` takes only
        that conversation's request; ``min_age_seconds`` leaves alone requests
        younger than that (a request its own writer is about to fulfil).
        """
        check_name("worker", worker)
        check_name("owner", owner, optional=True)
        now = datetime.now(UTC)
        for request in self.pending_continuations(tenant=tenant):
            if request.lease_until is not None and request.lease_until > now:
                continue
            if not may_claim(request.owner, owner):
                continue
            if chat_id is not None and request.chat_id != chat_id:
                continue
            if (now - request.requested_at).total_seconds() < min_age_seconds:
                continue

            def claim(conversation: Conversation, request: ContinuationRequest = request) -> bool:
                return conversation.claim_continuation(
                    request.request_id,
                    worker=worker,
                    lease_seconds=lease_seconds,
                    now=now,
                    owner=owner,
                )

            conversation, _, won = self._uow.act(request.tenant, request.chat_id, claim)
            if won:
                if conversation.state.continuation is None:
                    raise ChatLedgerError(
                        "a won claim left no continuation: please report this bug"
                    )
                return continuation_of(conversation.state)
        return None

    def list_conversations(
        self,
        *,
        tenant: str | None = None,
        query: str | None = None,
        status: str | None = None,
        updated_before: datetime | None = None,
        updated_after: datetime | None = None,
        limit: int = 50,
        cursor: str | None = None,
    ) -> ConversationList:
        """One page of the tenant's conversations, most recently changed first.

        ``query`` keeps those whose title or message text holds every word
        (as a prefix); ``status`` those whose turn stands there (see
        ``chatledger.projections.listing.STATUSES``); ``updated_before`` /
        ``updated_after`` bound the last change. Pass the page's
        ``next_cursor`` as ``cursor`` for the next page.
        """
        wanted = ListQuery(
            tenant or self.tenant, query, status, updated_before, updated_after, limit, cursor
        )
        self._catch_up()
        return self._view.list_conversations(wanted)

    def _catch_up(self) -> None:
        """Commit what this process's writers hold back, then bring the read models up to date."""
        self._settle_all()
        self._projector.catch_up()
