"""Branches: edits and regenerations make siblings; list them, switch the active path (audited),
read any path (also at a past version), on every backend and for AI SDK 6 and 7 conversations."""

from __future__ import annotations

from typing import Any

import pytest

from chatledger import ConversationStore
from chatledger.domain.errors import InvalidMessageError, StreamAlreadyOpenError
from tests.support.builders import user


def _answer(store: ConversationStore, chat: str, mid: str, text: str) -> None:
    store.ingest(
        chat,
        [
            {"type": "start", "messageId": mid},
            {"type": "text-start", "id": "t"},
            {"type": "text-delta", "id": "t", "delta": text},
            {"type": "text-end", "id": "t"},
            {"type": "finish"},
        ],
    )


def _texts(messages: list[dict[str, Any]]) -> list[str]:
    return [p["text"] for m in messages for p in m["parts"] if p["type"] == "text"]


def _tree(store: ConversationStore, chat: str, ai_sdk: int) -> dict[str, int]:
    """u1 -> a1 | a2 (regenerated), and u1 edited (same id) -> a3; returns versions on the way."""
    store.start_conversation(chat, ai_sdk=ai_sdk)
    store.append_message(chat, user("u1", "first question"))
    _answer(store, chat, "a1", "first answer")
    first = store.version(chat)
    store.regenerate(chat, reason="too short")
    _answer(store, chat, "a2", "second answer")
    regenerated = store.version(chat)
    store.edit(chat, "u1", user("u1", "edited question"), actor="user:alice")
    _answer(store, chat, "a3", "answer to the edit")
    return {"first": first, "regenerated": regenerated, "edited": store.version(chat)}


@pytest.mark.parametrize("ai_sdk", [6, 7])
def test_siblings_switch_and_paths(store: ConversationStore, ai_sdk: int) -> None:
    chat = f"branches-{ai_sdk}"
    versions = _tree(store, chat, ai_sdk)
    assert _texts(store.messages(chat)) == ["edited question", "answer to the edit"]

    edited = store.branches(chat, "u1~2")
    assert (edited.index, edited.total) == (2, 2)
    assert [(b.key, b.message_id, b.active) for b in edited.branches] == [
        ("u1", "u1", False),
        ("u1~2", "u1", True),
    ]
    assert [b.leaf for b in edited.branches] == ["a2", "a3"]  # the latest path under each
    answers = store.branches(chat, "a1")
    assert (answers.index, answers.total) == (1, 2)
    assert [b.key for b in answers.branches] == ["a1", "a2"]
    assert store.branches(chat, "a3").total == 1

    # Any path reads without switching, now and in model form.
    assert _texts(store.messages(chat, leaf="a1")) == ["first question", "first answer"]
    assert _texts(store.messages(chat, leaf="a2")) == ["first question", "second answer"]
    model = store.model_messages(chat, leaf="a1")
    assert [m["role"] for m in model] == ["user", "assistant"]

    # Switching to the original question shows its latest answer; it is audited.
    assert store.switch_branch(chat, "u1", reason="compare", actor="user:bob") == "a2"
    assert _texts(store.messages(chat)) == ["first question", "second answer"]
    switched = store.history(chat, kinds=["branch-switched"])
    assert len(switched) == 1
    assert switched[0].actor == "user:bob"
    assert switched[0].details == {"leaf": "a2", "previousLeaf": "a3", "reason": "compare"}
    assert store.switch_branch(chat, "a2") is None  # already shown: nothing recorded
    assert len(store.history(chat, kinds=["branch-switched"])) == 1

    # The next turn follows the active path.
    store.append_message(chat, user("u2", "follow-up"))
    _answer(store, chat, "a4", "follow-up answer")
    assert _texts(store.messages(chat)) == [
        "first question",
        "second answer",
        "follow-up",
        "follow-up answer",
    ]
    assert store.branches(chat, "a2").branches[1].leaf == "a4"

    # Point-in-time reads still see what was shown then, and any path then.
    assert _texts(store.messages(chat, at_version=versions["edited"])) == [
        "edited question",
        "answer to the edit",
    ]
    assert _texts(store.messages(chat, at_version=versions["regenerated"], leaf="a1")) == [
        "first question",
        "first answer",
    ]
    assert store.branches(chat, "u1", at_version=versions["regenerated"]).total == 1
    with pytest.raises(InvalidMessageError):
        store.messages(chat, at_version=versions["first"], leaf="a2")  # not written yet

    # And back: the edit's branch, as it was left.
    assert store.switch_branch(chat, "u1~2") == "a3"
    assert _texts(store.messages(chat)) == ["edited question", "answer to the edit"]
    assert _texts(store.messages(chat, leaf="a4"))[-1] == "follow-up answer"


def test_unbranched_conversation_has_one_branch_per_message(store: ConversationStore) -> None:
    chat = "plain"
    store.start_conversation(chat)
    store.append_message(chat, user("u1", "hello"))
    _answer(store, chat, "a1", "hi")
    siblings = store.branches(chat, "u1")
    assert (siblings.index, siblings.total) == (1, 1)
    assert _texts(store.messages(chat, leaf="u1")) == ["hello"]
    assert store.conversation(chat).state.branches is None  # its state is as before branches
    with pytest.raises(InvalidMessageError, match="no other branch"):
        store.switch_branch(chat, "u1")


def test_bad_switches_are_refused_and_record_nothing(store: ConversationStore) -> None:
    chat = "bad"
    _tree(store, chat, 6)
    version = store.version(chat)
    with pytest.raises(InvalidMessageError, match="no message with this id or branch key"):
        store.switch_branch(chat, "nope")
    with pytest.raises(InvalidMessageError):
        store.branches(chat, "nope")
    store.append_message(chat, user("u9", "more"))
    store.open_stream(chat, message_id="a9")
    with pytest.raises(StreamAlreadyOpenError):
        store.switch_branch(chat, "u1")
    assert store.version(chat) == version + 2
