"""Running a ``CompactionPolicy`` on a conversation: measure its model input, summarize, record.

``compact_if_needed(store, chat_id, policy)`` is what an app calls before it
asks its model (or after each turn): when the model input passes the policy's
``max_tokens``, the policy's summarizer writes a summary of all but the last
messages and the store records it (``store.compact``, reason ``auto: ...``).
``summarizer_of(responder)`` makes a summarizer of any ``Responder``: the text
of its answer is the summary.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable
from typing import TYPE_CHECKING, Any

from chatledger.adapters.store.turns.responder import Responder, ResponderRequest
from chatledger.domain.compaction import compacted_messages
from chatledger.domain.compaction_policy import (
    CompactionPolicy,
    Summarizer,
    count_tokens,
    range_to_compact,
)

if TYPE_CHECKING:
    from chatledger.adapters.store.surface import Store

__all__ = ["SUMMARY_REQUEST", "compact_if_needed", "summarizer_of"]

SUMMARY_REQUEST = (
    "Summarize the conversation above for your own later use: keep every fact, decision, "
    "name, number and open question; leave out greetings and repetition."
)
"""The user message a responder-made summarizer adds after the messages to summarize."""


def compact_if_needed(
    store: Store, chat_id: str, policy: CompactionPolicy | None, *, tenant: str | None = None
) -> dict[str, Any] | None:
    """Compact the conversation if its model input passes the policy's size; the compaction, or None.

    ``policy=None`` (the default everywhere) does nothing. Measured on
    ``model_messages(chat, policy.format)`` with ``policy.tokenizer``.
    """
    if policy is None:
        return None
    reads = store.reads
    model_input = reads.model_messages(chat_id, policy.format, tenant=tenant, unanswered="omit")
    tokens = count_tokens(model_input, policy.tokenizer)
    if tokens <= policy.max_tokens:
        return None
    messages = reads.messages(chat_id, tenant=tenant)
    compactions = reads.compactions(chat_id, tenant=tenant)
    chosen = range_to_compact(messages, compactions, policy.keep_last)
    if chosen is None:
        return None
    first, last = chosen
    summary = policy.summarize(compacted_messages(messages[: last + 1], compactions))
    store.chats.compact(
        chat_id,
        from_message_id=messages[first]["id"],
        to_message_id=messages[last]["id"],
        summary=summary,
        actor=policy.actor,
        reason=f"auto: model input of {tokens:,} tokens over {policy.max_tokens:,}",
        tenant=tenant,
    )
    made: dict[str, Any] = reads.compactions(chat_id, tenant=tenant)[-1]
    return made


def summarizer_of(
    responder: Responder, *, chat_id: str = "compaction", ai_sdk: int = 7
) -> Summarizer:
    """A summarizer that asks ``responder`` (with ``SUMMARY_REQUEST``) and keeps its answer's text."""

    def summarize(messages: list[dict[str, Any]]) -> str:
        ask = {
            "id": "compaction-request",
            "role": "user",
            "parts": [{"type": "text", "text": SUMMARY_REQUEST}],
        }
        request = ResponderRequest(
            chat_id, "", [*messages, ask], "submit-message", "compaction-summary", ai_sdk=ai_sdk
        )
        answer = responder.respond(request)
        chunks = asyncio.run(_collect(answer)) if isinstance(answer, AsyncIterator) else answer
        return "".join(_deltas(chunks))

    return summarize


async def _collect(chunks: AsyncIterator[Any]) -> list[Any]:
    return [chunk async for chunk in chunks]


def _deltas(chunks: Iterable[Any]) -> list[str]:
    return [
        str(chunk.get("delta", ""))
        for chunk in chunks
        if isinstance(chunk, dict) and chunk.get("type") == "text-delta"
    ]
