"""``POST /api/chat`` (and the WebSocket's ``send``): parse a ``useChat`` request, take the turn, frame the answer.

The request is planned by the pure ``use_chat`` planner against the stored
messages, recorded and opened by the turn service (``store.turns.take``), and
run by the app's ``TurnRunner``; this module only parses and frames. A user
message sent while an answer streams (AI SDK 7) is recorded as a steering
message; its request is answered once that answer ends
(``chatledger.adapters.store.turns.steering``).
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio.from_thread
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from chatledger.adapters.http.attachments import AttachmentRoutes, has_links
from chatledger.adapters.http.auth import Identity
from chatledger.adapters.http.errors import invalid
from chatledger.adapters.http.requests import BodyLimits, read_body, string_field
from chatledger.adapters.http.resume import Resumes
from chatledger.adapters.http.sse import DONE, KEEP_ALIVE, sse_body, sse_response
from chatledger.adapters.http.use_chat import CLIENT_TRIGGERS, plan_use_chat
from chatledger.adapters.store import ConversationStore
from chatledger.adapters.store.turns.runner import TurnRunner
from chatledger.adapters.store.turns.service import Steered, Turn
from chatledger.adapters.store.turns.steering import steered_answer

__all__ = ["ChatSends"]


class ChatSends:
    """The send endpoint of one app: ``useChat`` requests recorded, their answers started."""

    def __init__(
        self,
        store: ConversationStore,
        runner: TurnRunner,
        resumes: Resumes,
        identify: Callable[[Request], Identity],
        *,
        limits: BodyLimits,
        keepalive_seconds: float,
    ) -> None:
        self.store, self.runner, self.resumes = store, runner, resumes
        self.identify = identify
        self.limits = limits
        self.keepalive_seconds = keepalive_seconds

    async def post(self, request: Request) -> Response:
        """``POST /api/chat``: the ``DefaultChatTransport`` send; the answer streams back as SSE."""
        who = self.identify(request)
        body = await read_body(request, self.limits)
        chat_id = string_field(body, "id")
        assert chat_id is not None
        trigger = body.get("trigger", "submit-message")
        if trigger not in CLIENT_TRIGGERS:
            raise invalid(f"'trigger' must be one of {', '.join(CLIENT_TRIGGERS)}, not {trigger!r}")
        message_id = string_field(body, "messageId", required=False)
        messages = body.get("messages")
        if not isinstance(messages, list) or not all(
            isinstance(m, dict) and isinstance(m.get("id"), str) and isinstance(m.get("role"), str)
            for m in messages
        ):
            raise invalid("'messages' must be a list of UI messages, each with an id and a role")
        if has_links(messages):  # a client given attachments as links
            unlink = AttachmentRoutes(self.store, self.identify).unlink
            await run_in_threadpool(unlink, who.tenant, chat_id, messages)
        turn = await self.take(who, chat_id, messages, trigger, message_id, body)
        if isinstance(turn, Steered):
            return sse_response(self._steered(turn))
        return sse_response(sse_body(self.runner.start(turn), self.keepalive_seconds))

    async def take(
        self,
        who: Identity,
        chat_id: str,
        messages: list[Any],
        trigger: str,
        message_id: str | None,
        body: dict[str, Any],
    ) -> Turn | Steered:
        """Record what a send added and open its answer's stream (``store.turns.take``).

        The chat is marked as opening meanwhile: a resume that arrives between
        the client's message and the stream's open waits for the stream
        instead of answering that nothing is streaming.
        """
        plan = functools.partial(_plan, messages=messages, trigger=trigger, message_id=message_id)
        async with self.resumes.opening(who.tenant, chat_id) as opening:
            take = functools.partial(
                self.store.turns.take, chat_id, plan, tenant=who.tenant, actor=who.actor,
                responder_actor=self.runner.actor, body=body, owner=self.runner.owner,
                stop_running=self._stop_running,
            )  # fmt: skip
            turn = await run_in_threadpool(take)
            if not isinstance(turn, Steered):  # its stream is open now
                opening.stream_id = turn.writer.stream_id
        return turn

    def _stop_running(self, stream_id: str, actor: str, reason: str) -> bool:
        """From the turn's worker thread: stop the answer this app writes on ``stream_id`` (policy
        ``latest``); False when another process writes it."""
        stopped: bool = anyio.from_thread.run(self.runner.stop, stream_id, actor, reason)
        return stopped

    async def answer_of(self, steered: Steered) -> Turn | None:
        """The turn of a steering message's own answer once the running one ended (None: none)."""
        answer = None
        async for item in self._steered_answer(steered):
            answer = item or answer
        return answer

    async def _steered(self, steered: Steered) -> AsyncIterator[str]:
        """The SSE body answering a message sent mid-answer: once that answer ends, its own, if any."""
        async for turn in self._steered_answer(steered):
            if turn is None:
                yield KEEP_ALIVE
                continue
            async for event in sse_body(self.runner.start(turn), self.keepalive_seconds):
                yield event
            return
        yield DONE  # the running answer took it (or another request answered it)

    def _steered_answer(self, steered: Steered) -> AsyncIterator[Turn | None]:
        return steered_answer(
            self.store.turns, steered, responder_actor=self.runner.actor,
            tick=self.keepalive_seconds,
        )  # fmt: skip


def _plan(
    stored: list[dict[str, Any]], *, messages: list[Any], trigger: str, message_id: str | None
) -> Any:
    """``plan_use_chat`` with the stored messages first, as ``Turns.take`` calls a planner."""
    return plan_use_chat(stored, messages, trigger, message_id)
