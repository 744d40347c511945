"""What a conversation records beside its messages: compactions of its model input, token usage,
what became of a message sent mid-answer.

``Chats`` answers these (its base class ``ChatRecords``); each is one decision
run through the unit of work, as every write of ``Chats``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from chatledger.domain.concurrency_events import MidAnswerMessage
from chatledger.domain.limits import check_names
from chatledger.domain.usage import Tokens, UsageRecorded, check_tokens, usage_tokens

if TYPE_CHECKING:
    from chatledger.adapters.store.unit_of_work import UnitOfWork
    from chatledger.domain.aggregate import Conversation
    from chatledger.domain.limits import Limits

__all__ = ["ChatRecords"]


class ChatRecords:
    """Compaction and usage, for ``Chats`` (which sets ``tenant``, ``_uow`` and ``_limits``)."""

    tenant: str
    _uow: UnitOfWork
    _limits: Limits

    def compact(
        self,
        chat_id: str,
        *,
        from_message_id: str,
        to_message_id: str,
        summary: str,
        actor: str,
        reason: str | None = None,
        tenant: str | None = None,
    ) -> int:
        """Let ``summary`` stand in for the messages ``from_message_id``..``to_message_id`` in model input.

        A ``MessagesCompacted`` event (who, when, why): ``model_messages()`` then shows one system
        message with the summary there; ``messages()`` and the timeline keep the originals
        (``compactions()`` says which), earlier versions are unchanged. Returns the count.
        """
        self._limits.check_value("summary", summary)
        self._limits.check_value("reason", reason)
        count: int = self._uow.act(
            tenant or self.tenant,
            chat_id,
            lambda c: c.compact(
                from_message_id, to_message_id, summary=summary, reason=reason, actor=actor
            ),
        )[2]
        return count

    def record_usage(
        self,
        chat_id: str,
        tokens: Tokens | Mapping[str, Any],
        *,
        model: str | None = None,
        message_id: str | None = None,
        step: int | None = None,
        source: str = "app",
        actor: str = "system",
        tenant: str | None = None,
    ) -> None:
        """Record the tokens a model call (``step``, from 1) or a whole turn (no step) used.

        ``tokens`` is a ``Tokens`` or an AI SDK usage object (``inputTokens``...).
        A ``UsageRecorded`` event for the usage ledger (``chatledger.adapters.store.usage``);
        it changes nothing else. AI SDK answers need no call: their stream's metadata is read.
        """
        counts = usage_tokens(tokens)
        check_tokens(counts, model=model, step=step, source=source)
        check_names(actor=actor, message_id=message_id, optional=True)
        fields = {f"{name}_tokens": value for name, value in asdict(counts).items()}
        event = {"message_id": message_id, "model": model, "step": step, "source": source}
        self._uow.act(
            tenant or self.tenant,
            chat_id,
            lambda c: c.trigger_event(UsageRecorded, **event, **fields, actor=actor),
        )

    def record_mid_answer(
        self,
        chat_id: str,
        *,
        tenant: str | None = None,
        actor: str,
        policy: str,
        outcome: str,
        stream_id: str | None,
        message_ids: list[str],
    ) -> None:
        """Record what the policy for messages sent mid-answer did (``MidAnswerMessage``, audit only)."""
        check_names(actor=actor)

        def decide(c: Conversation) -> None:
            c.trigger_event(
                MidAnswerMessage, policy=policy, outcome=outcome, stream_id=stream_id,
                message_ids=message_ids, actor=actor,
            )  # fmt: skip

        self._uow.act(tenant or self.tenant, chat_id, decide)
