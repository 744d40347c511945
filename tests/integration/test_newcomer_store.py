"""Rough edges a newcomer meets in the store: edits of unknown ids, paused versus ready, the demo.

Every test runs on memory, SQLite and PostgreSQL.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from chatledger import ConversationStore
from chatledger.adapters.responders.demo import (
    APPROVAL_ID,
    DENIAL_REASON,
    TOOL_CALL_ID,
    TOOL_OUTPUT,
    USER_MESSAGE,
    first_turn_chunks,
)
from chatledger.adapters.responders.scripted import ResponderRequest, demo_responder
from chatledger.domain.errors import (
    ConversationNotFoundError,
    InvalidMessageError,
    UnansweredToolCallError,
)

PROVIDER_FORMATS = ("anthropic", "openai-chat", "openai-responses")


def _demo_paused(store: ConversationStore, chat: str = "demo") -> None:
    store.start_conversation(chat)
    store.append_message(chat, USER_MESSAGE, actor="user:alice")
    store.ingest(chat, first_turn_chunks(), actor="agent:ops-assistant")


def test_editing_an_unknown_message_says_there_is_no_such_message(
    store: ConversationStore,
) -> None:
    _demo_paused(store)
    with pytest.raises(InvalidMessageError, match="no such message") as refused:
        store.edit("demo", "msg-nope", {"id": "u9", "role": "user", "parts": []})
    assert refused.value.message_id == "msg-nope"
    assistant = store.messages("demo")[-1]["id"]
    with pytest.raises(InvalidMessageError, match="only a user message can be edited"):
        store.edit("demo", assistant, {"id": "u9", "role": "user", "parts": []})


def _refusals(store: ConversationStore) -> list[str]:
    said = []
    for format_ in PROVIDER_FORMATS:
        with pytest.raises(UnansweredToolCallError) as refused:
            store.model_messages("demo", format_)
        said.append(str(refused.value))
    assert len(set(said)) == 1, said  # every provider format says it the same way
    return said


def test_status_and_converters_agree_on_paused_and_ready(store: ConversationStore) -> None:
    _demo_paused(store)
    assert store.status("demo").status == "awaiting-approval"
    assert "the turn is paused" in _refusals(store)[0]

    store.respond_to_approval(
        "demo", approval_id=APPROVAL_ID, approved=True, actor="user:alice", auto_continue=False
    )
    assert store.status("demo").status == "ready-to-continue"
    said = _refusals(store)[0]
    assert "ready to continue" in said and "paused" not in said
    ai_sdk = store.model_messages("demo", "ai-sdk")  # the AI SDK's own way: the approval response
    assert ai_sdk[-1]["content"][0]["type"] == "tool-approval-response"
    for format_ in PROVIDER_FORMATS:
        assert store.model_messages("demo", format_, unanswered="omit")


async def _collect(chunks: Any) -> list[dict[str, Any]]:
    return [chunk async for chunk in chunks]


def _continue_demo(store: ConversationStore) -> dict[str, Any]:
    responder = demo_responder()
    messages = store.messages("demo")
    request = ResponderRequest("demo", "default", messages, "continuation", messages[-1]["id"])
    chunks = asyncio.run(_collect(responder.respond(request)))
    report = store.ingest("demo", chunks, actor=responder.actor, continuation=True)
    assert report.refused == []
    return store.messages("demo")[-1]


def test_the_demo_runs_the_tool_when_approved(store: ConversationStore) -> None:
    _demo_paused(store)
    store.respond_to_approval("demo", approval_id=APPROVAL_ID, approved=True, actor="user:alice")
    answer = _continue_demo(store)
    call = next(p for p in answer["parts"] if p.get("toolCallId") == TOOL_CALL_ID)
    assert call["state"] == "output-available" and call["output"] == TOOL_OUTPUT
    text = "".join(p["text"] for p in answer["parts"] if p["type"] == "text")
    assert "3.2 GiB" in text and "I deleted /var/log/ci/archive" in text
    assert store.status("demo").status == "idle"


def test_the_demo_answers_the_denial_when_denied(store: ConversationStore) -> None:
    _demo_paused(store)
    store.respond_to_approval(
        "demo", approval_id=APPROVAL_ID, approved=False, reason=DENIAL_REASON, actor="user:alice"
    )
    answer = _continue_demo(store)
    call = next(p for p in answer["parts"] if p.get("toolCallId") == TOOL_CALL_ID)
    assert call["state"] == "output-denied"
    text = "".join(p["text"] for p in answer["parts"] if p["type"] == "text")
    assert "won't delete anything" in text


def test_the_audit_names_each_message_by_one_id(store: ConversationStore) -> None:
    """The stream's provisional message id never shows: the start chunk's id does, once."""
    _demo_paused(store)
    opened = store.history("demo", kinds=["stream-opened"])[0]
    provisional = opened.details["messageId"]
    final = store.messages("demo")[-1]["id"]
    assert provisional != final  # the demo's start chunk names the message
    summaries = [entry.summary for entry in store.history("demo")]
    assert not any(provisional in summary for summary in summaries)
    assert sum(f"start of message {final}" in summary for summary in summaries) == 1


def test_error_messages_name_no_python_call(store: ConversationStore) -> None:
    """What a CLI or HTTP user reads names no Python function (the interfaces add their own hint)."""
    with pytest.raises(ConversationNotFoundError) as missing:
        store.messages("ghost")
    assert "()" not in str(missing.value) and "'ghost'" in str(missing.value)
