"""The policy for a user message sent while an answer streams: queue, latest, merge, drop, debounce.

Each test opens a real answer (``store.turns.take``), sends another message
while it streams, and checks what the store recorded: the messages, the
streams' outcomes, and the ``mid-answer-message`` entry the audit shows. The
debounce test moves an injected clock; nothing sleeps.
"""

from __future__ import annotations

from typing import Any

import pytest

from chatledger import ConversationStore
from chatledger.adapters.store.turns.service import Steered, Turn
from chatledger.domain.commands import Answer, AppendMessage, Plan
from chatledger.domain.concurrency import Concurrency, MessageDroppedError, parse_concurrency
from chatledger.domain.errors import InvalidInputError, StreamAlreadyOpenError
from tests.integration.conftest import Backend


def user(mid: str, text: str) -> dict[str, Any]:
    return {"id": mid, "role": "user", "parts": [{"type": "text", "text": text}]}


def send(store: ConversationStore, message: dict[str, Any]) -> Turn | Steered:
    def plan(stored: list[dict[str, Any]]) -> Plan:
        return Plan((AppendMessage(message),), Answer("submit-message", False))

    return store.turns.take("c", plan, actor="user:alice", responder_actor="agent:bot")


def answer(turn: Turn, text: str = "ok") -> None:
    for chunk in [
        {"type": "start", "messageId": turn.writer.message_id},
        {"type": "start-step"},
        {"type": "text-start", "id": "t"},
        {"type": "text-delta", "id": "t", "delta": text},
        {"type": "text-end", "id": "t"},
        {"type": "finish-step"},
        {"type": "finish"},
    ]:
        turn.writer.append(chunk)
    turn.writer.close()


def audit(store: ConversationStore) -> list[dict[str, Any]]:
    return [e.details for e in store.history("c", kinds=["mid-answer-message"])]


def opened(backend: Backend, policy: str, ai_sdk: int, per: str) -> tuple[ConversationStore, Turn]:
    """A store whose conversation 'c' is answering u1; ``policy`` set per server or per conversation."""
    store = backend.open(ai_sdk=ai_sdk)
    if per == "server":
        store.turns.mid_answer.default = parse_concurrency(policy)
    first = send(store, user("u1", "first"))
    assert isinstance(first, Turn)
    if per == "conversation":
        store.set_metadata("c", {"messageConcurrency": policy}, actor="user:alice")
    return store, first


