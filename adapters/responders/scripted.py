"""Scripted responders: recorded chunk streams replayed in order, for tests and the demo.

The model port they implement (``Responder``, ``ResponderRequest``) is the turn
service's (``chatledger.adapters.store.turns.responder``), named here too, where
responders are written (docs/behaviour.md §9, "the model is a pluggable responder").
"""

from __future__ import annotations

import asyncio
import copy
import hashlib
import threading
from collections.abc import AsyncIterator, Iterable
from typing import Any

from chatledger.adapters.responders.demo import (
    APPROVAL_ID,
    MESSAGE_ID,
    TOOL_CALL_ID,
    approved_continuation_chunks,
    continuation_chunks,
    first_turn_chunks,
)
from chatledger.adapters.store.turns.responder import Chunk, Responder, ResponderRequest

__all__ = [
    "DemoResponder",
    "Responder",
    "ResponderRequest",
    "ScriptExhaustedError",
    "ScriptedResponder",
    "demo_responder",
]


class ScriptExhaustedError(RuntimeError):
    """A ``ScriptedResponder`` was asked for more answers than it was given."""


class ScriptedResponder:
    """Replays recorded chunk streams, one per request, in order.

    ``scripts`` is a list of answers, each a list of chunks. With ``cycle`` the
    answers start over after the last one; otherwise one more request raises
    ``ScriptExhaustedError`` (the app turns it into an ``error`` chunk).
    ``delay`` sleeps between chunks (seconds), to look like a model streaming.
    Every request is kept in ``requests``.
    """

    def __init__(
        self,
        scripts: Iterable[Iterable[Chunk]],
        *,
        delay: float = 0.0,
        cycle: bool = False,
        actor: str = "agent:scripted",
    ) -> None:
        self.scripts: list[list[Chunk]] = [list(script) for script in scripts]
        self.delay = delay
        self.cycle = cycle
        self.actor = actor
        """Recorded as the author of the streams this responder writes."""
        self.requests: list[ResponderRequest] = []
        self._next = 0
        self._lock = threading.Lock()

    @property
    def remaining(self) -> int:
        """Answers not used yet (without ``cycle``)."""
        return max(len(self.scripts) - self._next, 0)

    def respond(self, request: ResponderRequest) -> AsyncIterator[Chunk]:
        """The next recorded answer (deep-copied: the store takes ownership of the chunks)."""
        with self._lock:
            self.requests.append(request)
            index = self._pick(request)
        if self.cycle and self.scripts:
            index %= len(self.scripts)
        script = self.scripts[index] if index < len(self.scripts) else None
        return self._play(script, index)

    def _pick(self, request: ResponderRequest) -> int:
        """The index of the answer for ``request`` (the next one in order; under the lock)."""
        index = self._next
        self._next += 1
        return index

    async def _play(self, script: list[Chunk] | None, index: int) -> AsyncIterator[Chunk]:
        if script is None:
            raise ScriptExhaustedError(
                f"scripted responder has {len(self.scripts)} answer(s); request {index + 1} has none"
            )
        for position, chunk in enumerate(script):
            if position and self.delay:
                await asyncio.sleep(self.delay)
            yield copy.deepcopy(chunk)


class DemoResponder(ScriptedResponder):
    """The demo turn (``chatledger.adapters.responders.demo``) for every conversation.

    A new message gets the first turn (a ``delete_file`` call awaiting
    approval); a continuation gets the answer to the human's decision: after a
    denial, the model's answer to the reason; after an approval, the tool runs
    (its ``tool-output-available``) and the answer uses its result. The answer
    depends on the request only, so any number of server processes give the
    same answers.
    """

    def __init__(self, *, delay: float = 0.0) -> None:
        super().__init__(
            [first_turn_chunks(), continuation_chunks(), approved_continuation_chunks()],
            delay=delay,
            actor="agent:ops-assistant",
        )

    def _pick(self, request: ResponderRequest) -> int:
        if request.trigger != "continuation":
            return 0
        return 2 if _approved(request.messages) else 1

    def respond(self, request: ResponderRequest) -> AsyncIterator[Chunk]:
        """The demo answer for ``request``, with ids of its own after the conversation's first turn.

        The recording names one message, one tool call and one approval; a
        second message in the same chat would reuse them (refused at
        ``start``, its tool chunks taken for replays). So a turn after the
        first gets ids derived from the message being written, and a
        continuation keeps the ids of the call it continues.
        """
        ids = _turn_ids(request)
        with self._lock:
            self.requests.append(request)
            index = self._pick(request)
        script = [_renamed(chunk, ids) for chunk in self.scripts[index]]
        return self._play(script, index)


_RECORDED = {"messageId": MESSAGE_ID, "toolCallId": TOOL_CALL_ID, "approvalId": APPROVAL_ID}


def _turn_ids(request: ResponderRequest) -> dict[str, str]:
    """The message, tool-call and approval ids the demo's answer to ``request`` uses."""
    if request.trigger == "continuation" and request.messages:
        for part in request.messages[-1].get("parts", []):
            if part.get("type") == "tool-delete_file" and isinstance(part.get("approval"), dict):
                return {
                    "messageId": request.message_id,
                    "toolCallId": part["toolCallId"],
                    "approvalId": part["approval"]["id"],
                }
    if not any(_uses_recorded_ids(message) for message in request.messages):
        return dict(_RECORDED)  # the first turn is the recording as it was sent
    suffix = hashlib.sha256(request.message_id.encode()).hexdigest()[:16]
    return {
        "messageId": request.message_id,
        "toolCallId": f"call_{suffix}",
        "approvalId": f"appr_{suffix}",
    }


def _uses_recorded_ids(message: dict[str, Any]) -> bool:
    """Whether ``message`` already holds the recording's message or tool-call id."""
    if message.get("id") == MESSAGE_ID:
        return True
    return any(part.get("toolCallId") == TOOL_CALL_ID for part in message.get("parts", []))


def _renamed(chunk: Chunk, ids: dict[str, str]) -> Chunk:
    """``chunk`` with the recording's ids replaced by ``ids``."""
    return {
        key: ids[key] if key in ids and value == _RECORDED[key] else value
        for key, value in chunk.items()
    }


def _approved(messages: list[dict[str, Any]]) -> bool:
    """Whether the demo's call was approved (and so should run) in the continued message."""
    parts = messages[-1].get("parts", []) if messages else []
    return any(
        part.get("type") == "tool-delete_file"
        and part.get("state") == "approval-responded"
        and (part.get("approval") or {}).get("approved") is True
        for part in parts
    )


def demo_responder(*, delay: float = 0.0) -> DemoResponder:
    """The demo turn for every conversation, ``delay`` seconds between chunks (see ``DemoResponder``)."""
    return DemoResponder(delay=delay)
