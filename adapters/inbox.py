"""Reading across conversations: status, the approvals inbox and the continuation queue (SPEC §4.3-4.4).

These scan the event log's notifications by topic and load the
conversations found; the projections issue replaces the scans with tables.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from uuid import UUID

from eventsourcing.utils import get_topic

from chatledger.domain.continuation import ConversationStatus, status_of
from chatledger.domain.events import ContinuationRequested, ConversationStarted
from chatledger.domain.tool_parts import is_tool_part, tool_name

if TYPE_CHECKING:
    from chatledger.adapters.log import ConversationLog
    from chatledger.domain.aggregate import Conversation

__all__ = ["ContinuationRequest", "Inbox", "PendingApproval"]

_PAGE = 500


@dataclass(frozen=True)
class PendingApproval:
    """A tool call awaiting a human's approval."""

    tenant: str
    chat_id: str
    message_id: str
    tool_call_id: str
    tool_name: str
    input: Any
    approval_id: str
    requested_at: datetime
    """When the approval was requested (UTC)."""

    @property
    def age_seconds(self) -> float:
        """How long it has been waiting."""
        return (datetime.now(UTC) - self.requested_at).total_seconds()


@dataclass(frozen=True)
class ContinuationRequest:
    """A request for the model to continue a turn, waiting for a worker."""

    tenant: str
    chat_id: str
    request_id: str
    message_id: str
    cause: str
    requested_at: datetime
    claimed_by: str | None = None
    lease_until: datetime | None = None


class Inbox:
    """Cross-conversation reads of ``ConversationStore`` (mixed in)."""

    if TYPE_CHECKING:
        tenant: str
        _log: ConversationLog

        def _load(self, tenant: str, chat_id: str, version: int | None = None) -> Conversation: ...

        def _act(
            self, chat_id: str, tenant: str | None, decide: Callable[[Conversation], None]
        ) -> tuple[Conversation, list[Any]]: ...

    def status(self, chat_id: str, *, tenant: str | None = None) -> ConversationStatus:
        """Where the turn stands: idle, streaming, awaiting-approval, awaiting-tool-output, ready-to-continue."""
        return status_of(self._load(tenant or self.tenant, chat_id).state)

    def pending_approvals(self, *, tenant: str | None = None) -> list[PendingApproval]:
        """Every tool call awaiting approval across the tenant's conversations, oldest first."""
        tenant = tenant or self.tenant
        found: list[PendingApproval] = []
        for conversation in self._conversations(ConversationStarted, tenant):
            state = conversation.state
            for message in state.messages:
                for part in message["parts"]:
                    if not is_tool_part(part) or part.get("state") != "approval-requested":
                        continue
                    when = state.approval_times.get(part["toolCallId"])
                    found.append(
                        PendingApproval(
                            tenant,
                            state.chat_id,
                            message["id"],
                            part["toolCallId"],
                            tool_name(part),
                            part.get("input"),
                            str((part.get("approval") or {}).get("id", part["toolCallId"])),
                            datetime.fromisoformat(when) if when else conversation.modified_on,
                        )
                    )
        return sorted(found, key=lambda approval: approval.requested_at)

    def pending_continuations(self, *, tenant: str | None = None) -> list[ContinuationRequest]:
        """Continuation requests not yet started (claimed or not), oldest first."""
        tenant = tenant or self.tenant
        found = []
        for conversation in self._conversations(ContinuationRequested, tenant):
            request = conversation.state.continuation
            if request is not None:
                found.append(
                    _request(conversation.state.tenant, conversation.state.chat_id, request)
                )
        return sorted(found, key=lambda request: request.requested_at)

    def claim_continuation(
        self, worker: str, *, lease_seconds: float = 60.0, tenant: str | None = None
    ) -> ContinuationRequest | None:
        """Take the oldest unclaimed (or lease-expired) request; exactly one worker wins each.

        Then open its stream with ``open_stream(chat_id, request_id=...)``
        within the lease; that fulfils the request.
        """
        now = datetime.now(UTC)
        for request in self.pending_continuations(tenant=tenant):
            if request.lease_until is not None and request.lease_until > now:
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
                return _request(request.tenant, request.chat_id, conversation.state.continuation)
        return None

    def _conversations(self, topic_class: type, tenant: str) -> Iterator[Conversation]:
        """Conversations of ``tenant`` that recorded at least one event of ``topic_class``."""
        topic = get_topic(topic_class)
        seen: set[UUID] = set()
        start = 1
        while True:
            page = self._log.recorder.select_notifications(start=start, limit=_PAGE, topics=[topic])
            for notification in page:
                seen.add(UUID(str(notification.originator_id)))
            if len(page) < _PAGE:
                break
            start = page[-1].id + 1
        for aggregate_id in seen:
            try:
                conversation: Any = self._log.repository.get(aggregate_id)
            except Exception:
                continue
            if conversation.state.tenant == tenant:
                yield conversation


def _request(tenant: str, chat_id: str, data: dict[str, Any]) -> ContinuationRequest:
    lease = data.get("leaseUntil")
    return ContinuationRequest(
        tenant,
        chat_id,
        data["requestId"],
        data["messageId"],
        data["cause"],
        datetime.fromisoformat(data["requestedAt"]),
        data.get("claimedBy"),
        datetime.fromisoformat(lease) if lease else None,
    )
