"""Checks that what the store gives back is what was written (a fast wrong answer is no result)."""

from __future__ import annotations

from typing import Any

from storeapi import StoreOpener
from workload import Conversation

Message = dict[str, Any]


def text_of(message: Message) -> str:
    """The concatenated text of a UIMessage's ``text`` parts."""
    return "".join(p.get("text", "") for p in message.get("parts", []) if p.get("type") == "text")


def _tool_done(message: Message, call_id: str) -> bool:
    return any(
        p.get("toolCallId") == call_id and p.get("state") == "output-available"
        for p in message.get("parts", [])
    )


def problems(messages: list[Message], conv: Conversation) -> list[str]:
    """Differences between ``messages`` and the conversation's turns; empty when they match."""
    expected = 2 * len(conv.turns)
    if len(messages) != expected:
        return [f"{conv.chat_id}: {len(messages)} messages, expected {expected}"]
    found: list[str] = []
    for n, turn in enumerate(conv.turns):
        user, reply = messages[2 * n], messages[2 * n + 1]
        if (user.get("role"), text_of(user)) != ("user", text_of(turn.user_message)):
            found.append(f"{conv.chat_id} turn {n}: user message differs")
        if reply.get("role") != "assistant" or text_of(reply) != turn.assistant_text:
            found.append(f"{conv.chat_id} turn {n}: assistant text differs")
        if turn.tool_call_id and not _tool_done(reply, turn.tool_call_id):
            found.append(f"{conv.chat_id} turn {n}: tool part missing or not output-available")
    return found


def check_store(opener: StoreOpener, url: str, convs: list[Conversation]) -> list[str]:
    """Open the store at ``url`` and compare each conversation's messages with the workload."""
    store = opener(url)
    try:
        return [p for conv in convs for p in problems(store.messages(conv.chat_id), conv)][:5]
    finally:
        store.close()
