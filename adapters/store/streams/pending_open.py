"""A stream's open decided but not committed yet, and what becomes of it when another writer commits first.

``open_stream(..., commit=False)`` decides the open (and the user message
given with it) now and leaves its events pending; the writer commits them
with the stream's first batch. If that commit clashes, the writer reloads
the conversation and asks ``PendingOpen.again``, which applies the pure rule
of ``chatledger.domain.pending_open`` to the events stored since.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from chatledger.domain.aggregate import Conversation
from chatledger.domain.errors import StreamOpenLostError
from chatledger.domain.pending_open import LOST, RECORDED, fate, opened_since

__all__ = ["PendingOpen", "record_nothing"]


@dataclass
class PendingOpen:
    """A stream's open decided but not committed yet (see ``StreamWriter``)."""

    decide: Callable[[Conversation], None]
    """The open's decision (and the user message given with it), to run again on a reloaded
    conversation when only bookkeeping was committed meanwhile (``domain.pending_open``)."""
    base: int
    """The version the decision was made on."""
    own: list[Any]
    """The events the decision recorded."""

    @classmethod
    def decided(
        cls, decide: Callable[[Conversation], None], conversation: Conversation
    ) -> PendingOpen:
        """The open ``decide`` just recorded on ``conversation`` (its events still pending)."""
        own = list(conversation.pending_events)
        return cls(decide, conversation.version - len(own), own)

    def again(
        self, conversation: Conversation, stream_id: str, since: Sequence[Any]
    ) -> PendingOpen | None:
        """This open on a reloaded ``conversation``, given the events stored ``since`` its base.

        None when it was found stored (committed, though the commit's answer
        was lost); itself, decided again on ``conversation``, when only
        bookkeeping came in between. Raises StreamOpenLostError when another
        writer committed more than that (``domain.pending_open``).
        """
        found = fate(stream_id, self.own, since)
        if found == RECORDED:
            return None
        lost = StreamOpenLostError(conversation.state.chat_id, stream_id, opened_since(since))
        if found == LOST:
            raise lost
        base = conversation.version
        try:
            self.decide(conversation)
        except Exception as refused:
            raise lost from refused
        self.base = base
        self.own = list(conversation.pending_events)
        return self


def record_nothing(conversation: Conversation) -> None:
    """Commit only what is pending already (a stream's open)."""
