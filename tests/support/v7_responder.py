"""A scripted responder that writes what only AI SDK 7 sends, for ``chatledger serve --responder``.

``policy`` answers with a tool call that a policy denies on the stream (an
automatic approval request with its reason, the ``tool-approval-response`` and
the ``tool-output-denied``), then text. ``steered`` writes one step, waits
until a steering message is queued for the chat (or a few seconds), takes it
at the step boundary with a ``steering-message`` chunk, then answers it.
``waits`` writes one step of its first answer, waits the same way until a
user message is queued, and finishes without taking it (so it becomes the
next turn); later answers are one text step at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from chatledger.adapters.responders.scripted import ResponderRequest

__all__ = ["POLICY_REASON", "policy", "steered", "waits"]

Chunk = dict[str, Any]
POLICY_REASON = "deleting outside /tmp is forbidden"


def _text(tid: str, text: str) -> list[Chunk]:
    return [
        {"type": "text-start", "id": tid},
        {"type": "text-delta", "id": tid, "delta": text},
        {"type": "text-end", "id": tid},
    ]


class _Policy:
    def respond(self, request: ResponderRequest) -> AsyncIterator[Chunk]:
        return self._chunks()

    async def _chunks(self) -> AsyncIterator[Chunk]:
        call = {"toolCallId": "call-rm", "toolName": "rm"}
        for chunk in [
            {"type": "start"},
            {"type": "start-step"},
            {"type": "tool-input-available", **call, "input": {"path": "/etc"}},
            {"type": "tool-approval-request", "toolCallId": "call-rm", "approvalId": "ap-rm",
             "isAutomatic": True, "reason": "rm needs a policy check"},
            {"type": "tool-approval-response", "approvalId": "ap-rm", "approved": False,
             "reason": POLICY_REASON},
            {"type": "tool-output-denied", "toolCallId": "call-rm"},
            {"type": "finish-step"},
            {"type": "start-step"},
            *_text("t1", "I may not delete /etc."),
            {"type": "finish-step"},
            {"type": "finish", "finishReason": "stop"},
        ]:  # fmt: skip
            await asyncio.sleep(0.01)
            yield chunk


async def _queued(request: ResponderRequest) -> list[dict[str, Any]]:
    """The user messages queued for this answer, once there is one (or after about 5 s: none)."""
    import os

    from chatledger import ConversationStore

    store = ConversationStore.open(os.environ["CHATLEDGER_URL"], tenant=request.tenant)
    try:
        queued: list[dict[str, Any]] = []
        for _ in range(500):
            queued = await asyncio.to_thread(store.steering, request.chat_id)
            if queued:
                break
            await asyncio.sleep(0.01)
        return queued
    finally:
        store.close()


class _Steered:
    def respond(self, request: ResponderRequest) -> AsyncIterator[Chunk]:
        return self._chunks(request)

    async def _chunks(self, request: ResponderRequest) -> AsyncIterator[Chunk]:
        yield {"type": "start"}
        yield {"type": "start-step"}
        for chunk in _text("t1", "Paris is sunny."):
            yield chunk
        yield {"type": "finish-step"}
        queued = await _queued(request)
        for message in queued:
            yield {"type": "steering-message", "id": message["id"], "parts": message["parts"]}
        yield {"type": "start-step"}
        for chunk in _text("t2", f"Taking {len(queued)} steering message(s) into account."):
            yield chunk
        yield {"type": "finish-step"}
        yield {"type": "finish", "finishReason": "stop"}


class _Waits:
    def respond(self, request: ResponderRequest) -> AsyncIterator[Chunk]:
        return self._chunks(request)

    async def _chunks(self, request: ResponderRequest) -> AsyncIterator[Chunk]:
        first = len(request.messages) == 1
        yield {"type": "start"}
        yield {"type": "start-step"}
        for chunk in _text("t1", "Paris is sunny." if first else "Rome is rainy."):
            yield chunk
        yield {"type": "finish-step"}
        if first:
            await _queued(request)  # the user speaks meanwhile; this answer does not take it
        yield {"type": "finish", "finishReason": "stop"}


policy = _Policy()
steered = _Steered()
waits = _Waits()
