"""A denied tool call reaches the model as a tool result with the reason (docs/behaviour.md §4.2, §6), end to end.

The conversation is built as in production (an AI SDK v6 chunk stream ending
in a tool call that awaits approval), the call is denied through
``store.respond_to_approval``, and ``store.model_messages`` gives each provider
format. Runs on memory://, a SQLite file and PostgreSQL (the ``store`` /
``durable_backend`` fixtures of ``conftest.py``); every payload is validated
strictly against the official SDKs' request types.
"""

from __future__ import annotations

from typing import Any

import pytest

from chatledger import ConversationStore
from chatledger.domain.convert import Format
from chatledger.domain.errors import UnansweredToolCallError
from tests.integration.conftest import Backend
from tests.integration.hitl_support import (
    ALICE,
    BOT,
    DELETE,
    continuation_chunks,
    part,
    paused_turn,
)
from tests.support.provider_types import (
    validate_anthropic,
    validate_openai_chat,
    validate_openai_responses,
)

REASON = "The report is still needed for the audit."
QUESTION = "Please clean up the old report."
INTRO = "Let me do that."
ARGUMENTS = '{"path":"/srv/data/report.csv"}'

ANTHROPIC_USER = {"role": "user", "content": [{"type": "text", "text": QUESTION}]}
ANTHROPIC_CALL = {
    "role": "assistant",
    "content": [
        {"type": "text", "text": INTRO},
        {"type": "tool_use", "id": DELETE.call_id, "name": DELETE.tool, "input": DELETE.input},
    ],
}
ANTHROPIC_DENIAL = {
    "role": "user",
    "content": [
        {"type": "tool_result", "tool_use_id": DELETE.call_id, "content": REASON, "is_error": True}
    ],
}


def _deny(store: ConversationStore, chat: str = "chat") -> None:
    result = store.respond_to_approval(
        chat, approval_id=DELETE.approval_id, approved=False, reason=REASON, actor=ALICE
    )
    assert result.changed
    assert part(store, chat, DELETE.call_id)["state"] == "output-denied"


def _anthropic(store: ConversationStore, chat: str = "chat", **options: Any) -> dict[str, Any]:
    payload: dict[str, Any] = store.model_messages(chat, format="anthropic", **options)
    validate_anthropic(payload)
    return payload


def _chat(store: ConversationStore, chat: str = "chat", **options: Any) -> list[dict[str, Any]]:
    payload: list[dict[str, Any]] = store.model_messages(chat, format="openai-chat", **options)
    validate_openai_chat(payload)
    return payload


def _responses(
    store: ConversationStore, chat: str = "chat", **options: Any
) -> list[dict[str, Any]]:
    payload: list[dict[str, Any]] = store.model_messages(chat, format="openai-responses", **options)
    validate_openai_responses(payload)
    return payload


def test_a_denied_call_reaches_anthropic_as_an_error_tool_result_with_the_reason(
    store: ConversationStore,
) -> None:
    paused_turn(store, "chat", [DELETE])

    _deny(store)

    messages = _anthropic(store)["messages"]
    assert messages == [ANTHROPIC_USER, ANTHROPIC_CALL, ANTHROPIC_DENIAL]
    # Said as a rule: the result is the first block of the message right after the tool_use.
    (call_at,) = [
        i
        for i, m in enumerate(messages)
        if any(b["type"] == "tool_use" and b["id"] == DELETE.call_id for b in m["content"])
    ]
    after = messages[call_at + 1]
    assert after["role"] == "user"
    assert after["content"][0] == {
        "type": "tool_result",
        "tool_use_id": DELETE.call_id,
        "content": REASON,
        "is_error": True,
    }


