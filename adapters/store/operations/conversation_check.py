"""One conversation re-derived from its events and compared with what is stored of it (for ``verify``).

The events are folded once, in order; the fold is then compared with the
snapshot (loading the usual way), the messages row, the audit timeline, the
approvals inbox and the continuation queue. Each disagreement becomes a
finding ``(where, what)``: ``where`` is ``log``, ``snapshot`` or
``read-model``. Nothing is changed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from uuid import UUID

from chatledger.adapters.store.reads.shown import masks_of, shown
from chatledger.domain.aggregate import Conversation
from chatledger.domain.continuation import status_of
from chatledger.domain.conversation import ConversationState
from chatledger.domain.errors import StoredDataError
from chatledger.domain.timeline import compact, describe
from chatledger.projections.projector import (
    approvals_of,
    continuation_of,
    full_timeline,
    summary_of,
)
from chatledger.projections.read_models import (
    ContinuationRequest,
    HistoryQuery,
    PendingApproval,
)

if TYPE_CHECKING:
    from collections.abc import Iterable

    from chatledger.adapters.persistence.log import ConversationLog
    from chatledger.domain.events import ConversationEvent
    from chatledger.projections.listing import ConversationSummary
    from chatledger.projections.read_models import ReadModelView

__all__ = ["ConversationCheck", "Inbox"]

Inbox = tuple[list[PendingApproval] | None, list[ContinuationRequest] | None]
"""A tenant's pending approvals and continuation requests, as the read models list them
(None: that list cannot be read, which ``verify`` reports once)."""


@dataclass
class ConversationCheck:
    """Checks one conversation: ``run()`` fills ``events`` and ``findings``."""

    log: ConversationLog
    view: ReadModelView
    key: UUID
    tenant: str
    chat_id: str
    events: int = 0
    """Events folded."""
    findings: list[tuple[str, str]] = field(default_factory=list)
    """``(where, what)`` for each disagreement, in the order found."""
    summary: ConversationSummary | None = None
    """The conversation list's row as the events give it (None: the log cannot be folded)."""

    def run(self, inbox: Inbox) -> None:
        """Fold the log, then compare the snapshot and every read model with the fold."""
        folded = self._fold()
        if folded is None:
            return
        conversation, timeline = folded
        state = conversation.state
        shown_state = shown(state)
        awaiting = approvals_of(shown_state, conversation.modified_on)
        self.summary = summary_of(conversation, len(awaiting), shown_state)
        self._check_snapshot(conversation)
        self._check_messages_row(conversation, shown_state)
        self._check_timeline(conversation, timeline)
        if inbox[0] is not None:
            self._check_approvals(conversation, shown_state, inbox[0])
        if inbox[1] is not None:
            self._check_continuation(state, inbox[1])

    def _found(self, where: str, what: str) -> None:
        self.findings.append((where, what))

    def _fold(self) -> tuple[Conversation, list[dict[str, Any]]] | None:
        """The conversation folded from every event, and its timeline as the events give it."""
        folded: Conversation | None = None
        event: Any
        timeline: list[dict[str, Any]] = []
        try:
            for event in self.log.events.get(self.key):
                expected = (folded.version if folded else 0) + 1
                if event.originator_version != expected:
                    self._found(
                        "log",
                        f"events are missing: version {event.originator_version} follows "
                        f"version {expected - 1}",
                    )
                    return None
                before = folded.state if folded else ConversationState(tenant="", chat_id="")
                timeline.append(compact(describe(event, before)).to_json())
                folded = event.mutate(folded)
                self.events += 1
        except Exception as error:  # a stored event that no longer decodes or applies
            self._found("log", f"the events cannot be folded: {type(error).__name__}: {error}")
            return None
        if folded is None:
            self._found("log", "the conversation has no events")
            return None
        state = folded.state
        if state.redactions:  # redactions hide content from every entry, also earlier ones
            events: Iterable[ConversationEvent] = self.log.events.get(self.key)  # type: ignore[assignment]
            again = full_timeline(events, None, masks_of(state))  # read the log again
            timeline = [compact(entry).to_json() for entry in again.values()]
        return folded, timeline

    def _check_snapshot(self, folded: Conversation) -> None:
        """Loading the usual way (newest snapshot plus later events) gives the fold."""
        try:
            loaded = self.log.load(self.key, self.tenant, self.chat_id)
        except StoredDataError as error:
            self._found("snapshot", f"loading (snapshot plus events) fails: {error}")
            loaded = folded
        if loaded.version != folded.version:
            self._found(
                "snapshot", f"loads at version {loaded.version}, the log has {folded.version}"
            )
        elif loaded.state.to_json() != folded.state.to_json():
            self._found("snapshot", "loading gives a different state than folding every event")

    def _check_messages_row(self, folded: Conversation, shown: ConversationState) -> None:
        """The messages row holds the fold's version, messages (as shown) and status."""
        row = self.view.conversation(self.key)
        if row is None:
            self._found("read-model", "no messages row")
            return
        if row.version != folded.version:
            self._found(
                "read-model", f"messages row at version {row.version}, log {folded.version}"
            )
        elif json.loads(row.messages_json) != shown.messages:
            self._found("read-model", "the messages row differs from the folded messages")
        expected = status_of(folded.state).status
        if row.status != expected:
            self._found("read-model", f"status {row.status!r}, expected {expected!r}")

    def _check_timeline(self, folded: Conversation, timeline: list[dict[str, Any]]) -> None:
        """The audit timeline has one entry per event, with the facts the event gives."""
        entries = [entry.to_json() for entry in self.view.history(self.key, HistoryQuery())]
        positions = [entry["position"] for entry in entries]
        if positions != list(range(1, folded.version + 1)):
            self._found(
                "read-model",
                f"the timeline has {len(positions)} entries for {folded.version} events",
            )
            return
        # Summaries are wording, which versions may change until a rebuild: not compared.
        differs = next(
            (e for e, t in zip(entries, timeline, strict=True) if _facts(e) != _facts(t)), None
        )
        if differs is not None:
            self._found(
                "read-model",
                f"timeline entry {differs['position']} differs from its event "
                "(actor, kind, details or time)",
            )

    def _check_approvals(
        self, folded: Conversation, shown: ConversationState, listed: list[PendingApproval]
    ) -> None:
        """The approvals inbox lists exactly the calls awaiting approval, as the events give them."""
        expected = approvals_of(shown, folded.modified_on)
        awaiting = {a.tool_call_id for a in expected}
        rows = [a for a in listed if a.chat_id == self.chat_id]
        ids = {a.tool_call_id for a in rows}
        if ids != awaiting:
            self._found(
                "read-model",
                f"approvals inbox lists {sorted(ids)}, the events give {sorted(awaiting)}",
            )
        elif _by_call(rows) != _by_call(expected):
            self._found(
                "read-model",
                "an approvals inbox row differs from the events (tool, input, message or time)",
            )

    def _check_continuation(
        self, state: ConversationState, queue: list[ContinuationRequest]
    ) -> None:
        """The continuation queue holds the conversation's pending request, if any."""
        continuation = continuation_of(state)
        queued = [c for c in queue if c.chat_id == self.chat_id]
        if queued != ([continuation] if continuation else []):
            self._found("read-model", "the continuation queue differs from the events")


def _by_call(rows: list[PendingApproval]) -> dict[str, tuple[Any, ...]]:
    """Approvals rows comparable across the read model and the fold (inputs as JSON)."""
    return {
        row.tool_call_id: (
            row.message_id,
            row.tool_name,
            json.dumps(row.input, sort_keys=True),
            row.approval_id,
            row.requested_at,
        )
        for row in rows
    }


def _facts(entry: dict[str, Any]) -> dict[str, Any]:
    """A timeline entry without its summary (wording)."""
    return {key: value for key, value in entry.items() if key != "summary"}
