"""The LangGraph responder's two conversions, on LangChain's real message types.

Stored UIMessages -> LangChain messages (the history a graph is given), and a
run's ``messages``/``updates`` stream items -> UI message chunks (what the
store records): steps, unstreamed text, tool errors and denials, interrupts
and the one that names no tool call.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage, ToolMessage
from langgraph.types import Interrupt

from chatledger import ConversationStore
from chatledger.adapters.responders.langgraph import decisions_of
from chatledger.adapters.responders.langgraph_chunks import ChunkMapper, UnmatchedInterruptError
from chatledger.adapters.responders.langgraph_messages import to_langchain_messages

CALL: dict[str, Any] = {"name": "delete_file", "args": {"path": "/x"}, "id": "c1"}


def test_an_assistant_message_becomes_one_ai_message_per_step_with_its_settled_results() -> None:
    stored = [
        {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "clean up"}]},
        {
            "id": "a1",
            "role": "assistant",
            "parts": [
                {"type": "step-start"},
                {"type": "text", "text": "Looking."},
                {"type": "tool-delete_file", "toolCallId": "c1", "state": "output-error",
                 "input": {"path": "/x"}, "errorText": "busy"},
                {"type": "tool-delete_file", "toolCallId": "c2", "state": "output-denied",
                 "input": {"path": "/y"},
                 "approval": {"id": "i2", "approved": False, "reason": "keep it"}},
                {"type": "step-start"},
                {"type": "text", "text": "Nothing deleted."},
                {"type": "tool-delete_file", "toolCallId": "c3", "state": "input-available",
                 "input": {"path": "/z"}},
            ],
        },
    ]  # fmt: skip
    converted = to_langchain_messages(stored)
    assert [type(m).__name__ for m in converted] == [
        "HumanMessage",
        "AIMessage",
        "ToolMessage",
        "ToolMessage",
        "AIMessage",
    ]
    first = converted[1]
    assert isinstance(first, AIMessage) and first.text == "Looking."
    assert [call["id"] for call in first.tool_calls] == ["c1", "c2"]
    error, denied = converted[2], converted[3]
    assert isinstance(error, ToolMessage) and error.status == "error" and error.text == "busy"
    assert isinstance(denied, ToolMessage) and "keep it" in denied.text
    last = converted[4]
    assert isinstance(last, AIMessage) and last.tool_calls == []  # c3 has no result yet
    assert last.text == "Nothing deleted."


def test_streamed_tokens_and_node_updates_become_steps_text_and_tool_chunks() -> None:
    mapper = ChunkMapper(denied={"c2"})
    out = mapper.token(AIMessageChunk(content="Hi ", id="m1"))
    out += mapper.token(AIMessageChunk(content="there", id="m1"))
    out += mapper.token(
        AIMessageChunk(
            content="",
            id="m1",
            tool_call_chunks=[{"index": 0, "id": "c1", "name": "delete_file", "args": '{"pa'}],
        )
    )
    answer = AIMessage(content="Hi there", id="m1", tool_calls=[CALL])
    out += mapper.update({"agent": {"messages": [answer]}})
    out += mapper.update(
        {"tools": {"messages": [ToolMessage("failed", tool_call_id="c1", status="error")]}}
    )
    out += mapper.update({"agent": {"messages": AIMessage(content="Sorry.", id="m2")}})
    out += mapper.finish()
    assert out == [
        {"type": "start-step"},
        {"type": "text-start", "id": "text-1"},
        {"type": "text-delta", "id": "text-1", "delta": "Hi "},
        {"type": "text-delta", "id": "text-1", "delta": "there"},
        {"type": "text-end", "id": "text-1"},
        {"type": "tool-input-start", "toolCallId": "c1", "toolName": "delete_file"},
        {"type": "tool-input-delta", "toolCallId": "c1", "inputTextDelta": '{"pa'},
        {"type": "tool-input-available", "toolCallId": "c1", "toolName": "delete_file",
         "input": {"path": "/x"}},
        {"type": "tool-output-error", "toolCallId": "c1", "errorText": "failed"},
        {"type": "finish-step"},
        {"type": "start-step"},
        {"type": "text-start", "id": "text-2"},
        {"type": "text-delta", "id": "text-2", "delta": "Sorry."},
        {"type": "text-end", "id": "text-2"},
        {"type": "finish-step"},
        {"type": "finish"},
    ]  # fmt: skip


def test_a_denied_calls_result_is_sent_as_a_denial_and_json_results_as_json() -> None:
    mapper = ChunkMapper(denied={"c2"})
    out = mapper.update(
        {
            "tools": {
                "messages": [
                    ToolMessage("not deleted", tool_call_id="c2"),
                    ToolMessage('{"freed": 12}', tool_call_id="c3"),
                ]
            }
        }
    )
    assert out == [
        {"type": "start-step"},
        {"type": "tool-output-denied", "toolCallId": "c2"},
        {"type": "tool-output-available", "toolCallId": "c3", "output": {"freed": 12}},
    ]


def test_an_interrupt_lands_on_the_call_it_names_or_the_one_call_waiting() -> None:
    mapper = ChunkMapper()
    mapper.update({"agent": {"messages": [AIMessage(content="", id="m1", tool_calls=[CALL])]}})
    asked = mapper.interrupts([Interrupt(value={"question": "sure?"}, id="i1")])
    assert asked == [{"type": "tool-approval-request", "approvalId": "i1", "toolCallId": "c1"}]
    named = ChunkMapper().interrupts([Interrupt(value={"toolCallId": "c9"}, id="i9")])
    assert named[-1] == {"type": "tool-approval-request", "approvalId": "i9", "toolCallId": "c9"}


def test_an_interrupt_naming_no_call_with_none_waiting_is_refused_saying_how_to_name_it() -> None:
    with pytest.raises(UnmatchedInterruptError, match="request_approval"):
        ChunkMapper().interrupts([Interrupt(value="continue?", id="i1")])


def test_decisions_are_read_by_approval_id() -> None:
    message = {
        "parts": [
            {"type": "tool-a", "toolCallId": "c1", "approval": {"id": "i1", "approved": True}},
            {"type": "tool-b", "toolCallId": "c2", "approval": {"id": "i2"}},  # not answered
            {"type": "text", "text": "x"},
        ]
    }
    assert decisions_of(message) == {"i1": {"approved": True, "reason": None, "toolCallId": "c1"}}
    assert to_langchain_messages([{"role": "user", "parts": []}]) == [HumanMessage(content="")]


def test_reasoning_streams_as_reasoning_parts_and_the_store_keeps_them() -> None:
    mapper = ChunkMapper()
    thinking = [{"type": "reasoning", "reasoning": "Disk is full; ", "index": 0}]
    out = mapper.token(AIMessageChunk(content=thinking, id="m1"))
    more = [{"type": "reasoning", "reasoning": "check first.", "index": 0}]
    out += mapper.token(AIMessageChunk(content=more, id="m1"))
    out += mapper.token(
        AIMessageChunk(content=[{"type": "text", "text": "Checking.", "index": 1}], id="m1")
    )
    out += mapper.update({"agent": {"messages": [AIMessage(content="Checking.", id="m1")]}})
    # A model that did not stream (Anthropic's thinking blocks, as LangChain normalizes them):
    whole = AIMessage(
        content=[
            {"type": "thinking", "thinking": "Still full."},
            {"type": "text", "text": "Done."},
        ],
        response_metadata={"model_provider": "anthropic"},
        id="m2",
    )
    out += mapper.update({"agent": {"messages": [whole]}})
    out += mapper.finish()
    assert [c["type"] for c in out] == [
        "start-step",
        "reasoning-start", "reasoning-delta", "reasoning-delta", "reasoning-end",
        "text-start", "text-delta", "text-end",
        "finish-step",
        "start-step",
        "reasoning-start", "reasoning-delta", "reasoning-end",
        "text-start", "text-delta", "text-end",
        "finish-step",
        "finish",
    ]  # fmt: skip
    with ConversationStore.open("memory://") as store:
        store.start_conversation("r")
        store.append_message(
            "r", {"id": "u", "role": "user", "parts": [{"type": "text", "text": "?"}]}
        )
        store.ingest("r", [{"type": "start", "messageId": "a"}, *out], actor="agent:langgraph")
        parts = store.messages("r")[-1]["parts"]
        shown = [(p["type"], p.get("text")) for p in parts if p["type"] != "step-start"]
        assert shown == [
            ("reasoning", "Disk is full; check first."),
            ("text", "Checking."),
            ("reasoning", "Still full."),
            ("text", "Done."),
        ]
