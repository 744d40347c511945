"""A store speaks AI SDK 7 by default, keeps each conversation's version, and audits v7 streams."""

from __future__ import annotations

import pytest

from chatledger import ConversationStore
from chatledger.domain.errors import InvalidAiSdkVersionError
from chatledger.domain.whole_stream import fold_stream
from tests.integration.conftest import Backend
from tests.support.ledger import replay_from_scratch, stored_chunk_count

RETRIED = [
    {"type": "start", "messageId": "m1"},
    {"type": "start-step"},
    {"type": "text-start", "id": "t"},
    {"type": "text-delta", "id": "t", "delta": "first try"},
    {"type": "tool-input-available", "toolCallId": "c1", "toolName": "search", "input": {}},
    {"type": "reset-step"},
    {"type": "text-start", "id": "t"},
    {"type": "text-delta", "id": "t", "delta": "second try"},
    {"type": "text-end", "id": "t"},
    {"type": "tool-input-start", "toolCallId": "c1", "toolName": "search"},
    {"type": "tool-input-available", "toolCallId": "c1", "toolName": "search", "input": {"q": 1}},
    {"type": "finish-step"},
    {"type": "finish", "finishReason": "tool-calls"},
]
AUTOMATIC = [
    {"type": "start-step"},
    {"type": "tool-input-available", "toolCallId": "c9", "toolName": "rm", "input": {"p": "/"}},
    {"type": "tool-approval-request", "toolCallId": "c9", "approvalId": "ap9",
     "isAutomatic": True, "reason": "destructive"},
    {"type": "tool-approval-response", "approvalId": "ap9", "approved": False,
     "reason": "policy forbids deleting /"},
    {"type": "tool-output-denied", "toolCallId": "c9"},
    {"type": "finish-step"},
]  # fmt: skip


def test_new_conversations_speak_v7_unless_told_otherwise(backend: Backend) -> None:
    """Store default 7; ``start_conversation(ai_sdk=6)`` and ``open(ai_sdk=6)`` pin v6."""
    store = backend.open()
    store.start_conversation("new")
    store.start_conversation("pinned", ai_sdk=6)
    assert store.ai_sdk == 7
    assert store.ai_sdk_of("new") == 7
    assert store.ai_sdk_of("pinned") == 6
    if not backend.durable:
        return  # a second store on the same data needs a database
    v6_store = backend.other_store(store, ai_sdk=6)
    v6_store.start_conversation("old-app")
    assert v6_store.ai_sdk_of("old-app") == 6
    assert v6_store.ai_sdk_of("new") == 7  # the version is the conversation's, not the store's
    report = v6_store.ingest("new", [{"type": "start-step"}, {"type": "reset-step"}])
    assert report.refused == []


def test_the_environment_picks_the_default(
    tmp_path: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``CHATLEDGER_AI_SDK`` sets the default; anything but 6 or 7 is refused by name."""
    monkeypatch.setenv("CHATLEDGER_AI_SDK", "6")
    with ConversationStore.open("memory://") as store:
        assert store.ai_sdk == 6
    monkeypatch.setenv("CHATLEDGER_AI_SDK", "8")
    with pytest.raises(InvalidAiSdkVersionError, match="CHATLEDGER_AI_SDK"):
        ConversationStore.open("memory://")
    with pytest.raises(InvalidAiSdkVersionError):
        ConversationStore.open("memory://", ai_sdk=5)


def test_a_retried_step_leaves_the_view_but_stays_in_the_log_and_audit(backend: Backend) -> None:
    """reset-step: the view is v7's; every chunk is stored; the audit names the retracted ones."""
    store = backend.open()
    store.start_conversation("c", actor="user:ann")
    report = store.ingest("c", RETRIED, actor="agent:bot")
    assert (report.applied, report.replays, report.refused) == (len(RETRIED), 0, [])
    [message] = store.messages("c")
    assert message == fold_stream(RETRIED, ai_sdk=7)
    assert [p.get("text") for p in message["parts"] if p["type"] == "text"] == ["second try"]
    assert stored_chunk_count(store, "c") == len(RETRIED)
    assert replay_from_scratch(store, "c").state.messages == store.messages("c")
    batches = [e for e in store.history("c", full=True) if "retracted" in e.marks]
    assert len(batches) == 1
    assert batches[0].details["retracted"] == [2, 3, 4]
    assert batches[0].actor == "agent:bot"


def test_an_approval_decided_on_the_stream_is_audited_as_the_stream_actors(
    backend: Backend,
) -> None:
    """An automatic denial shows who (the stream's actor), that a policy decided, and why."""
    store = backend.open()
    store.start_conversation("c", actor="user:ann")
    store.ingest("c", AUTOMATIC, actor="agent:ops")
    part = store.messages("c")[-1]["parts"][1]
    assert part["state"] == "output-denied"
    assert part["approval"] == {
        "id": "ap9",
        "requestReason": "destructive",
        "isAutomatic": True,
        "approved": False,
        "reason": "policy forbids deleting /",
    }
    [entry] = [e for e in store.history("c", full=True) if "approvalDecisions" in e.details]
    assert entry.actor == "agent:ops" and "denied" in entry.marks
    assert entry.details["approvalDecisions"] == [
        {
            "approvalId": "ap9",
            "toolCallId": "c9",
            "approved": False,
            "reason": "policy forbids deleting /",
            "automatic": True,
        }
    ]
    tool = store.model_messages("c")[-1]
    assert tool["role"] == "tool"
    assert tool["content"][-1]["output"] == {
        "type": "error-text",
        "value": "policy forbids deleting /",
    }


def test_a_repeated_or_contrary_stream_answer_changes_nothing(backend: Backend) -> None:
    """First answer wins: the same answer again is a replay, a contrary one is refused."""
    store = backend.open()
    store.start_conversation("c")
    store.ingest("c", AUTOMATIC[:4])
    again = store.ingest(
        "c",
        [
            {"type": "tool-approval-response", "approvalId": "ap9", "approved": False},
            {"type": "tool-approval-response", "approvalId": "ap9", "approved": True},
        ],
        continuation=True,
    )
    assert again.applied == 0 and again.replays == 1 and len(again.refused) == 1
    assert "first answer stands" in str(again.refused[0])
    assert store.messages("c")[-1]["parts"][1]["approval"]["approved"] is False
