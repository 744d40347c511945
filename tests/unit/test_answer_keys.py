"""Answer keys: an answer opened with a key its conversation holds is refused as a retry."""

from __future__ import annotations

from typing import Any

import pytest

from chatledger.domain.aggregate import Conversation
from chatledger.domain.conversation import ConversationState
from chatledger.domain.errors import AnswerAlreadyWrittenError, InvalidInputError
from chatledger.domain.limits import Limits

LIMITS = Limits()


def _rebuilt(recorder: Conversation) -> Conversation:
    conversation: Any = None
    for event in recorder.collect_events():
        conversation = event.mutate(conversation)
    assert isinstance(conversation, Conversation)
    return conversation


def _keyed_answer(c: Conversation, stream_id: str, key: str | None, *, close: bool = True) -> None:
    c.open_stream(
        stream_id, f"m-{stream_id}", continuation=False, trigger="submit-message",
        actor="node-app", answer_key=key,
    )  # fmt: skip
    start = {"type": "start", "messageId": f"named-{stream_id}"}
    assert c.receive(stream_id, start, limits=LIMITS).error is None
    if close:
        c.close_stream(stream_id, "finished", None, actor="node-app")


def test_a_key_is_written_once_and_remembered_through_the_log_and_snapshots() -> None:
    recorder = Conversation.start("acme", "chat", actor="user:alice")
    _keyed_answer(recorder, "s1", "k1")
    _keyed_answer(recorder, "s2", None)  # an answer without a key changes nothing of k1
    conversation = _rebuilt(recorder)
    expected = {"streamId": "s1", "messageId": "named-s1", "outcome": "finished", "reason": None}
    assert conversation.state.answers == {"k1": expected}
    restored = ConversationState.from_json(conversation.state.to_json())
    assert restored.answers == {"k1": expected}
    with pytest.raises(AnswerAlreadyWrittenError) as refused:
        _keyed_answer(conversation, "s3", "k1")
    assert (refused.value.stream_id, refused.value.message_id) == ("s1", "named-s1")
    assert refused.value.outcome == "finished"
    assert list(conversation.collect_events()) == []  # nothing recorded


def test_a_key_still_open_is_reported_open() -> None:
    recorder = Conversation.start("acme", "chat", actor="user:alice")
    _keyed_answer(recorder, "s1", "k1", close=False)
    with pytest.raises(AnswerAlreadyWrittenError) as refused:
        _keyed_answer(recorder, "s2", "k1")
    assert refused.value.outcome is None and "still being written" in str(refused.value)


def test_unkeyed_states_snapshot_as_before() -> None:
    assert "answers" not in ConversationState("t", "c").to_json()


def test_a_bad_key_is_refused_by_name() -> None:
    recorder = Conversation.start("acme", "chat", actor="user:alice")
    with pytest.raises(InvalidInputError, match="answer key"):
        _keyed_answer(recorder, "s1", "bad\x00key")
