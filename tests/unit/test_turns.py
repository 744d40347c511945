"""The turn service without a database: a plan becomes actions, then the open of its answer's stream.

``Turns`` is given fakes of its ports (the chats it records actions through,
the reader it reads the conversation from, the streams it opens) that keep
the conversation as a real ``Conversation`` aggregate in memory, so each test
says: given this conversation, when this request, then these calls in this
order, and this turn.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from chatledger.adapters.store.turns.service import Steered, Turn, Turns
from chatledger.domain.aggregate import Conversation
from chatledger.domain.commands import (
    AddToolOutput,
    Answer,
    AppendMessage,
    EditMessage,
    Plan,
    Regenerate,
    RespondToApproval,
)
from chatledger.domain.continuation import ConversationStatus, status_of
from chatledger.domain.conversation import ConversationState
from chatledger.domain.errors import (
    InvalidMessageError,
    NothingToContinueError,
    OversizedInputError,
    StreamAlreadyOpenError,
)
from chatledger.domain.limits import Limits
from tests.support.builders import user

LIMITS = Limits()


@dataclass
class FakeWriter:
    """What ``Turns.open`` reads off a stream writer."""

    conversation: Conversation
    message_id: str
    stream_id: str


@dataclass
class Ledger:
    """The one conversation the fakes share, and every call made to them, in order."""

    conversation: Conversation | None = None
    calls: list[tuple[Any, ...]] = field(default_factory=list)
    expire_closes: bool = False

    def state(self) -> ConversationState | None:
        return None if self.conversation is None else self.conversation.state


class FakeChats:
    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger

    def start_conversation(self, chat_id: str, **options: Any) -> bool:
        self.ledger.calls.append(("start", chat_id, options["actor"], options["exist_ok"]))
        self.ledger.conversation = Conversation.start(
            "t", chat_id, actor=options["actor"], ai_sdk=7
        )
        return True

    def append_message(self, chat_id: str, message: dict[str, Any], **options: Any) -> None:
        self.ledger.calls.append(("append", message["id"], options["actor"]))
        assert self.ledger.conversation is not None
        self.ledger.conversation.append_message(message, actor=options["actor"], limits=LIMITS)

    def edit(self, chat_id: str, message_id: str, message: dict[str, Any], **options: Any) -> int:
        self.ledger.calls.append(("edit", message_id, options["actor"]))
        return 1

    def regenerate(self, chat_id: str, message_id: str | None, **options: Any) -> int:
        self.ledger.calls.append(("regenerate", message_id, options["actor"]))
        return 1

    def respond_to_approval(self, chat_id: str, **options: Any) -> Any:
        self.ledger.calls.append(("approve", options["tool_call_id"], options["approval_id"]))

    def add_tool_output(self, chat_id: str, tool_call_id: str, **options: Any) -> Any:
        self.ledger.calls.append(("output", tool_call_id, options["state"]))


class FakeReader:
    def __init__(self, ledger: Ledger, status: ConversationStatus | None = None) -> None:
        self.ledger = ledger
        self.given_status = status

    def stored_state(self, chat_id: str, *, tenant: str | None = None) -> ConversationState | None:
        self.ledger.calls.append(("read",))
        return self.ledger.state()

    def status(self, chat_id: str, *, tenant: str | None = None) -> ConversationStatus:
        state = self.ledger.state()
        assert state is not None
        return self.given_status or status_of(state)


class FakeStreams:
    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger
        self.opened = 0

    def open_stream(self, chat_id: str, **options: Any) -> FakeWriter:
        self.ledger.calls.append(
            ("open", options["actor"], options["trigger"], options["continuation"],
             options["request_id"], (options["user_message"] or {}).get("id"))
        )  # fmt: skip
        conversation = self.ledger.conversation
        assert conversation is not None
        if options["user_message"] is not None:
            conversation.append_message(
                options["user_message"], actor=options["user_actor"], limits=LIMITS
            )
        self.opened += 1
        stream_id, message_id = f"s{self.opened}", f"m-answer-{self.opened}"
        conversation.open_stream(
            stream_id, message_id, continuation=options["continuation"],
            trigger=options["trigger"], actor=options["actor"], request_id=options["request_id"],
        )  # fmt: skip
        return FakeWriter(conversation, message_id, stream_id)

    def expire_stream(self, chat_id: str, **options: Any) -> bool:
        self.ledger.calls.append(("expire", options["noticed_by"]))
        if self.ledger.expire_closes and self.ledger.conversation is not None:
            stream = self.ledger.conversation.state.stream
            assert stream is not None
            self.ledger.conversation.close_stream(stream.stream_id, "interrupted", None, actor="x")
            return True
        return False


def turns(ledger: Ledger, status: ConversationStatus | None = None) -> Turns:
    return Turns(
        FakeChats(ledger),  # type: ignore[arg-type]
        FakeReader(ledger, status),  # type: ignore[arg-type]
        FakeStreams(ledger),  # type: ignore[arg-type]
        LIMITS,
        tenant="t",
    )


def planned(*actions: Any, answer: Answer | None = None) -> Any:
    """A planner that returns this plan, and remembers what it was shown."""

    def plan(stored: list[dict[str, Any]]) -> Plan:
        plan.shown = stored  # type: ignore[attr-defined]
        return Plan(tuple(actions), answer or Answer("submit-message", False))

    return plan


def existing(*messages: dict[str, Any], ai_sdk: int = 7) -> Ledger:
    conversation = Conversation.start("t", "c", actor="alice", ai_sdk=ai_sdk)
    for message in messages:
        conversation.append_message(message, actor="alice", limits=LIMITS)
    return Ledger(conversation)


def take(service: Turns, plan: Any) -> Turn | Steered:
    return service.take("c", plan, actor="alice", responder_actor="agent:bot", body={"k": 1})


def test_a_first_message_starts_the_conversation_then_is_recorded_with_its_answers_open() -> None:
    ledger = Ledger()
    turn = take(turns(ledger), planned(AppendMessage(user("u1"))))
    assert ledger.calls == [
        ("read",),
        ("start", "c", "alice", True),
        ("open", "agent:bot", "submit-message", False, None, "u1"),
    ]
    assert isinstance(turn, Turn)
    assert turn.request.messages == [user("u1")]
    assert (turn.request.trigger, turn.request.message_id, turn.request.body) == (
        "submit-message", "m-answer-1", {"k": 1},
    )  # fmt: skip


def test_a_refused_first_message_creates_no_conversation() -> None:
    ledger = Ledger()
    with pytest.raises(InvalidMessageError):
        take(turns(ledger), planned(AppendMessage({"id": "u1", "role": "user", "parts": 3})))
    huge = user("u1", "x" * (LIMITS.max_message_bytes + 1))
    with pytest.raises(OversizedInputError):
        take(turns(ledger), planned(AppendMessage(huge)))
    assert [call[0] for call in ledger.calls] == ["read", "read"]


def test_every_other_action_is_recorded_as_the_client_before_the_open() -> None:
    ledger = existing(user("u1"))
    actions = (
        EditMessage("u1", user("u1", "new")),
        Regenerate(None),
        RespondToApproval("call-1", "ap-1", True, None, False),
        AddToolOutput("call-2", "output-available", {"ok": 1}, None, False),
    )
    take(turns(ledger), planned(*actions))
    assert ledger.calls == [
        ("read",),
        ("edit", "u1", "alice"),
        ("regenerate", None, "alice"),
        ("approve", None, "ap-1"),
        ("output", "call-2", "output-available"),
        ("open", "agent:bot", "submit-message", False, None, None),
    ]


def test_a_continuation_the_conversation_cannot_make_opens_nothing() -> None:
    ledger = existing(user("u1"))
    with pytest.raises(NothingToContinueError, match="idle"):
        take(turns(ledger), planned(answer=Answer("continuation", True)))
    assert [call[0] for call in ledger.calls] == ["read"]


def test_a_continuation_fulfils_the_pending_request() -> None:
    ledger = existing(user("u1"))
    ready = ConversationStatus("ready-to-continue", continuation_request="req-1")
    with pytest.raises(Exception, match="req-1"):  # the fake aggregate has no such request
        take(turns(ledger, ready), planned(answer=Answer("continuation", True)))
    assert ledger.calls[-1] == ("open", "agent:bot", "continuation", True, "req-1", None)


def test_a_new_message_while_an_answer_streams_is_steering_and_recorded_once() -> None:
    ledger = existing(user("u1"))
    service = turns(ledger)
    assert isinstance(take(service, planned(AppendMessage(user("u0")))), Turn)
    steered = take(service, planned(AppendMessage(user("u2"))))
    again = take(service, planned(AppendMessage(user("u2"))))  # a retried request
    assert steered == again == Steered("c", "t", "u2", "s1", {"k": 1})
    assert [call for call in ledger.calls if call[0] in ("append", "expire")] == [
        ("expire", "a new turn by alice"),
        ("append", "u2", "alice"),
        ("expire", "a new turn by alice"),
    ]


def test_anything_but_a_new_message_waits_for_the_answer_and_a_v6_conversation_steers_nothing() -> (
    None
):
    v7 = existing(user("u1"))
    take(turns(v7), planned(AppendMessage(user("u0"))))
    with pytest.raises(StreamAlreadyOpenError):
        take(turns(v7), planned(Regenerate(None)))
    v6 = existing(user("u1"), ai_sdk=6)
    take(turns(v6), planned(AppendMessage(user("u0"))))
    with pytest.raises(StreamAlreadyOpenError):
        take(turns(v6), planned(AppendMessage(user("u2"))))
    assert [call for call in v6.calls if call[0] == "append"] == []


def test_a_stream_whose_writer_died_is_closed_and_the_request_answered() -> None:
    ledger = existing(user("u1"))
    service = turns(ledger)
    take(service, planned(AppendMessage(user("u0"))))
    ledger.expire_closes = True
    turn = take(service, planned(AppendMessage(user("u2"))))
    assert isinstance(turn, Turn)
    assert ledger.calls[-3:] == [
        ("expire", "a new turn by alice"),
        ("read",),
        ("open", "agent:bot", "submit-message", False, None, "u2"),
    ]


def test_the_planner_and_the_responder_see_what_every_view_shows() -> None:
    ledger = existing(user("u1", "my secret"))
    assert ledger.conversation is not None
    ledger.conversation.redact(
        tool_call_id=None, message_id="u1", fields=None, reason="pii", actor="ops"
    )
    plan = planned(AppendMessage(user("u2")))
    turn = take(turns(ledger), plan)
    assert isinstance(turn, Turn)
    assert "my secret" not in repr(plan.shown) and "[redacted]" in repr(plan.shown)
    assert "my secret" not in repr(turn.request.messages)
    assert "my secret" in repr(ledger.conversation.state.messages)  # stored as it was


def test_a_steering_message_left_by_the_answer_gets_its_own_answer() -> None:
    ledger = existing(user("u1"))
    service = turns(ledger)
    take(service, planned(AppendMessage(user("u0"))))
    steered = take(service, planned(AppendMessage(user("u2"))))
    assert isinstance(steered, Steered)
    assert service.answer_steered(steered, responder_actor="agent:bot") is None  # still streaming
    assert ledger.conversation is not None
    ledger.conversation.close_stream("s1", "finished", None, actor="agent:bot")
    answer = service.answer_steered(steered, responder_actor="agent:bot")
    assert isinstance(answer, Turn)
    assert answer.request.messages[-1]["id"] == "u2"
