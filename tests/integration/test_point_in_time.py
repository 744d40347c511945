"""Point in time (issue 4): messages() and model_messages() as the conversation stood at a version or time,
also across regenerate and edit cuts, on every backend."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

from chatledger import ConversationStore
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


def _texts(model_messages: list[dict[str, Any]]) -> list[str]:
    found = []
    for message in model_messages:
        content = message["content"]
        if isinstance(content, str):
            found.append(content)
        else:
            found.extend(part["text"] for part in content if part.get("type") == "text")
    return found


def test_model_messages_at_a_version_or_time_see_the_cut_answers(store: ConversationStore) -> None:
    """After regenerate and edit, the current view drops the cut messages; earlier points keep them."""
    chat = "pit"
    store.start_conversation(chat)
    store.append_message(chat, user("u1", "first question"))
    _answer(store, chat, "a1", "first answer")
    before_cut = store.version(chat)
    time.sleep(0.01)
    moment = datetime.now(UTC)
    time.sleep(0.01)
    store.regenerate(chat)
    _answer(store, chat, "a2", "second answer")
    after_regenerate = store.version(chat)
    store.edit(chat, "u1", user("u2", "edited question"))

    assert _texts(store.model_messages(chat)) == ["edited question"]
    assert _texts(store.model_messages(chat, at_version=before_cut)) == [
        "first question",
        "first answer",
    ]
    assert _texts(store.model_messages(chat, at_time=moment)) == ["first question", "first answer"]
    assert _texts(store.model_messages(chat, at_version=after_regenerate)) == [
        "first question",
        "second answer",
    ]
    anthropic = store.model_messages(chat, "anthropic", at_version=before_cut)
    assert [m["role"] for m in anthropic["messages"]] == ["user", "assistant"]
    assert store.messages(chat, at_version=before_cut) == [
        user("u1", "first question"),
        {
            "id": "a1",
            "role": "assistant",
            "parts": [{"type": "text", "text": "first answer", "state": "done"}],
        },
    ]
    # now, from the read model, equals the log replayed up to the last version
    assert store.messages(chat) == store.messages(chat, at_version=store.version(chat))


def test_cut_removes_any_message_from_the_view_and_the_log_keeps_it(
    store: ConversationStore,
) -> None:
    """``cut`` (used by framework stores) cuts a user message too; the audit names its trigger."""
    chat = "cut"
    store.start_conversation(chat)
    store.append_message(chat, user("u1", "keep"))
    store.append_message(chat, user("u2", "drop"))
    before = store.version(chat)
    assert store.cut(chat, "u2", trigger="pop-item", actor="agent:test") == 1
    assert [m["id"] for m in store.messages(chat)] == ["u1"]
    assert [m["id"] for m in store.messages(chat, at_version=before)] == ["u1", "u2"]
    entry = store.history(chat, kinds=["messages-cut"])[0]
    assert entry.actor == "agent:test" and "pop-item" in entry.summary
