"""Forks: a new conversation sharing another's path by reference; forks of forks; the audit names the
origin; erasing an origin erases its forks. On every backend (erasure: SQLite and PostgreSQL), v6 and v7."""

from __future__ import annotations

from typing import Any

import pytest

from chatledger import ConversationStore
from chatledger.domain.errors import (
    ConversationErasedError,
    ConversationExistsError,
    InvalidMessageError,
)
from tests.integration.conftest import Backend
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


def _origin(store: ConversationStore, chat: str, ai_sdk: int) -> None:
    store.start_conversation(chat, ai_sdk=ai_sdk)
    store.append_message(chat, user("u1", "question"))
    _answer(store, chat, "a1", "answer one")
    store.regenerate(chat)
    _answer(store, chat, "a2", "answer two")


@pytest.mark.parametrize("ai_sdk", [6, 7])
def test_a_fork_shares_the_path_by_reference_and_goes_its_own_way(
    backend: Backend, ai_sdk: int
) -> None:
    store = backend.open()
    _origin(store, "origin", ai_sdk)
    version = store.version("origin")

    assert store.fork("origin", "fork", leaf="a1", actor="user:ann", reason="try") == "a1"
    assert _texts(store.messages("fork")) == ["question", "answer one"]
    assert store.ai_sdk_of("fork") == ai_sdk
    # By reference: the fork's log is its start and one event naming the origin.
    kinds = [entry.kind for entry in store.history("fork")]
    assert kinds == ["conversation-started", "conversation-forked"]
    forked = store.history("fork")[1]
    assert forked.actor == "user:ann"
    assert forked.details["origin_chat_id"] == "origin"
    assert (forked.details["origin_version"], forked.details["leaf"]) == (version, "a1")
    assert "prefix" not in forked.details
    made = store.history("origin", kinds=["fork-made"])
    assert [(e.details["fork_chat_id"], e.details["at_version"]) for e in made] == [
        ("fork", version)
    ]

    # The fork goes on; the origin does not see it, and vice versa.
    store.append_message("fork", user("u2", "fork question"))
    _answer(store, "fork", "a3", "fork answer")
    store.append_message("origin", user("u9", "origin goes on"))
    assert _texts(store.messages("fork")) == [
        "question",
        "answer one",
        "fork question",
        "fork answer",
    ]
    assert _texts(store.messages("origin"))[-1] == "origin goes on"
    model = store.model_messages("fork")
    assert [m["role"] for m in model] == ["user", "assistant", "user", "assistant"]

    # A fork of the fork, at a past version of the fork; read by another store too.
    store.fork("fork", "grandchild", at_version=2)
    again = backend.other_store(store)
    assert _texts(again.messages("grandchild")) == ["question", "answer one"]
    assert _texts(again.messages("fork"))[-1] == "fork answer"

    # A fork of the active path by default.
    store.fork("origin", "whole")
    assert _texts(store.messages("whole")) == ["question", "answer two", "origin goes on"]


def test_bad_forks_are_refused(store: ConversationStore) -> None:
    _origin(store, "o", 6)
    with pytest.raises(InvalidMessageError):
        store.fork("o", "f", leaf="nope")
    with pytest.raises(InvalidMessageError, match="chat id of its own"):
        store.fork("o", "o")
    store.fork("o", "f")
    with pytest.raises(ConversationExistsError):
        store.fork("o", "f")
    assert len(store.history("o", kinds=["fork-made"])) == 1


def test_erasing_an_origin_erases_its_forks(durable_backend: Backend) -> None:
    store = durable_backend.open()
    _origin(store, "origin", 6)
    store.fork("origin", "fork")
    store.fork("fork", "grandchild")
    store.start_conversation("other")
    store.operations.erase("origin", actor="operator:olga", reason="GDPR request 7")
    for chat in ("origin", "fork", "grandchild"):
        with pytest.raises(ConversationErasedError):
            store.messages(chat)
    erased = store.history("fork", kinds=["conversation-erased"])
    assert erased[-1].actor == "operator:olga"
    assert store.messages("other") == []
    assert store.operations.verify().ok


def test_a_redaction_of_the_origin_reaches_its_forks(store: ConversationStore) -> None:
    _origin(store, "origin", 7)
    store.fork("origin", "fork", leaf="a1")
    store.fork("fork", "grandchild")
    store.fork("origin", "early", leaf="u1")
    store.redact("origin", message_id="a2", reason="leaked key", actor="operator:olga")
    assert "answer two" not in str(store.messages("origin", leaf="a2"))
    assert store.history("fork", kinds=["redacted"]) == []  # a2 is not in the fork
    store.redact("origin", message_id="a1", reason="leaked key", actor="operator:olga")
    for chat in ("origin", "fork", "grandchild"):
        shown = store.messages(chat, leaf="a1") if chat == "origin" else store.messages(chat)
        assert "answer one" not in str(shown), chat
    cascaded = store.history("grandchild", kinds=["redacted"])
    assert [(e.actor, e.details["reason"]) for e in cascaded] == [
        ("operator:olga", "leaked key (redacted in its origin 'fork')")
    ]
    assert store.history("early", kinds=["redacted"]) == []