def test_the_same_denial_reaches_openai_chat_and_responses(store: ConversationStore) -> None:
    paused_turn(store, "chat", [DELETE])
    _deny(store)

    assert _chat(store) == [
        {"role": "user", "content": QUESTION},
        {
            "role": "assistant",
            "content": INTRO,
            "tool_calls": [
                {
                    "id": DELETE.call_id,
                    "type": "function",
                    "function": {"name": DELETE.tool, "arguments": ARGUMENTS},
                }
            ],
        },
        {"role": "tool", "tool_call_id": DELETE.call_id, "content": REASON},
    ]
    assert _responses(store) == [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": QUESTION}]},
        {"type": "message", "role": "assistant", "content": INTRO},
        {
            "type": "function_call",
            "call_id": DELETE.call_id,
            "name": DELETE.tool,
            "arguments": ARGUMENTS,
        },
        {"type": "function_call_output", "call_id": DELETE.call_id, "output": REASON},
    ]


@pytest.mark.parametrize("format", ["anthropic", "openai-chat", "openai-responses"])
def test_before_the_answer_the_paused_call_is_refused(
    store: ConversationStore, format: Format
) -> None:
    paused_turn(store, "chat", [DELETE])

    with pytest.raises(UnansweredToolCallError) as raised:
        store.model_messages("chat", format=format)

    assert raised.value.tool_call_ids == [DELETE.call_id]
    assert DELETE.call_id in str(raised.value)


def test_before_the_answer_omit_leaves_the_call_out(store: ConversationStore) -> None:
    paused_turn(store, "chat", [DELETE])

    assert _anthropic(store, unanswered="omit") == {
        "messages": [
            ANTHROPIC_USER,
            {"role": "assistant", "content": [{"type": "text", "text": INTRO}]},
        ]
    }
    assert _chat(store, unanswered="omit") == [
        {"role": "user", "content": QUESTION},
        {"role": "assistant", "content": INTRO},
    ]
    items = _responses(store, unanswered="omit")
    assert [item["type"] for item in items] == ["message", "message"]
    assert all(DELETE.call_id not in str(item) for item in items)


def test_the_models_answer_to_the_denial_follows_the_tool_result(store: ConversationStore) -> None:
    """The continuation (same assistant message, new step) comes after the denial's result."""
    paused_turn(store, "chat", [DELETE])
    _deny(store)
    chunks = continuation_chunks({}, reply="Understood, I will keep the report.")
    # The server first re-sends the denial (a replay: recorded, changes nothing).
    chunks.insert(1, {"type": "tool-output-denied", "toolCallId": DELETE.call_id})

    report = store.ingest("chat", chunks, continuation=True, actor=BOT)

    assert report.refused == []
    assert report.message_id == "a1"
    assert _anthropic(store)["messages"] == [
        ANTHROPIC_USER,
        ANTHROPIC_CALL,
        ANTHROPIC_DENIAL,
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "Understood, I will keep the report."}],
        },
    ]
    assert _chat(store)[-2:] == [
        {"role": "tool", "tool_call_id": DELETE.call_id, "content": REASON},
        {"role": "assistant", "content": "Understood, I will keep the report."},
    ]


def test_a_denial_without_a_reason_sends_the_default_text(store: ConversationStore) -> None:
    paused_turn(store, "chat", [DELETE])
    store.respond_to_approval("chat", tool_call_id=DELETE.call_id, approved=False, actor=ALICE)

    assert _anthropic(store)["messages"][-1] == {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": DELETE.call_id,
                "content": "Tool call execution denied.",
                "is_error": True,
            }
        ],
    }


def test_a_fresh_store_on_the_same_database_gives_the_same_payloads(
    durable_backend: Backend,
) -> None:
    """The denial is durable: a new store (a restarted process) converts it the same way."""
    first = durable_backend.open()
    paused_turn(first, "chat", [DELETE])
    _deny(first)
    expected = {f: first.model_messages("chat", format=f) for f in ("anthropic", "openai-chat")}
    first.close()

    second = durable_backend.open()

    assert (
        _anthropic(second)
        == expected["anthropic"]
        == {"messages": [ANTHROPIC_USER, ANTHROPIC_CALL, ANTHROPIC_DENIAL]}
    )
    assert _chat(second) == expected["openai-chat"]
