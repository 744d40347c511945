"""AI SDK 7 steering: a user message sent while an answer streams is queued, never refused or lost."""

from __future__ import annotations

from typing import Any

import pytest

from chatledger import ConversationStore
from chatledger.domain.errors import StreamAlreadyOpenError
from tests.support.ledger import replay_from_scratch


def _user(mid: str, text: str) -> dict[str, Any]:
    return {"id": mid, "role": "user", "parts": [{"type": "text", "text": text}]}


def _text(tid: str, text: str) -> list[dict[str, Any]]:
    return [
        {"type": "text-start", "id": tid},
        {"type": "text-delta", "id": tid, "delta": text},
        {"type": "text-end", "id": tid},
    ]


def test_the_running_answer_takes_a_steering_message_at_a_step_boundary(
    store: ConversationStore,
) -> None:
    """Queued with actor and time; the steering chunk folds it as v7 does; it is not added twice."""
    store.start_conversation("c")
    store.append_message("c", _user("u1", "weather in Paris?"), actor="user:ann")
    with store.open_stream("c", actor="agent:bot") as stream:
        stream.append({"type": "start-step"})
        for chunk in _text("t1", "Paris: sunny."):
            stream.append(chunk)
        stream.append({"type": "finish-step"})
        store.append_message("c", _user("u2", "and Rome?"), actor="user:ann")
        queued = store.steering("c")
        assert [m["id"] for m in queued] == ["u2"]
        stream.append({"type": "steering-message", "id": "u2", "parts": queued[0]["parts"]})
        assert store.steering("c") == []
        stream.append({"type": "start-step"})
        for chunk in _text("t2", "Rome: rain."):
            stream.append(chunk)
        stream.close()
    messages = store.messages("c")
    assert messages[0]["id"] == "u1" and len(messages) == 2
    parts = messages[1]["parts"]
    assert parts[2] == {"type": "steering-message", "id": "u2", "parts": queued[0]["parts"]}
    [entry] = store.history("c", kinds=["steering-queued"])
    assert entry.actor == "user:ann" and entry.details["messageId"] == "u2"
    assert replay_from_scratch(store, "c").state.messages == messages


def test_a_steering_message_not_taken_becomes_the_next_user_turn(store: ConversationStore) -> None:
    """The stream closes without taking them: they follow the answer, in the order sent."""
    store.start_conversation("c")
    store.append_message("c", _user("u1", "hi"))
    with store.open_stream("c") as stream:
        for chunk in _text("t", "hello"):
            stream.append(chunk)
        store.append_message("c", _user("u2", "one more thing"), actor="user:ann")
        store.append_message("c", _user("u3", "and another"), actor="user:bob")
        with pytest.raises(Exception, match="already"):
            store.append_message("c", _user("u2", "same id"))
        stream.close()
    assert [m["id"] for m in store.messages("c")] == ["u1", stream.message_id, "u2", "u3"]
    assert store.steering("c") == []
    assert store.status("c").status == "idle"
    assert replay_from_scratch(store, "c").state.messages == store.messages("c")


def test_v6_conversations_and_other_roles_still_wait_for_the_stream(
    store: ConversationStore,
) -> None:
    """No steering in v6; an assistant or system message is refused while a stream is open."""
    store.start_conversation("v6", ai_sdk=6)
    store.start_conversation("v7")
    for chat in ("v6", "v7"):
        with store.open_stream(chat) as stream:
            system = {"id": "s", "role": "system", "parts": [{"type": "text", "text": "x"}]}
            with pytest.raises(StreamAlreadyOpenError):
                store.append_message(chat, system)
            if chat == "v6":
                with pytest.raises(StreamAlreadyOpenError):
                    store.append_message(chat, _user("u", "x"))
            stream.close()
