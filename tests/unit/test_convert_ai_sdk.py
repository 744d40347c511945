"""``chatledger.domain.convert.ai_sdk``: notable behaviours of the SDK's ``convertToModelMessages``.

Every expected output here is what ``ai@6.0.326`` gives for the same messages
(the conformance tests compare with the real SDK on many more).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from chatledger.domain.convert import to_model_messages
from chatledger.domain.convert.ai_sdk import convert
from chatledger.domain.errors import MessageConversionError

QUESTION = {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Clean up /tmp?"}]}


def _assistant(*parts: dict[str, Any]) -> dict[str, Any]:
    return {"id": "a1", "role": "assistant", "parts": list(parts)}


def _delete(state: str, **fields: Any) -> dict[str, Any]:
    return {
        "type": "tool-delete",
        "toolCallId": "call_1",
        "state": state,
        "input": {"path": "/tmp"},
        **fields,
    }


CALL = {
    "type": "tool-call",
    "toolCallId": "call_1",
    "toolName": "delete",
    "input": {"path": "/tmp"},
}


def test_a_call_awaiting_approval_gives_a_tool_approval_request() -> None:
    """An approval-requested call goes to the model as the call plus its approval request."""
    part = _delete("approval-requested", approval={"id": "ap_1", "descriptor": {"risk": "high"}})
    assert convert([_assistant(part)]) == [
        {
            "role": "assistant",
            "content": [
                CALL,
                {"type": "tool-approval-request", "approvalId": "ap_1", "toolCallId": "call_1"},
            ],
        }
    ]


def test_a_denied_call_gives_an_error_text_result_with_the_reason() -> None:
    """output-denied: the approval answer, then a tool-result carrying the denial reason."""
    part = _delete("output-denied", approval={"id": "ap_1", "approved": False, "reason": "not now"})
    assert convert([_assistant(part)])[1] == {
        "role": "tool",
        "content": [
            {
                "type": "tool-approval-response",
                "approvalId": "ap_1",
                "approved": False,
                "reason": "not now",
            },
            {
                "type": "tool-result",
                "toolCallId": "call_1",
                "toolName": "delete",
                "output": {"type": "error-text", "value": "not now"},
            },
        ],
    }


def test_a_denial_without_a_reason_says_execution_was_denied() -> None:
    """With no reason, the result says "Tool call execution denied."."""
    part = _delete("output-denied", approval={"id": "ap_1", "approved": False})
    result = convert([_assistant(part)])[1]["content"][1]
    assert result["output"] == {"type": "error-text", "value": "Tool call execution denied."}


def test_a_denied_approval_response_alone_gives_no_tool_result() -> None:
    """approval-responded (denied) gives only the approval answer; v6 writes no result for it."""
    part = _delete("approval-responded", approval={"id": "ap_1", "approved": False})
    assert convert([_assistant(part)])[1] == {
        "role": "tool",
        "content": [{"type": "tool-approval-response", "approvalId": "ap_1", "approved": False}],
    }


def test_ignore_incomplete_tool_calls_drops_unfinished_calls() -> None:
    """input-streaming, input-available, approval-requested and preliminary calls are dropped."""
    unfinished = [
        _delete("input-streaming"),
        _delete("input-available"),
        _delete("approval-requested", approval={"id": "ap_1"}),
        _delete("output-available", output={"done": 1}, preliminary=True),
    ]
    text = {"type": "text", "text": "Working on it."}
    messages = [QUESTION, _assistant(text, *unfinished)]
    assert convert(messages, ignore_incomplete_tool_calls=True) == [
        {"role": "user", "content": [{"type": "text", "text": "Clean up /tmp?"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Working on it."}]},
    ]


def test_without_the_option_an_input_available_call_is_left_without_a_result() -> None:
    """The SDK sends a call that has no result yet (providers may refuse such a history)."""
    assert convert([_assistant(_delete("input-available"))]) == [
        {"role": "assistant", "content": [CALL]}
    ]


def test_each_step_gives_an_assistant_message_then_its_tool_results() -> None:
    """step-start cuts the message into blocks; each block's results follow in a tool message."""
    messages = [
        _assistant(
            {"type": "step-start"},
            _delete("output-available", output="deleted 3 files"),
            {"type": "step-start"},
            {"type": "text", "text": "Done.", "state": "done"},
        )
    ]
    assert convert(messages) == [
        {"role": "assistant", "content": [CALL]},
        {
            "role": "tool",
            "content": [
                {
                    "type": "tool-result",
                    "toolCallId": "call_1",
                    "toolName": "delete",
                    "output": {"type": "text", "value": "deleted 3 files"},
                }
            ],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "Done."}]},
    ]


def test_a_failed_invalid_call_sends_its_raw_input_text() -> None:
    """output-error without input: the tool-call carries rawInput; the result is error-text."""
    part = {
        "type": "tool-delete",
        "toolCallId": "call_1",
        "state": "output-error",
        "rawInput": '{"path": ',
        "errorText": "Invalid input",
    }
    call, result = convert([_assistant(part)])
    assert call["content"] == [{**CALL, "input": '{"path": '}]
    assert result["content"][0]["output"] == {"type": "error-text", "value": "Invalid input"}


def test_a_provider_executed_result_stays_in_the_assistant_message() -> None:
    """A provider-executed tool's result follows its call in the assistant turn; no tool message."""
    part = _delete("output-available", output={"n": 3}, providerExecuted=True)
    assert convert([_assistant(part)]) == [
        {
            "role": "assistant",
            "content": [
                {**CALL, "providerExecuted": True},
                {
                    "type": "tool-result",
                    "toolCallId": "call_1",
                    "toolName": "delete",
                    "output": {"type": "json", "value": {"n": 3}},
                },
            ],
        }
    ]


def test_system_text_is_joined_and_data_parts_are_dropped() -> None:
    """System text parts are joined with no separator; data parts reach no model message."""
    system = {
        "id": "s",
        "role": "system",
        "parts": [{"type": "text", "text": "Be "}, {"type": "text", "text": "brief."}],
    }
    user = {"id": "u", "role": "user", "parts": [{"type": "data-weather", "data": {"t": 20}}]}
    assert convert([system, user]) == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": []},
    ]


def test_an_unsupported_role_is_refused_naming_the_message() -> None:
    """A role the SDK does not know raises MessageConversionError with the message id."""
    with pytest.raises(MessageConversionError) as refused:
        convert([{"id": "t1", "role": "tool", "parts": []}])
    assert refused.value.message_id == "t1"
    assert "unsupported role 'tool'" in str(refused.value)


def test_the_input_messages_are_not_changed_nor_shared() -> None:
    """convert leaves its argument as it was, and its result shares no object with it."""
    part = _delete(
        "output-available",
        output={"files": ["a"]},
        callProviderMetadata={"openai": {"itemId": "x"}},
        approval={"id": "ap_1", "approved": True},
    )
    messages = [QUESTION, _assistant(part)]
    before = copy.deepcopy(messages)
    for ignore in (False, True):
        result = convert(messages, ignore_incomplete_tool_calls=ignore)
        result[1]["content"][0]["providerOptions"]["openai"]["itemId"] = "changed"
        result[2]["content"][1]["output"]["value"]["files"].append("b")
    assert messages == before


def test_the_dispatcher_uses_this_converter_for_ai_sdk() -> None:
    """to_model_messages(..., "ai-sdk") is this converter, option included."""
    messages = [_assistant(_delete("input-available"))]
    assert to_model_messages(messages, "ai-sdk", ignore_incomplete_tool_calls=True) == []
