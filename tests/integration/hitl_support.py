"""Builders and readers for the human-in-the-loop tests (``test_hitl*.py``).

Conversations are built the way they arrive in production: AI SDK v6 chunk
streams as ``streamText(...).toUIMessageStream()`` sends them (``start``,
``start-step``, ``tool-input-start``/``-delta``/``-available``,
``tool-approval-request``, ``finish-step``, ``finish`` with ``finishReason``
``tool-calls``), and imported assistant UIMessages whose tool parts are in a
given state. The readers decode the stored log (``store.log``, through
``tests.support.ledger``) so the tests can check what was *recorded*, not only
what is shown.
"""

from __future__ import annotations

import copy
import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from chatledger import ConversationStore
from chatledger.domain.events import (
    ChunksReceived,
    ContinuationRequested,
    ConversationEvent,
    ToolApprovalResponded,
    ToolOutputAdded,
)
from tests.support import builders
from tests.support.builders import text_chunks
from tests.support.ledger import stored_events

ALICE = "user:alice"
BOB = "user:bob"
BOT = "agent:support-bot"
RUNNER = "agent:tool-runner"
DEFAULT_DENIAL = "Tool execution denied by user."

E = TypeVar("E", bound=ConversationEvent)


# -- tool calls and chunk streams ---------------------------------------------


@dataclass(frozen=True)
class Call:
    """One tool call the model makes in a step."""

    call_id: str
    tool: str
    input: dict[str, Any]
    approval_id: str | None = None
    """Set: the server asks for approval (``tool-approval-request``)."""
    server_output: Any = None
    """Set: the server ran the tool at once (``tool-output-available`` in the same step)."""