@pytest.fixture(params=["server", "conversation"])
def per(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.mark.parametrize("ai_sdk", [6, 7])
def test_queue_is_as_before(backend: Backend, ai_sdk: int) -> None:
    store, first = opened(backend, "queue", ai_sdk, "server")
    if ai_sdk == 6:
        with pytest.raises(StreamAlreadyOpenError):
            send(store, user("u2", "second"))
        return
    steered = send(store, user("u2", "second"))
    assert isinstance(steered, Steered)
    answer(first)
    turn = store.turns.answer_steered(steered, responder_actor="agent:bot")
    assert turn is not None and turn.request.messages[-1]["id"] == "u2"
    assert audit(store) == []  # the queue records nothing new: its steering event says it all


@pytest.mark.parametrize("ai_sdk", [6, 7])
def test_drop_refuses_with_409_and_records_the_refusal(
    backend: Backend, ai_sdk: int, per: str
) -> None:
    store, first = opened(backend, "drop", ai_sdk, per)
    with pytest.raises(MessageDroppedError, match="'drop'"):
        send(store, user("u2", "second"))
    answer(first)
    assert [m["id"] for m in store.messages("c")][:1] == ["u1"]
    assert "u2" not in [m["id"] for m in store.messages("c")]
    assert audit(store) == [
        {"policy": "drop", "outcome": "dropped", "streamId": first.writer.stream_id,
         "messageIds": ["u2"]}
    ]  # fmt: skip
    entry = store.history("c", kinds=["mid-answer-message"])[0]
    assert entry.actor == "user:alice" and "refused" in entry.marks


@pytest.mark.parametrize("ai_sdk", [6, 7])
def test_latest_stops_the_running_answer_and_answers_the_newest(
    backend: Backend, ai_sdk: int, per: str
) -> None:
    store, first = opened(backend, "latest", ai_sdk, per)
    first.writer.append({"type": "start", "messageId": first.writer.message_id})
    first.writer.flush()
    second = send(store, user("u2", "second"))
    assert isinstance(second, Turn) and second.request.messages[-1]["id"] == "u2"
    answer(second, "the newest")
    closed = store.history("c", kinds=["stream-closed"])
    assert closed[0].details["streamId"] == first.writer.stream_id
    assert closed[0].details["outcome"] == "aborted" and closed[0].actor == "user:alice"
    assert [m["role"] for m in store.messages("c")] == ["user", "assistant", "user", "assistant"]
    assert audit(store)[0] | {"streamId": None} == {
        "policy": "latest", "outcome": "stopped-running-answer", "streamId": None,
        "messageIds": ["u2"],
    }  # fmt: skip


def test_merge_answers_the_queued_messages_as_one_turn(backend: Backend, per: str) -> None:
    store, first = opened(backend, "merge", 7, per)
    second, third = send(store, user("u2", "second")), send(store, user("u3", "third"))
    assert isinstance(second, Steered) and isinstance(third, Steered)
    answer(first)
    assert store.turns.answer_steered(second, responder_actor="agent:bot") is None
    turn = store.turns.answer_steered(third, responder_actor="agent:bot")
    assert turn is not None
    asked = turn.request.messages
    assert [m["role"] for m in asked] == ["user", "assistant", "user"]
    assert asked[-1]["id"] == "u3" and [p["text"] for p in asked[-1]["parts"]] == [
        "second",
        "third",
    ]
    answer(turn)
    assert [m["id"] for m in store.messages("c")][2:4] == ["u2", "u3"]  # the log keeps each
    assert [(d["outcome"], d["messageIds"]) for d in audit(store)] == [
        ("queued-to-merge", ["u2"]),
        ("queued-to-merge", ["u3"]),
        ("merged", ["u2", "u3"]),
    ]


def test_debounce_waits_for_the_user_to_stop_typing(backend: Backend, per: str) -> None:
    store, first = opened(backend, "debounce:2", 7, per)
    now = [100.0]
    store.turns.mid_answer.clock = lambda: now[0]
    second = send(store, user("u2", "sec"))
    assert isinstance(second, Steered)
    turns = store.turns.mid_answer
    assert turns.quiet_left("c", "default", second.arrival) == 2.0
    now[0] += 1.5
    third = send(store, user("u3", "second, typed again"))  # still typing: the wait restarts
    assert isinstance(third, Steered)
    answer(first)
    now[0] += 1.5
    assert turns.quiet_left("c", "default", second.arrival) == pytest.approx(0.5)
    assert turns.quiet_left("c", "default", third.arrival) == pytest.approx(0.5)
    assert store.turns.answer_steered(second, responder_actor="agent:bot") is None
    now[0] += 0.5
    assert turns.quiet_left("c", "default", third.arrival) == 0.0
    turn = store.turns.answer_steered(third, responder_actor="agent:bot")
    assert turn is not None and turn.request.messages[-1]["id"] == "u3"
    assert [d["outcome"] for d in audit(store)] == [
        "debounced", "debounced", "answered-after-quiet",
    ]  # fmt: skip


@pytest.mark.parametrize("policy", ["merge", "debounce"])
def test_a_v6_conversation_cannot_hold_a_message_so_merge_and_debounce_refuse(
    backend: Backend, policy: str
) -> None:
    store, _ = opened(backend, policy, 6, "server")
    with pytest.raises(StreamAlreadyOpenError):
        send(store, user("u2", "second"))
    assert audit(store) == []


def test_policies_are_parsed_and_a_bad_one_is_named() -> None:
    assert parse_concurrency("debounce:0.5") == Concurrency("debounce", 0.5)
    assert str(parse_concurrency(" latest ")) == "latest"
    for bad in ("newest", "latest:2", "debounce:x", "debounce:-1", 3):
        with pytest.raises(InvalidInputError, match="message concurrency"):
            parse_concurrency(bad)
