"""Re-running a recorded conversation against a responder, turn by turn, into a new conversation.

The user messages (and any system message before them) come from the
recording. The responder answers through the usual turn machinery
(``TurnRunner``), so the replay is an ordinary conversation, owned by nobody
(no worker continues it), whose metadata names the recording
(``replayOf``). No tool runs for real:

- a call the responder leaves to the client (``input-available``) gets the
  recorded result of the **matching** recorded call (same turn, same tool,
  exactly the same input: ``domain.replay_diff.CallBook``), else nothing
  (``unmatched-tool-call``);
- a call awaiting approval gets the recorded human decision of its match,
  else nothing (``unanswered-approval``);
- a result the responder streams itself (a tool it ran in-process) is
  replaced by the matching recorded result, or by an ``output-error``
  (``NO_RECORDED_RESULT``) for a call that matches none.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from chatledger.adapters.replay.report import ReplayReport
from chatledger.adapters.store.turns.responder import Chunk, Responder, ResponderRequest, actor_of
from chatledger.adapters.store.turns.runner import TurnRunner
from chatledger.domain.aggregate import conversation_id
from chatledger.domain.owners import NOBODY
from chatledger.domain.replay_diff import (
    CallBook,
    Divergence,
    RecordedCall,
    divergences,
    turn_records,
)

if TYPE_CHECKING:
    from chatledger.adapters.store.surface import Store
    from chatledger.adapters.store.turns.service import Turn
    from chatledger.domain.continuation import WaitingCall

__all__ = ["MAX_STEPS", "NO_RECORDED_RESULT", "REPLAY_OF", "replay", "replay_async"]

NO_RECORDED_RESULT = "chatledger replay: no recorded result for this call (another tool or input)"
"""The error a tool call the responder ran itself gets when it matches no recorded call."""

REPLAY_OF = "replayOf"
"""The metadata key naming the recording a replay conversation replays."""

MAX_STEPS = 50
"""Continuations one turn may take in a replay before it is cut short."""

_RESULTS = ("tool-output-available", "tool-output-error")


def replay(
    store: Store,
    chat_id: str,
    responder: Responder,
    *,
    tenant: str | None = None,
    into: str | None = None,
    actor: str = "system:replay",
) -> ReplayReport:
    """Replay conversation ``chat_id`` against ``responder``; where the new run diverges.

    Blocking (it runs its own event loop): call ``replay_async`` from async
    code. ``into`` names the new conversation (default: ``CHAT.replay-XXXXXXXX``);
    ``actor`` is who records the replayed user messages' decisions and results.
    """
    return asyncio.run(
        replay_async(store, chat_id, responder, tenant=tenant, into=into, actor=actor)
    )


async def replay_async(
    store: Store,
    chat_id: str,
    responder: Responder,
    *,
    tenant: str | None = None,
    into: str | None = None,
    actor: str = "system:replay",
) -> ReplayReport:
    """``replay``, for async code (the store calls still block, briefly, as the runner's do)."""
    tenant = tenant or store.tenant
    recorded = turn_records(_events(store, chat_id, tenant))
    into = into or f"{chat_id}.replay-{secrets.token_hex(4)}"
    store.chats.start_conversation(
        into, tenant=tenant, actor=actor, owner=NOBODY,
        ai_sdk=store.reads.ai_sdk_of(chat_id, tenant=tenant),
        metadata={"title": f"Replay of {chat_id}", "replayOf": chat_id},
    )  # fmt: skip
    # Also as the conversation's own metadata: standing grants leave a replay to its recording.
    store.chats.set_metadata(into, {REPLAY_OF: chat_id}, tenant=tenant, actor=actor)
    run = _Run(store, into, tenant, responder, CallBook(recorded), actor)
    for turn in recorded:
        for message, who in turn.before:
            store.chats.append_message(into, message, tenant=tenant, actor=who)
        await run.turn(turn.index, turn.user_message, turn.user_actor)
    replayed = turn_records(_events(store, into, tenant))
    found = sorted([*run.problems, *divergences(recorded, replayed)], key=lambda item: item.turn)
    return ReplayReport(chat_id, into, tenant, recorded, replayed, found, run.served)


def _events(store: Store, chat_id: str, tenant: str) -> list[Any]:
    """The conversation's events as stored (ConversationNotFoundError for an unknown chat)."""
    store.reads.version(chat_id, tenant=tenant)
    log: Any = store.log  # type: ignore[attr-defined]
    return list(log.events.get(conversation_id(tenant, chat_id)))


class _Run:
    """One replay under way: answers each step of a turn from the recording where it matches."""

    def __init__(
        self, store: Store, chat_id: str, tenant: str, responder: Responder, book: CallBook,
        actor: str,
    ) -> None:  # fmt: skip
        self.store, self.chat_id, self.tenant = store, chat_id, tenant
        self.responder, self.book, self.actor = responder, book, actor
        self.problems: list[Divergence] = []
        self.served = 0
        self._reported: set[tuple[str, str]] = set()

    async def turn(self, index: int, user_message: dict[str, Any], user_actor: str) -> None:
        """Send the turn's user message, then answer and continue until the turn rests."""
        turns = self.store.turns
        opened = turns.open(
            self.chat_id, tenant=self.tenant, actor=actor_of(self.responder),
            trigger="submit-message", user_message=user_message, user_actor=user_actor,
        )  # fmt: skip
        await self._answer(opened, index)
        for _ in range(MAX_STEPS):
            status = self.store.reads.status(self.chat_id, tenant=self.tenant)
            if status.status == "ready-to-continue":
                opened = turns.open(
                    self.chat_id, tenant=self.tenant, actor=actor_of(self.responder),
                    trigger="continuation", continuation=True,
                    request_id=status.continuation_request,
                )  # fmt: skip
                await self._answer(opened, index)
            elif not status.waiting_for or not self._serve(index, status.waiting_for):
                return

    async def _answer(self, opened: Turn, index: int) -> None:
        runner = TurnRunner(_Serving(self, index))
        runner.run(opened)
        await asyncio.gather(*list(runner.tasks))

    def _serve(self, index: int, waiting: list[WaitingCall]) -> bool:
        """Answer the calls waited on that match recorded ones; whether anything was answered."""
        answered = False
        for call in waiting:
            match = self.book.match(index, call.tool_call_id, call.tool_name, call.input)
            if call.state == "approval-requested":
                answered |= self._decide(index, call, match)
            else:
                answered |= self._give_result(index, call, match)
        return answered

    def _decide(self, index: int, call: WaitingCall, match: RecordedCall | None) -> bool:
        if match is None or match.decision is None:
            self._report(
                index,
                "unanswered-approval",
                call.tool_call_id,
                call.tool_name,
                call.input,
                "no recorded decision for this call (another tool or input)",
            )
            return False
        self.store.chats.respond_to_approval(
            self.chat_id, tenant=self.tenant, approval_id=call.approval_id,
            approved=bool(match.decision["approved"]), reason=match.decision.get("reason"),
            actor=self.actor, auto_continue=True,
        )  # fmt: skip
        self.served += 1
        return True

    def _give_result(self, index: int, call: WaitingCall, match: RecordedCall | None) -> bool:
        output = None if match is None else match.output
        if output is None or output["state"] not in ("output-available", "output-error"):
            self._report(
                index,
                "unmatched-tool-call",
                call.tool_call_id,
                call.tool_name,
                call.input,
                "no recorded result for this call (another tool or input): left unanswered",
            )
            return False
        self.store.chats.add_tool_output(
            self.chat_id, call.tool_call_id, tenant=self.tenant, state=output["state"],
            output=output.get("output"), error_text=output.get("errorText"),
            actor=self.actor, auto_continue=True,
        )  # fmt: skip
        self.served += 1
        return True

    def _report(
        self, index: int, kind: str, call_id: str, name: str, input: Any, detail: str
    ) -> None:
        """Record a call the replay could not answer from the recording (once per call and kind)."""
        if (kind, call_id) in self._reported:
            return
        self._reported.add((kind, call_id))
        self.problems.append(
            Divergence(index, kind, detail, None, {"toolName": name, "input": input})
        )

    def served_result(self, index: int, tool_call_id: str, name: str, input: Any) -> Chunk | None:
        """The recorded result for a result the responder streamed itself; None: it matches none."""
        match = self.book.match(index, tool_call_id, name, input)
        output = None if match is None else match.output
        if output is None or output["state"] not in ("output-available", "output-error"):
            self._report(
                index,
                "unmatched-tool-call",
                tool_call_id,
                name,
                input,
                "the responder ran a call that matches no recorded one: it got an error, not a result",
            )
            return None
        self.served += 1
        if output["state"] == "output-available":
            return {
                "type": "tool-output-available",
                "toolCallId": tool_call_id,
                "output": output["output"],
            }
        return {
            "type": "tool-output-error",
            "toolCallId": tool_call_id,
            "errorText": output["errorText"],
        }


class _Serving:
    """The responder under replay, with every tool result it streams taken from the recording."""

    def __init__(self, run: _Run, index: int) -> None:
        self.run, self.index = run, index
        self.actor = actor_of(run.responder)

    def respond(self, request: ResponderRequest) -> AsyncIterator[Chunk]:
        """The responder's answer, its tool results replaced (see the module's docstring)."""
        return self._play(request)

    async def _play(self, request: ResponderRequest) -> AsyncIterator[Chunk]:
        calls = _known_calls(request.messages)
        async for chunk in _iterate(self.run.responder.respond(request)):
            kind = chunk.get("type") if isinstance(chunk, dict) else None
            if kind == "tool-input-available":
                calls[str(chunk.get("toolCallId"))] = (
                    str(chunk.get("toolName")),
                    chunk.get("input"),
                )
            elif kind in _RESULTS and str(chunk.get("toolCallId")) in calls:
                call_id = str(chunk["toolCallId"])
                served = self.run.served_result(self.index, call_id, *calls[call_id])
                chunk = served or {
                    "type": "tool-output-error", "toolCallId": call_id, "errorText": NO_RECORDED_RESULT,
                }  # fmt: skip
            yield chunk


def _known_calls(messages: list[dict[str, Any]]) -> dict[str, tuple[str, Any]]:
    """Tool calls already in the conversation, by id: (tool name, input)."""
    calls: dict[str, tuple[str, Any]] = {}
    for message in messages:
        for part in message.get("parts", []):
            kind = str(part.get("type", ""))
            if kind == "dynamic-tool":
                calls[str(part.get("toolCallId"))] = (str(part.get("toolName")), part.get("input"))
            elif kind.startswith("tool-") and "toolCallId" in part:
                calls[str(part["toolCallId"])] = (kind.removeprefix("tool-"), part.get("input"))
    return calls


async def _iterate(answer: Any) -> AsyncIterator[Any]:
    """A responder's answer as an async iterator (a plain iterator advanced in a worker thread)."""
    if hasattr(answer, "__aiter__"):
        async for chunk in answer:
            yield chunk
        return
    iterator, done = iter(answer), object()
    while (chunk := await asyncio.to_thread(next, iterator, done)) is not done:
        yield chunk