def tool_input_chunks(call: Call, *, pieces: int = 3) -> list[dict[str, Any]]:
    """``tool-input-start``, the input JSON in ``pieces`` deltas, ``tool-input-available``."""
    text = json.dumps(call.input, separators=(",", ":"))
    size = max(1, -(-len(text) // pieces))
    deltas = [text[i : i + size] for i in range(0, len(text), size)]
    return [
        {"type": "tool-input-start", "toolCallId": call.call_id, "toolName": call.tool},
        *(
            {"type": "tool-input-delta", "toolCallId": call.call_id, "inputTextDelta": d}
            for d in deltas
        ),
        {
            "type": "tool-input-available",
            "toolCallId": call.call_id,
            "toolName": call.tool,
            "input": call.input,
        },
    ]


def tool_step_chunks(
    message_id: str | None, calls: Sequence[Call], *, intro: str = "Let me do that."
) -> list[dict[str, Any]]:
    """A whole turn whose one step ends in tool calls, as the AI SDK server streams it."""
    chunks: list[dict[str, Any]] = [
        {"type": "start", "messageId": message_id} if message_id else {"type": "start"}
    ]
    chunks.append({"type": "start-step"})
    head, _, rest = intro.partition(" ")
    chunks += text_chunks("txt-1", f"{head} ", rest)
    for call in calls:
        chunks += tool_input_chunks(call)
        if call.server_output is not None:
            chunks.append(
                {
                    "type": "tool-output-available",
                    "toolCallId": call.call_id,
                    "output": call.server_output,
                }
            )
    for call in calls:
        if call.approval_id is not None:
            chunks.append(
                {
                    "type": "tool-approval-request",
                    "approvalId": call.approval_id,
                    "toolCallId": call.call_id,
                }
            )
    chunks += [{"type": "finish-step"}, {"type": "finish", "finishReason": "tool-calls"}]
    return chunks


def continuation_chunks(
    outputs: dict[str, Any],
    *,
    reply: str = "Done.",
    start_id: str | None = "msg-invented-by-the-model",
) -> list[dict[str, Any]]:
    """The answer to a continuation request: the approved tools' results, then a new text step."""
    chunks: list[dict[str, Any]] = [
        {"type": "start", "messageId": start_id} if start_id else {"type": "start"}
    ]
    chunks += [
        {"type": "tool-output-available", "toolCallId": cid, "output": out}
        for cid, out in outputs.items()
    ]
    chunks.append({"type": "start-step"})
    chunks += text_chunks("txt-2", reply)
    chunks += [{"type": "finish-step"}, {"type": "finish", "finishReason": "stop"}]
    return chunks


DELETE = Call("call_del", "deleteFile", {"path": "/srv/data/report.csv"}, approval_id="appr_del")
WIRE = Call(
    "call_pay",
    "sendPayment",
    {"to": "ACME Ltd", "amount": 1250, "currency": "EUR"},
    approval_id="appr_pay",
)
LOCATE = Call("call_loc", "getLocation", {"precision": "city"})
"""A client-side tool: no approval, no server execution; the client gives the output."""
WEATHER = Call(
    "call_wx", "getWeather", {"city": "Paris"}, server_output={"tempC": 21, "sky": "clear"}
)
"""A tool the server ran at once."""


# -- messages ---------------------------------------------------------------


def user(message_id: str, text: str = "Please clean up the old report.") -> dict[str, Any]:
    """A user UIMessage (this module's default text: the clean-up request)."""
    return builders.user(message_id, text)


def tool_part(call: Call, state: str, **extra: Any) -> dict[str, Any]:
    """A static tool part of ``call`` in ``state`` (input complete), plus ``extra`` fields."""
    return {
        "type": f"tool-{call.tool}",
        "toolCallId": call.call_id,
        "state": state,
        "input": call.input,
        **extra,
    }


def imported_assistant(
    message_id: str, *parts: dict[str, Any], text: str = "Let me do that."
) -> dict[str, Any]:
    """An assistant UIMessage from elsewhere: one step, a done text part, then ``parts``."""
    return {
        "id": message_id,
        "role": "assistant",
        "parts": [{"type": "step-start"}, {"type": "text", "text": text, "state": "done"}, *parts],
    }


# -- building conversations -------------------------------------------------


def new_chat(
    store: ConversationStore,
    chat: str,
    *,
    tenant: str | None = None,
    user_id: str = "u1",
    ai_sdk: int | None = None,
) -> None:
    """A conversation with one user message (speaking ``ai_sdk``, default: the store's)."""
    store.start_conversation(chat, tenant=tenant, actor=ALICE, ai_sdk=ai_sdk)
    store.append_message(chat, user(user_id), tenant=tenant, actor=ALICE)


def paused_turn(
    store: ConversationStore,
    chat: str,
    calls: Sequence[Call] = (DELETE,),
    *,
    tenant: str | None = None,
    message_id: str = "a1",
    ai_sdk: int | None = None,
) -> None:
    """A new conversation whose assistant reply ends in ``calls`` (streamed, stream closed)."""
    new_chat(store, chat, tenant=tenant, ai_sdk=ai_sdk)
    report = store.ingest(chat, tool_step_chunks(message_id, calls), tenant=tenant, actor=BOT)
    assert report.refused == [], report.refused
    assert report.message_id == message_id


# -- reading the log ----------------------------------------------------------


def events(
    store: ConversationStore, chat: str, tenant: str | None = None
) -> list[ConversationEvent]:
    """Every stored event of the conversation (``store.log.events.get(conversation_id(...))``)."""
    return stored_events(store, chat, tenant)


def events_of(
    store: ConversationStore, chat: str, kind: type[E], tenant: str | None = None
) -> list[E]:
    """The stored events of one class."""
    return [event for event in events(store, chat, tenant) if isinstance(event, kind)]


def continuation_requests(
    store: ConversationStore, chat: str, tenant: str | None = None
) -> list[ContinuationRequested]:
    """The ``ContinuationRequested`` events recorded."""
    return events_of(store, chat, ContinuationRequested, tenant)


def answers(
    store: ConversationStore, chat: str, tenant: str | None = None
) -> list[ToolApprovalResponded | ToolOutputAdded]:
    """The approval answers and tool outputs recorded."""
    return [
        e
        for e in events(store, chat, tenant)
        if isinstance(e, (ToolApprovalResponded, ToolOutputAdded))
    ]


def stream_chunks(store: ConversationStore, chat: str, stream_id: str) -> list[tuple[int, Any]]:
    """Every chunk recorded for one stream, with its position, in log order."""
    found: list[tuple[int, Any]] = []
    for event in events_of(store, chat, ChunksReceived):
        if event.stream_id == stream_id:
            found += [(event.first_seq + i, chunk) for i, chunk in enumerate(event.chunks)]
    return found


def part(
    store: ConversationStore, chat: str, call_id: str, tenant: str | None = None
) -> dict[str, Any]:
    """The (current) tool part of ``call_id``; fails when it is not exactly once in the view."""
    found = [
        p
        for m in store.messages(chat, tenant=tenant)
        for p in m["parts"]
        if p.get("toolCallId") == call_id
    ]
    assert len(found) == 1, f"{call_id} appears {len(found)} times: {found}"
    return copy.deepcopy(found[0])


# -- racing -------------------------------------------------------------------

T = TypeVar("T")


@dataclass
class Race:
    """What each racer returned or raised."""

    results: list[Any] = field(default_factory=list)

    @property
    def returned(self) -> list[Any]:
        return [r for r in self.results if not isinstance(r, BaseException)]

    @property
    def raised(self) -> list[BaseException]:
        return [r for r in self.results if isinstance(r, BaseException)]


def race(*racers: Callable[[], Any], timeout: float = 60) -> Race:
    """Run the callables in threads released together by a barrier; collect outcomes in order."""
    barrier = threading.Barrier(len(racers))
    outcome = Race([None] * len(racers))

    def run(index: int, racer: Callable[[], Any]) -> None:
        try:
            barrier.wait(timeout)
            outcome.results[index] = racer()
        except BaseException as error:
            outcome.results[index] = error

    threads = [threading.Thread(target=run, args=(i, r), daemon=True) for i, r in enumerate(racers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout)
    assert not any(thread.is_alive() for thread in threads), "a racer hung"
    return outcome
