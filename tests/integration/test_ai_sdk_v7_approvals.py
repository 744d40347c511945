"""AI SDK 7 approval rules in the store: interrupted streams, superseded approvals, first answer wins."""

from __future__ import annotations

from typing import Any

import pytest

from chatledger import ConversationStore
from chatledger.domain.errors import ApprovalConflictError

Chunk = dict[str, Any]
QUESTION = {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "clean up"}]}
MOVED_ON = {"id": "u2", "role": "user", "parts": [{"type": "text", "text": "never mind"}]}


def _asks(call: str = "c1", approval: str = "ap1", finish: str = "tool-calls") -> list[Chunk]:
    return [
        {"type": "start", "messageId": "a1"},
        {"type": "start-step"},
        {"type": "tool-input-available", "toolCallId": call, "toolName": "rm", "input": {}},
        {"type": "tool-approval-request", "toolCallId": call, "approvalId": approval},
        {"type": "finish-step"},
        {"type": "finish", "finishReason": finish},
    ]


def _conversation(store: ConversationStore, finish: str = "tool-calls") -> None:
    store.start_conversation("c", actor="user:ann")
    store.append_message("c", QUESTION, actor="user:ann")
    store.ingest("c", _asks(finish=finish), actor="agent:bot")


def _part(store: ConversationStore) -> dict[str, Any]:
    part: dict[str, Any] = store.messages("c")[1]["parts"][1]
    return part


def test_an_interrupted_stream_closes_interrupted_and_nothing_continues_it(
    store: ConversationStore,
) -> None:
    """finishReason interrupted: outcome interrupted; a late approval is recorded, changes nothing."""
    _conversation(store, finish="interrupted")
    status = store.status("c")
    assert status.last_outcome == "interrupted"
    late = store.respond_to_approval("c", approval_id="ap1", approved=True, actor="user:ann")
    assert not late.changed and not late.continuation_requested
    assert _part(store)["state"] == "approval-requested"
    assert store.pending_continuations() == []
    entry = store.history("c", kinds=["approval-responded"])[-1]
    assert entry.actor == "user:ann" and entry.details.get("late") is True


def test_a_later_normal_finish_lifts_the_interruption(store: ConversationStore) -> None:
    """Once a stream for the message finishes normally, answers continue the turn again."""
    _conversation(store, finish="interrupted")
    store.ingest("c", [{"type": "finish", "finishReason": "tool-calls"}], continuation=True)
    answer = store.respond_to_approval("c", approval_id="ap1", approved=True)
    assert answer.changed and answer.continuation_requested


def test_a_new_user_message_supersedes_pending_approvals(store: ConversationStore) -> None:
    """The request leaves the inbox and status; answering it later changes nothing."""
    _conversation(store)
    assert [p.tool_call_id for p in store.pending_approvals()] == ["c1"]
    store.append_message("c", MOVED_ON, actor="user:ann")
    assert store.pending_approvals() == []
    assert store.status("c").status == "idle"
    answer = store.respond_to_approval("c", approval_id="ap1", approved=True)
    assert not answer.changed
    assert _part(store)["state"] == "approval-requested"
    model = store.model_messages("c")
    assert [m["role"] for m in model] == ["user", "user"]  # v7 drops the superseded request
    anthropic = store.model_messages("c", "anthropic")
    results = [b for m in anthropic["messages"] for b in m["content"] if b["type"] == "tool_result"]
    assert [r["content"] for r in results] == [
        "The tool call was interrupted before a result was recorded."
    ]


def test_a_tool_output_settles_a_call_awaiting_approval(store: ConversationStore) -> None:
    """add_tool_output on an approval-requested call: the approval is dropped, the turn continues."""
    _conversation(store)
    result = store.add_tool_output("c", "c1", output={"removed": 0})
    assert result.changed and result.continuation_requested
    part = _part(store)
    assert part["state"] == "output-available" and "approval" not in part


def test_the_first_answer_wins_between_stream_and_client(store: ConversationStore) -> None:
    """An approval decided on the stream cannot be reversed by a client; the same answer is a no-op."""
    _conversation(store)
    store.ingest(
        "c",
        [{"type": "tool-approval-response", "approvalId": "ap1", "approved": True}],
        continuation=True,
        actor="agent:policy",
    )
    assert _part(store)["approval"]["approved"] is True
    assert not store.respond_to_approval("c", approval_id="ap1", approved=True).changed
    with pytest.raises(ApprovalConflictError):
        store.respond_to_approval("c", approval_id="ap1", approved=False)


def test_v6_conversations_keep_the_v6_rules(store: ConversationStore) -> None:
    """A v6 conversation: a later user message does not supersede; no interrupted finish exists."""
    store.start_conversation("c", ai_sdk=6)
    store.append_message("c", QUESTION)
    store.ingest("c", _asks())
    store.append_message("c", MOVED_ON)
    assert store.respond_to_approval("c", approval_id="ap1", approved=True).changed


def test_a_late_tool_output_on_an_interrupted_message_is_recorded_and_changes_nothing(
    store: ConversationStore,
) -> None:
    """A result for a call of an interrupted message is audited as late; the part and queue stay."""
    _conversation(store, finish="interrupted")
    late = store.add_tool_output("c", "c1", output={"ok": True}, actor="browser")
    assert not late.changed and not late.continuation_requested
    assert _part(store)["state"] == "approval-requested"
    assert store.pending_continuations() == []
    entry = store.history("c", kinds=["tool-output-added"])[-1]
    assert entry.actor == "browser" and entry.details.get("late") is True


@pytest.mark.parametrize("ai_sdk", [6, 7])
def test_an_older_request_after_the_latest_user_message_stays_in_the_inbox(
    store: ConversationStore, ai_sdk: int
) -> None:
    """Two assistant messages ask in turn, no user message between: both calls await approval."""
    store.start_conversation("c", ai_sdk=ai_sdk)
    store.append_message("c", QUESTION)
    store.ingest("c", _asks())
    second = _asks(call="c2", approval="ap2")
    second[0] = {"type": "start", "messageId": "a2"}
    store.ingest("c", second)
    assert [m["id"] for m in store.messages("c")] == ["u1", "a1", "a2"]
    pending = store.pending_approvals()
    assert [(p.message_id, p.tool_call_id) for p in pending] == [("a1", "c1"), ("a2", "c2")]
    status = store.status("c")
    assert status.status == "awaiting-approval"
    assert [w.tool_call_id for w in status.waiting_for] == ["c1", "c2"]
    store.respond_to_approval("c", approval_id="ap1", approved=True)
    assert [p.tool_call_id for p in store.pending_approvals()] == ["c2"]
    assert store.operations.verify().ok
    store.append_message("c", MOVED_ON)
    if ai_sdk == 7:  # a new user message supersedes both
        assert store.pending_approvals() == []
