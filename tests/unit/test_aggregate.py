"""The aggregate's decisions without a store: given events, when a command, then new events.

Each test folds a history of events into a fresh ``Conversation`` (exactly as
loading from the log does), runs one command, and checks the events it
records (or the error it raises, recording nothing).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from chatledger.domain.aggregate import Conversation
from chatledger.domain.errors import (
    ApprovalConflictError,
    InvalidMessageError,
    StreamAlreadyOpenError,
)
from chatledger.domain.events import (
    ContinuationClaimed,
    ContinuationRequested,
    MessageAppended,
    StreamClosed,
    ToolApprovalResponded,
    ToolOutputAdded,
)
from chatledger.domain.limits import Limits

LIMITS = Limits()
Step = Callable[[Conversation], Any]


def user(message_id: str, text: str = "hi") -> Step:
    """A user message is appended."""
    message = {"id": message_id, "role": "user", "parts": [{"type": "text", "text": text}]}
    return lambda c: c.append_message(message, actor="user:alice", limits=LIMITS)


def answer_awaiting_approval(call: str = "call_1", *, close: bool = True) -> Step:
    """An assistant answer streams a tool call that asks for approval (and, by default, ends)."""

    def step(c: Conversation) -> None:
        c.open_stream("s1", "a1", continuation=False, trigger="submit-message", actor="agent:bot")
        for chunk in (
            {"type": "start", "messageId": "a1"},
            {"type": "tool-input-available", "toolCallId": call, "toolName": "rm", "input": {}},
            {"type": "tool-approval-request", "approvalId": f"ap-{call}", "toolCallId": call},
        ):
            assert c.receive("s1", chunk, limits=LIMITS).error is None
        if close:
            c.close_stream("s1", "finished", None, actor="agent:bot")
        else:
            c.flush()

    return step


def given(*steps: Step) -> Conversation:
    """A conversation rebuilt from the events these steps record, as loading from the log does."""
    recorder = Conversation.start("acme", "chat", actor="user:alice")
    for step in steps:
        step(recorder)
    events = recorder.collect_events()
    conversation: Any = None
    for event in events:
        conversation = event.mutate(conversation)
    assert isinstance(conversation, Conversation)
    return conversation


def when(conversation: Conversation, command: Step) -> tuple[Any, list[Any]]:
    """Run one command; return what it returned and the events it recorded."""
    result = command(conversation)
    return result, list(conversation.collect_events())


def deny(reason: str = "not in production", actor: str = "user:alice") -> Step:
    return lambda c: c.respond_to_approval(
        approval_id=None, tool_call_id="call_1", approved=False, reason=reason, actor=actor,
        auto_continue=True,
    )  # fmt: skip


def test_a_denial_is_recorded_with_its_reason_and_asks_for_a_continuation() -> None:
    conversation = given(user("u1"), answer_awaiting_approval())
    decision, events = when(conversation, deny())
    assert decision.changed and decision.state == "output-denied"
    assert [type(e) for e in events] == [ToolApprovalResponded, ContinuationRequested]
    assert events[0].approved is False and events[0].reason == "not in production"
    assert events[0].actor == "user:alice"


def test_the_same_denial_again_records_nothing() -> None:
    conversation = given(user("u1"), answer_awaiting_approval(), deny())
    decision, events = when(conversation, deny())
    assert (decision.changed, events) == (False, [])


def test_a_contradicting_answer_is_refused_and_records_nothing() -> None:
    conversation = given(user("u1"), answer_awaiting_approval(), deny())
    approve = lambda c: c.respond_to_approval(  # noqa: E731
        approval_id=None, tool_call_id="call_1", approved=True, reason=None, actor="user:bob",
        auto_continue=True,
    )  # fmt: skip
    with pytest.raises(ApprovalConflictError):
        when(conversation, approve)
    assert conversation.collect_events() == []


def test_an_answer_given_while_a_stream_is_open_continues_only_when_the_stream_closes() -> None:
    conversation = given(user("u1"), answer_awaiting_approval(close=False))
    _, events = when(conversation, deny())
    assert [type(e) for e in events] == [ToolApprovalResponded]
    _, events = when(
        conversation, lambda c: c.close_stream("s1", "finished", None, actor="agent:bot")
    )
    assert [type(e) for e in events] == [StreamClosed, ContinuationRequested]


def test_a_tool_call_keeps_its_first_result() -> None:
    def output(value: Any) -> Step:
        return lambda c: c.add_tool_output(
            "call_1", state="output-available", output=value, error_text=None,
            actor="browser", auto_continue=True, limits=LIMITS,
        )  # fmt: skip

    approve = lambda c: c.respond_to_approval(  # noqa: E731
        approval_id="ap-call_1", tool_call_id=None, approved=True, reason=None,
        actor="user:alice", auto_continue=False,
    )  # fmt: skip
    conversation = given(user("u1"), answer_awaiting_approval(), approve, output({"n": 1}))
    decision, events = when(conversation, output({"n": 2}))
    assert (decision.changed, events) == (False, [])
    assert conversation.state.messages[-1]["parts"][-1]["output"] == {"n": 1}

    fresh = given(user("u1"), answer_awaiting_approval(), approve)
    decision, events = when(fresh, output({"n": 2}))
    assert [type(e) for e in events] == [ToolOutputAdded, ContinuationRequested]


def test_a_user_message_while_a_stream_is_open_is_refused() -> None:
    conversation = given(user("u1"), answer_awaiting_approval(close=False))
    with pytest.raises(StreamAlreadyOpenError):
        when(conversation, user("u2"))
    assert conversation.collect_events() == []


def test_a_continuation_leased_to_one_worker_cannot_be_claimed_by_another() -> None:
    now = datetime.now(UTC)
    conversation = given(user("u1"), answer_awaiting_approval(), deny())
    request_id = conversation.state.continuation["requestId"]  # type: ignore[index]

    def claim(worker: str, at: datetime) -> Step:
        return lambda c: c.claim_continuation(request_id, worker=worker, lease_seconds=60, now=at)

    won, events = when(conversation, claim("w1", now))
    assert won and [type(e) for e in events] == [ContinuationClaimed]
    won, events = when(conversation, claim("w2", now + timedelta(seconds=30)))
    assert (won, events) == (False, [])
    won, events = when(conversation, claim("w2", now + timedelta(seconds=61)))
    assert won and events[0].worker == "w2"


def test_cutting_an_unknown_message_is_refused() -> None:
    conversation = given(user("u1"))
    with pytest.raises(InvalidMessageError, match="no message with this id"):
        when(conversation, lambda c: c.cut_messages("nope", trigger="cut", reason=None, actor="a"))


def test_a_message_id_used_twice_is_refused() -> None:
    conversation = given(user("u1"))
    with pytest.raises(InvalidMessageError, match="already in the conversation"):
        when(conversation, user("u1"))
    _, events = when(conversation, user("u2"))
    assert [type(e) for e in events] == [MessageAppended]
