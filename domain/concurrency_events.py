"""The event a policy for messages sent mid-answer records (``chatledger.domain.concurrency``)."""

from __future__ import annotations

from chatledger.domain.conversation import ConversationState
from chatledger.domain.events import ConversationEvent

__all__ = ["MidAnswerMessage"]


class MidAnswerMessage(ConversationEvent):
    """A user message arrived while an answer streamed, and the conversation's policy decided its fate.

    Audit only: the state does not change (the message itself, when kept, is
    its own ``SteeringQueued`` or ``MessageAppended`` event; a stopped answer
    its ``StreamClosed``).
    """

    policy: str
    """The policy applied: ``latest``, ``merge``, ``drop`` or ``debounce``."""
    outcome: str
    """What happened: ``stopped-running-answer``, ``queued-to-merge``, ``merged``, ``dropped``,
    ``debounced`` (queued, the answer waits for quiet) or ``answered-after-quiet``."""
    stream_id: str | None = None
    """The answer that was streaming (or, for ``merged``, the answer that takes the messages)."""
    message_ids: list[str]
    """The message(s) concerned (all of them for ``merged``)."""

    def apply_to(self, state: ConversationState) -> None:
        """Nothing: an audit record."""
