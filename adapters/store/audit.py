"""The audit timeline of a conversation (SPEC §5 ``history``), read from its read model."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, TextIO

from chatledger.domain.aggregate import conversation_id
from chatledger.domain.timeline import KINDS, TimelineEntry
from chatledger.projections.projector import full_timeline
from chatledger.projections.read_models import HistoryQuery

if TYPE_CHECKING:
    from chatledger.adapters.persistence.log import ConversationLog
    from chatledger.domain.aggregate import Conversation
    from chatledger.domain.events import ConversationEvent
    from chatledger.projections.projector import Projector
    from chatledger.projections.read_models import ReadModelView

__all__ = ["Audit", "write_jsonl"]


class Audit:
    """``history()`` of ``ConversationStore`` (mixed in)."""

    if TYPE_CHECKING:
        tenant: str
        _view: ReadModelView
        _projector: Projector
        _log: ConversationLog

        def _load(self, tenant: str, chat_id: str, version: int | None = None) -> Conversation: ...

    def history(
        self,
        chat_id: str,
        *,
        tenant: str | None = None,
        kinds: Iterable[str] | None = None,
        actor: str | None = None,
        after: int = 0,
        limit: int | None = None,
        full: bool = False,
    ) -> list[TimelineEntry]:
        """The conversation's audit timeline: one entry per event, in order.

        ``kinds`` keeps entries of those kinds (see ``chatledger.domain.timeline.KINDS``),
        ``actor`` those of one actor, ``after`` those after a position.
        Replayed and refused chunks show in the ``marks`` and ``details`` of
        their batch's entry. A batch's details list only those chunks (the
        read model stays small); ``full=True`` lists every chunk, re-read from
        the log. Raises ConversationNotFoundError for an unknown chat.
        """
        tenant = tenant or self.tenant
        wanted = None if kinds is None else [kinds] if isinstance(kinds, str) else list(kinds)
        unknown = sorted(set(wanted or ()) - set(KINDS))
        if unknown:
            raise ValueError(
                f"unknown timeline kind(s) {unknown}; the kinds are {', '.join(KINDS)}"
            )
        key = conversation_id(tenant, chat_id)
        self._projector.catch_up()
        if self._view.conversation(key) is None:
            self._load(tenant, chat_id)  # raises ConversationNotFoundError
        entries = self._view.history(key, HistoryQuery(wanted, actor, after, limit))
        batches = {entry.position for entry in entries if entry.details.get("compact")}
        if not full or not batches:
            return entries
        events: Iterable[ConversationEvent] = self._log.events.get(key)  # type: ignore[assignment]
        fuller = full_timeline(events, batches)
        return [fuller.get(entry.position, entry) for entry in entries]


def write_jsonl(entries: Iterable[TimelineEntry], out: TextIO) -> int:
    """Write timeline entries as JSON Lines (one object per line); returns how many."""
    count = 0
    for entry in entries:
        out.write(json.dumps(entry.to_json()) + "\n")  # ASCII: lone surrogates survive
        count += 1
    return count
