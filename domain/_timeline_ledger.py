"""How the audit timeline describes the ledger's events: a compaction, a recorded usage."""

from __future__ import annotations

from chatledger.domain._timeline_text import _Described, _id, _quote, _who
from chatledger.domain.compaction import MessagesCompacted
from chatledger.domain.conversation import ConversationState
from chatledger.domain.usage import UsageRecorded

__all__ = ["MessagesCompacted", "UsageRecorded", "_compacted", "_usage"]


def _compacted(event: MessagesCompacted, before: ConversationState) -> _Described:
    noun = "message" if event.count == 1 else "messages"
    summary = (
        f"{_who(event)} compacted {event.count} {noun} ({_id(event.from_message_id)} .. "
        f"{_id(event.to_message_id)}) into a summary for the model"
    )
    if event.reason:
        summary += f": {_quote(event.reason, 80)}"
    details = {
        "fromMessageId": event.from_message_id,
        "toMessageId": event.to_message_id,
        "count": event.count,
        "summary": event.summary,
        "reason": event.reason,
    }
    return summary, details, ()


def _usage(event: UsageRecorded, before: ConversationState) -> _Described:
    tokens = event.tokens
    what = f"step {event.step}" if event.step is not None else "turn"
    summary = f"{_who(event)} recorded the usage of a {what}: {tokens.known_total:,} tokens"
    if event.model:
        summary += f" ({_id(event.model)})"
    details = {
        "messageId": event.message_id,
        "model": event.model,
        "step": event.step,
        "source": event.source,
        **tokens.to_json(),
    }
    return summary, details, ()
