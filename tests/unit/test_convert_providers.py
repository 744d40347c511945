"""The provider formats of ``model_messages`` (docs/behaviour.md §6): Anthropic, OpenAI Chat, OpenAI Responses.

Each case gives UIMessages and the exact payload expected. Every payload is
also validated, strictly (no undeclared key anywhere), against the official
SDKs' own request types (``tests.support.provider_types``); the last tests
prove that this validation does catch bad payloads.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from pydantic import ValidationError

from chatledger.domain.convert import anthropic, openai_chat, openai_responses, to_model_messages
from chatledger.domain.convert.turns import DENIED_TEXT, INTERRUPTED_TEXT
from chatledger.domain.errors import (
    InvalidInputError,
    MessageConversionError,
    UnansweredToolCallError,
)
from tests.support.provider_types import (
    validate_anthropic,
    validate_openai_chat,
    validate_openai_responses,
)

Message = dict[str, Any]

STEP = {"type": "step-start"}
PATH = {"path": "/srv/report.csv"}
PNG = "data:image/png;base64,iVBORw0KGgo="
PDF = "data:application/pdf;base64,JVBERi0xLjQK"
UNANSWERED_STATES = ("input-streaming", "input-available", "approval-requested", "approved")


# -- building UIMessages ------------------------------------------------------------------------


def user(text: str = "Clean up the old report.", mid: str = "u1", *parts: Message) -> Message:
    return {"id": mid, "role": "user", "parts": [{"type": "text", "text": text}, *parts]}


def system(text: str, mid: str = "s1") -> Message:
    return {"id": mid, "role": "system", "parts": [{"type": "text", "text": text}]}


def assistant(*parts: Message, mid: str = "a1") -> Message:
    return {"id": mid, "role": "assistant", "parts": [STEP, *parts]}


def text(value: str, **extra: Any) -> Message:
    return {"type": "text", "text": value, "state": "done", **extra}


def tool(state: str, call_id: str = "call_1", name: str = "deleteFile", **extra: Any) -> Message:
    """A static tool part in ``state`` (``approved``: approval-responded, approved)."""
    part: Message = {"type": f"tool-{name}", "toolCallId": call_id, "input": PATH}
    if state == "approved":
        part |= {
            "state": "approval-responded",
            "approval": {"id": f"ap-{call_id}", "approved": True},
        }
    elif state == "approval-requested":
        part |= {"state": state, "approval": {"id": f"ap-{call_id}"}}
    elif state == "input-streaming":
        part |= {"state": state, "rawInput": '{"path": "/srv/rep'}
        del part["input"]
    else:
        part["state"] = state
    return part | extra


def denied(call_id: str = "call_1", reason: str | None = "Not that file.") -> Message:
    approval: Message = {"id": f"ap-{call_id}", "approved": False}
    if reason is not None:
        approval["reason"] = reason
    return tool("output-denied", call_id, approval=approval)


def done(call_id: str = "call_1", output: Any = None, name: str = "deleteFile") -> Message:
    return tool(
        "output-available", call_id, name, output={"deleted": True} if output is None else output
    )


# -- converting, with strict validation against the SDKs' request types ------------------------


def to_anthropic(messages: list[Message], **options: Any) -> dict[str, Any]:
    payload = anthropic.convert(messages, **options)
    validate_anthropic(payload)
    return payload


def to_chat(messages: list[Message], **options: Any) -> list[dict[str, Any]]:
    payload = openai_chat.convert(messages, **options)
    validate_openai_chat(payload)
    return payload


def to_responses(messages: list[Message], **options: Any) -> list[dict[str, Any]]:
    payload = openai_responses.convert(messages, **options)
    validate_openai_responses(payload)
    return payload


# Expected payload fragments, to keep the cases readable.
A_USER = {"role": "user", "content": [{"type": "text", "text": "Clean up the old report."}]}
A_CALL = {
    "role": "assistant",
    "content": [
        {"type": "text", "text": "Deleting it."},
        {"type": "tool_use", "id": "call_1", "name": "deleteFile", "input": PATH},
    ],
}
C_USER = {"role": "user", "content": "Clean up the old report."}
C_CALL = {
    "role": "assistant",
    "content": "Deleting it.",
    "tool_calls": [
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": "deleteFile", "arguments": '{"path":"/srv/report.csv"}'},
        }
    ],
}
R_USER = {
    "type": "message",
    "role": "user",
    "content": [{"type": "input_text", "text": "Clean up the old report."}],
}
R_TEXT = {"type": "message", "role": "assistant", "content": "Deleting it."}
R_CALL = {
    "type": "function_call",
    "call_id": "call_1",
    "name": "deleteFile",
    "arguments": '{"path":"/srv/report.csv"}',
}


def a_result(content: str, *, is_error: bool = False, call_id: str = "call_1") -> Message:
    block: Message = {"type": "tool_result", "tool_use_id": call_id, "content": content}
    return block | ({"is_error": True} if is_error else {})


def c_result(content: str, call_id: str = "call_1") -> Message:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def r_result(output: str, call_id: str = "call_1") -> Message:
    return {"type": "function_call_output", "call_id": call_id, "output": output}


# -- denials ------------------------------------------------------------------------------------


def test_a_denial_with_a_reason_is_an_error_result_carrying_the_reason() -> None:
    messages = [user(), assistant(text("Deleting it."), denied())]

    assert to_anthropic(messages) == {
        "messages": [
            A_USER,
            A_CALL,
            {"role": "user", "content": [a_result("Not that file.", is_error=True)]},
        ]
    }
    assert to_chat(messages) == [C_USER, C_CALL, c_result("Not that file.")]
    assert to_responses(messages) == [R_USER, R_TEXT, R_CALL, r_result("Not that file.")]


def test_a_denial_without_a_reason_says_the_execution_was_denied() -> None:
    messages = [user(), assistant(text("Deleting it."), denied(reason=None))]

    assert to_anthropic(messages)["messages"][-1] == {
        "role": "user",
        "content": [a_result("Tool call execution denied.", is_error=True)],
    }
    assert to_chat(messages)[-1] == c_result(DENIED_TEXT)
    assert to_responses(messages)[-1] == r_result(DENIED_TEXT)


def test_a_blank_denial_reason_counts_as_no_reason() -> None:
    messages = [user(), assistant(text("Deleting it."), denied(reason="  "))]

    assert to_chat(messages)[-1] == c_result(DENIED_TEXT)


def test_a_denial_left_in_approval_responded_is_still_a_denial() -> None:
    """An imported part answered ``approved: false`` but never moved to output-denied."""
    part = tool("approval-requested") | {
        "state": "approval-responded",
        "approval": {"id": "ap-call_1", "approved": False, "reason": "No."},
    }
    messages = [user(), assistant(text("Deleting it."), part)]

    assert to_anthropic(messages)["messages"][-1]["content"] == [a_result("No.", is_error=True)]


# -- errors and outputs -------------------------------------------------------------------------


def test_an_error_result_carries_the_error_text() -> None:
    messages = [
        user(),
        assistant(text("Deleting it."), tool("output-error", errorText="disk is read-only")),
    ]

    assert to_anthropic(messages)["messages"][-1] == {
        "role": "user",
        "content": [a_result("disk is read-only", is_error=True)],
    }
    assert to_chat(messages)[-1] == c_result("disk is read-only")
    assert to_responses(messages)[-1] == r_result("disk is read-only")


def test_an_invalid_call_sends_the_raw_input_the_model_wrote() -> None:
    """``tool-input-error`` leaves the bad input in ``rawInput``; the model sees it again."""
    part = tool("output-error", errorText="bad JSON", rawInput='{"path": ')
    del part["input"]
    messages = [user(), assistant(part)]

    assert to_anthropic(messages)["messages"][1]["content"] == [
        {"type": "tool_use", "id": "call_1", "name": "deleteFile", "input": {"value": '{"path": '}}
    ]
    assert to_chat(messages)[1]["tool_calls"][0]["function"]["arguments"] == '"{\\"path\\": "'


def test_outputs_are_json_text_and_string_outputs_are_sent_as_they_are() -> None:
    messages = [
        user(),
        assistant(
            done("call_1", {"rows": [1, 2], "ok": True, "note": "ünïcode"}),
            done("call_2", "plain text"),
            done("call_3", None) | {"output": None},
        ),
    ]

    assert to_anthropic(messages)["messages"][-1]["content"] == [
        a_result('{"rows":[1,2],"ok":true,"note":"ünïcode"}', call_id="call_1"),
        a_result("plain text", call_id="call_2"),
        a_result("null", call_id="call_3"),
    ]
    assert [m["content"] for m in to_chat(messages)[2:]] == [
        '{"rows":[1,2],"ok":true,"note":"ünïcode"}',
        "plain text",
        "null",
    ]


def test_tool_inputs_that_are_not_objects_are_wrapped_for_anthropic_only() -> None:
    messages = [
        user(),
        assistant(
            done("call_1") | {"input": ["a", 1]},
            done("call_2") | {"input": "text"},
            done("call_3") | {"input": None},
        ),
    ]

    inputs = [block["input"] for block in to_anthropic(messages)["messages"][1]["content"]]
    assert inputs == [{"value": ["a", 1]}, {"value": "text"}, {"value": None}]
    arguments = [c["function"]["arguments"] for c in to_chat(messages)[1]["tool_calls"]]
    assert arguments == ['["a",1]', '"text"', "null"]
    calls = [item for item in to_responses(messages) if item["type"] == "function_call"]
    assert [call["arguments"] for call in calls] == ['["a",1]', '"text"', "null"]


# -- unanswered calls: interrupted before a later message, refused or omitted at the end --------


@pytest.mark.parametrize("state", UNANSWERED_STATES)
def test_a_call_left_unanswered_before_a_later_user_message_was_interrupted(state: str) -> None:
    messages = [user(), assistant(text("Deleting it."), tool(state)), user("Never mind.", "u2")]

    result = a_result(INTERRUPTED_TEXT, is_error=True)
    expected_input = {} if state == "input-streaming" else PATH
    assert to_anthropic(messages) == {
        "messages": [
            A_USER,
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Deleting it."},
                    {
                        "type": "tool_use",
                        "id": "call_1",
                        "name": "deleteFile",
                        "input": expected_input,
                    },
                ],
            },
            {"role": "user", "content": [result, {"type": "text", "text": "Never mind."}]},
        ]
    }
    chat = to_chat(messages)
    assert chat[-2:] == [c_result(INTERRUPTED_TEXT), {"role": "user", "content": "Never mind."}]
    responses = to_responses(messages)
    assert responses[-2]["type"] == "function_call_output"
    assert responses[-2] == r_result(INTERRUPTED_TEXT)


def test_a_preliminary_output_is_not_a_result_yet() -> None:
    """A tool still streaming preliminary outputs has not answered."""
    prelim = done() | {"preliminary": True}
    with pytest.raises(UnansweredToolCallError):
        to_anthropic([user(), assistant(prelim)])
    later = to_chat([user(), assistant(prelim), user("Stop.", "u2")])
    assert later[2] == c_result(INTERRUPTED_TEXT)


@pytest.mark.parametrize("state", UNANSWERED_STATES)
@pytest.mark.parametrize(
    "convert", [anthropic.convert, openai_chat.convert, openai_responses.convert]
)
def test_an_unanswered_call_in_the_final_message_is_refused_by_default(
    state: str, convert: Any
) -> None:
    messages = [user(), assistant(text("Deleting it."), tool(state))]

    with pytest.raises(UnansweredToolCallError) as raised:
        convert(messages)
    assert raised.value.tool_call_ids == ["call_1"]


def test_a_paused_turn_followed_only_by_a_system_message_is_still_paused() -> None:
    with pytest.raises(UnansweredToolCallError):
        to_chat([user(), assistant(tool("approval-requested")), system("Be careful.")])


@pytest.mark.parametrize("state", UNANSWERED_STATES)
def test_omit_leaves_the_unanswered_call_out_entirely(state: str) -> None:
    messages = [user(), assistant(text("Deleting it."), tool(state))]

    assert to_anthropic(messages, unanswered="omit") == {
        "messages": [
            A_USER,
            {"role": "assistant", "content": [{"type": "text", "text": "Deleting it."}]},
        ]
    }
    assert to_chat(messages, unanswered="omit") == [
        C_USER,
        {"role": "assistant", "content": "Deleting it."},
    ]
    assert to_responses(messages, unanswered="omit") == [R_USER, R_TEXT]


def test_omit_drops_a_final_message_made_only_of_unanswered_calls() -> None:
    messages = [user(), assistant(tool("approval-requested"))]

    assert to_anthropic(messages, unanswered="omit") == {"messages": [A_USER]}
    assert to_chat(messages, unanswered="omit") == [C_USER]
    assert to_responses(messages, unanswered="omit") == [R_USER]


def test_the_dispatcher_passes_unanswered_on() -> None:
    messages = [user(), assistant(tool("approval-requested"))]

    with pytest.raises(UnansweredToolCallError):
        to_model_messages(messages, "openai-responses")
    assert to_model_messages(messages, "anthropic", unanswered="omit") == {"messages": [A_USER]}


# -- batches and steps --------------------------------------------------------------------------


def test_a_mixed_batch_in_one_step_keeps_call_order_for_its_results() -> None:
    """Ran at once, denied, failed, awaiting approval: one step, four calls."""
    step = assistant(
        text("On it."),
        done("call_a", {"tempC": 21}, name="getWeather"),
        denied("call_b", reason="Not today."),
        tool("output-error", "call_c", "sendPayment", errorText="card declined"),
        tool("approval-requested", "call_d", "deleteFile"),
    )
    messages = [user(), step]

    with pytest.raises(UnansweredToolCallError) as raised:
        to_anthropic(messages)
    assert raised.value.tool_call_ids == ["call_d"]

    assert to_anthropic(messages, unanswered="omit")["messages"][1:] == [
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "On it."},
                {"type": "tool_use", "id": "call_a", "name": "getWeather", "input": PATH},
                {"type": "tool_use", "id": "call_b", "name": "deleteFile", "input": PATH},
                {"type": "tool_use", "id": "call_c", "name": "sendPayment", "input": PATH},
            ],
        },
        {
            "role": "user",
            "content": [
                a_result('{"tempC":21}', call_id="call_a"),
                a_result("Not today.", is_error=True, call_id="call_b"),
                a_result("card declined", is_error=True, call_id="call_c"),
            ],
        },
    ]
    chat = to_chat(messages, unanswered="omit")
    assert [c["id"] for c in chat[1]["tool_calls"]] == ["call_a", "call_b", "call_c"]
    assert chat[2:] == [
        c_result('{"tempC":21}', "call_a"),
        c_result("Not today.", "call_b"),
        c_result("card declined", "call_c"),
    ]
    responses = to_responses(messages, unanswered="omit")
    assert [(i["type"], i.get("call_id")) for i in responses[2:]] == [
        ("function_call", "call_a"),
        ("function_call", "call_b"),
        ("function_call", "call_c"),
        ("function_call_output", "call_a"),
        ("function_call_output", "call_b"),
        ("function_call_output", "call_c"),
    ]


def test_each_step_of_an_assistant_message_is_its_own_round() -> None:
    """step 1: a call and its result; step 2: a call and its result; step 3: the answer."""
    message = {
        "id": "a1",
        "role": "assistant",
        "parts": [
            STEP,
            text("Checking."),
            done("call_1", {"exists": True}, name="stat"),
            STEP,
            done("call_2", {"deleted": True}),
            STEP,
            text("Deleted. "),
        ],
    }
    messages = [user(), message]

    assert to_anthropic(messages) == {
        "messages": [
            A_USER,
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Checking."},
                    {"type": "tool_use", "id": "call_1", "name": "stat", "input": PATH},
                ],
            },
            {"role": "user", "content": [a_result('{"exists":true}')]},
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": "call_2", "name": "deleteFile", "input": PATH}
                ],
            },
            {"role": "user", "content": [a_result('{"deleted":true}', call_id="call_2")]},
            # the final assistant turn loses its trailing whitespace (the API refuses it)
            {"role": "assistant", "content": [{"type": "text", "text": "Deleted."}]},
        ]
    }
    assert to_chat(messages) == [
        C_USER,
        {
            "role": "assistant",
            "content": "Checking.",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "stat", "arguments": '{"path":"/srv/report.csv"}'},
                }
            ],
        },
        c_result('{"exists":true}'),
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_2",
                    "type": "function",
                    "function": {"name": "deleteFile", "arguments": '{"path":"/srv/report.csv"}'},
                }
            ],
        },
        c_result('{"deleted":true}', "call_2"),
        {"role": "assistant", "content": "Deleted. "},
    ]
    assert to_responses(messages) == [
        R_USER,
        {"type": "message", "role": "assistant", "content": "Checking."},
        R_CALL | {"name": "stat"},
        r_result('{"exists":true}'),
        R_CALL | {"call_id": "call_2"},
        r_result('{"deleted":true}', "call_2"),
        {"type": "message", "role": "assistant", "content": "Deleted. "},
    ]


def test_results_come_before_any_later_item_of_the_step_in_responses() -> None:
    messages = [user(), assistant(done("call_1"), text("Meanwhile..."), done("call_2"))]

    assert [(i["type"], i.get("call_id")) for i in to_responses(messages)[1:]] == [
        ("function_call", "call_1"),
        ("function_call_output", "call_1"),
        ("message", None),
        ("function_call", "call_2"),
        ("function_call_output", "call_2"),
    ]


def test_anthropic_merges_consecutive_messages_of_one_role() -> None:
    messages = [
        user("First.", "u1"),
        user("Second.", "u2"),
        assistant(text("One."), mid="a1"),
        assistant(text("Two."), mid="a2"),
        user("Third.", "u3"),
    ]

    assert to_anthropic(messages)["messages"] == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "First."}, {"type": "text", "text": "Second."}],
        },
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "One."}, {"type": "text", "text": "Two."}],
        },
        {"role": "user", "content": [{"type": "text", "text": "Third."}]},
    ]


def test_empty_messages_and_parts_no_model_takes_are_skipped() -> None:
    messages = [
        user(),
        {"id": "a1", "role": "assistant", "parts": []},
        assistant(
            {"type": "data-progress", "id": "d1", "data": {"pct": 50}},
            {"type": "source-url", "sourceId": "s1", "url": "https://example.com"},
            {"type": "source-document", "sourceId": "s2", "mediaType": "text/plain", "title": "t"},
            text(""),
            mid="a2",
        ),
        {"id": "u2", "role": "user", "parts": [{"type": "data-x", "data": 1}]},
        user("Hello?", "u3"),
    ]

    assert to_anthropic(messages)["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Clean up the old report."},
                {"type": "text", "text": "Hello?"},
            ],
        }
    ]
    assert to_chat(messages) == [C_USER, {"role": "user", "content": "Hello?"}]
    assert to_responses(messages) == [
        R_USER,
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Hello?"}]},
    ]


# -- provider-executed tools --------------------------------------------------------------------

WEB_SEARCH = {
    "type": "tool-web_search",
    "toolCallId": "srvtoolu_01",
    "state": "output-available",
    "providerExecuted": True,
    "input": {"query": "weather Paris"},
    "output": [
        {
            "type": "web_search_result",
            "url": "https://meteo.example/paris",
            "title": "Paris weather",
            "encryptedContent": "EncRypTed",
            "pageAge": "2 hours",
        }
    ],
}


def test_an_anthropic_web_search_stays_in_the_assistant_turn_as_server_blocks() -> None:
    messages = [user(), assistant(text("Searching."), WEB_SEARCH, text("Sunny."))]

    assert to_anthropic(messages)["messages"][1:] == [
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Searching."},
                {
                    "type": "server_tool_use",
                    "id": "srvtoolu_01",
                    "name": "web_search",
                    "input": {"query": "weather Paris"},
                },
                {
                    "type": "web_search_tool_result",
                    "tool_use_id": "srvtoolu_01",
                    "content": [
                        {
                            "type": "web_search_result",
                            "url": "https://meteo.example/paris",
                            "title": "Paris weather",
                            "encrypted_content": "EncRypTed",
                            "page_age": "2 hours",
                        }
                    ],
                },
                {"type": "text", "text": "Sunny."},
            ],
        }
    ]


def test_a_failed_anthropic_web_search_keeps_its_error_code() -> None:
    failed = WEB_SEARCH | {
        "state": "output-error",
        "errorText": '{"errorCode":"max_uses_exceeded"}',
    }
    del failed["output"]

    content = to_anthropic([user(), assistant(failed)])["messages"][1]["content"]
    assert content[1] == {
        "type": "web_search_tool_result",
        "tool_use_id": "srvtoolu_01",
        "content": {"type": "web_search_tool_result_error", "error_code": "max_uses_exceeded"},
    }


def test_other_provider_executed_tools_are_described_in_the_assistant_turn() -> None:
    """No server block fits (another provider's id, another tool): a text block, no tool_result."""
    openai_search = WEB_SEARCH | {
        "toolCallId": "ws_123",
        "output": {"status": "completed"},
        "callProviderMetadata": {"openai": {"itemId": "ws_123"}},
    }
    messages = [user(), assistant(openai_search, text("Sunny."))]
    note = '[provider tool web_search ran with input {"query":"weather Paris"}; result: {"status":"completed"}]'

    assert to_anthropic(messages)["messages"][1:] == [
        {
            "role": "assistant",
            "content": [{"type": "text", "text": note}, {"type": "text", "text": "Sunny."}],
        }
    ]
    assert to_chat(messages)[1:] == [
        {
            "role": "assistant",
            "content": [{"type": "text", "text": note}, {"type": "text", "text": "Sunny."}],
        }
    ]
    # Responses: the stored OpenAI item is referenced by its id.
    assert to_responses(messages)[1:] == [
        {"type": "item_reference", "id": "ws_123"},
        {"type": "message", "role": "assistant", "content": "Sunny."},
    ]
    # Without an OpenAI item id there is nothing to reference: described instead.
    foreign = to_responses([user(), assistant(WEB_SEARCH)])[1]
    assert foreign["role"] == "assistant"
    assert foreign["content"].startswith("[provider tool web_search ran with input")


def test_provider_executed_calls_without_an_outcome_are_left_out_and_never_refused() -> None:
    running = WEB_SEARCH | {"state": "input-available"}
    del running["output"]
    messages = [user(), assistant(text("Searching."), running)]

    assert to_anthropic(messages)["messages"][1] == {
        "role": "assistant",
        "content": [{"type": "text", "text": "Searching."}],
    }
    assert to_chat(messages)[1] == {"role": "assistant", "content": "Searching."}
    assert to_responses(messages)[1:] == [
        {"type": "message", "role": "assistant", "content": "Searching."}
    ]


def test_a_denied_provider_executed_call_is_described_as_not_run() -> None:
    refused = WEB_SEARCH | {"state": "output-denied", "approval": {"id": "ap", "approved": False}}
    del refused["output"]

    content = to_anthropic([user(), assistant(refused)])["messages"][1]["content"]
    assert content == [
        {"type": "text", "text": f"[provider tool web_search was not run: {DENIED_TEXT}]"}
    ]


# -- reasoning ----------------------------------------------------------------------------------


def reasoning(value: str, metadata: dict[str, Any] | None = None) -> Message:
    part: Message = {"type": "reasoning", "text": value, "state": "done"}
    return part | ({"providerMetadata": metadata} if metadata else {})


def test_anthropic_reasoning_is_sent_back_only_with_a_signature_or_redacted_data() -> None:
    messages = [
        user(),
        assistant(
            reasoning("Signed thought.", {"anthropic": {"signature": "sig-1"}}),
            reasoning("", {"anthropic": {"redactedData": "opaque"}}),
            reasoning("Unsigned thought."),
            reasoning("OpenAI thought.", {"openai": {"itemId": "rs_1"}}),
            text("Answer."),
        ),
    ]

    assert to_anthropic(messages)["messages"][1] == {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "Signed thought.", "signature": "sig-1"},
            {"type": "redacted_thinking", "data": "opaque"},
            {"type": "text", "text": "Answer."},
        ],
    }
    assert to_chat(messages)[1] == {"role": "assistant", "content": "Answer."}


def test_responses_reasoning_needs_an_openai_item_id_and_merges_its_summary_parts() -> None:
    messages = [
        user(),
        assistant(
            reasoning("First.", {"openai": {"itemId": "rs_1"}}),
            reasoning(
                "Second.", {"openai": {"itemId": "rs_1", "reasoningEncryptedContent": "enc"}}
            ),
            reasoning("Signed.", {"anthropic": {"signature": "sig"}}),
            reasoning("Plain."),
            text(
                "Answer.", providerMetadata={"openai": {"itemId": "msg_1", "phase": "final_answer"}}
            ),
        ),
    ]

    assert to_responses(messages)[1:] == [
        {
            "type": "reasoning",
            "id": "rs_1",
            "summary": [
                {"type": "summary_text", "text": "First."},
                {"type": "summary_text", "text": "Second."},
            ],
            "encrypted_content": "enc",
        },
        {"type": "message", "role": "assistant", "content": "Answer.", "phase": "final_answer"},
    ]


# -- files --------------------------------------------------------------------------------------


def file(media_type: str, url: str, filename: str | None = None) -> Message:
    part: Message = {"type": "file", "mediaType": media_type, "url": url}
    return part | ({"filename": filename} if filename else {})


FILES = [
    file("image/png", PNG),
    file("image/jpeg", "https://cdn.example/cat.jpg"),
    file("application/pdf", PDF, "report.pdf"),
    file("application/pdf", "https://docs.example/spec.pdf"),
    file("text/plain", "data:text/plain;charset=utf-8,hello%20world"),
    file("application/zip", "https://files.example/a.zip", "a.zip"),
]


def test_anthropic_files_become_image_and_document_blocks() -> None:
    messages = [user("See attached.", "u1", *FILES)]

    assert to_anthropic(messages)["messages"][0]["content"] == [
        {"type": "text", "text": "See attached."},
        {
            "type": "image",
            "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="},
        },
        {"type": "image", "source": {"type": "url", "url": "https://cdn.example/cat.jpg"}},
        {
            "type": "document",
            "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBERi0xLjQK"},
            "title": "report.pdf",
        },
        {"type": "document", "source": {"type": "url", "url": "https://docs.example/spec.pdf"}},
        {
            "type": "document",
            "source": {"type": "text", "media_type": "text/plain", "data": "hello world"},
        },
        {
            "type": "text",
            "text": "[file 'a.zip' (application/zip) omitted: this model format cannot carry it]",
        },
    ]


def test_openai_chat_files_become_image_url_file_and_audio_parts() -> None:
    wav = file("audio/wav", "data:audio/wav;base64,UklGRg==")
    messages = [user("See attached.", "u1", *FILES, wav)]

    assert to_chat(messages)[0]["content"] == [
        {"type": "text", "text": "See attached."},
        {"type": "image_url", "image_url": {"url": PNG}},
        {"type": "image_url", "image_url": {"url": "https://cdn.example/cat.jpg"}},
        {"type": "file", "file": {"filename": "report.pdf", "file_data": PDF}},
        # Chat Completions takes files only inline: a PDF by URL cannot go.
        {
            "type": "text",
            "text": "[file (application/pdf) omitted: this model format cannot carry it]",
        },
        {"type": "text", "text": "hello world"},
        {
            "type": "text",
            "text": "[file 'a.zip' (application/zip) omitted: this model format cannot carry it]",
        },
        {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}},
    ]


def test_openai_responses_files_become_input_image_and_input_file() -> None:
    messages = [user("See attached.", "u1", *FILES)]

    assert to_responses(messages)[0]["content"] == [
        {"type": "input_text", "text": "See attached."},
        {"type": "input_image", "image_url": PNG, "detail": "auto"},
        {"type": "input_image", "image_url": "https://cdn.example/cat.jpg", "detail": "auto"},
        {"type": "input_file", "filename": "report.pdf", "file_data": PDF},
        {"type": "input_file", "file_url": "https://docs.example/spec.pdf"},
        {"type": "input_text", "text": "hello world"},
        {
            "type": "input_text",
            "text": "[file 'a.zip' (application/zip) omitted: this model format cannot carry it]",
        },
    ]


def test_files_the_model_made_are_not_sent_back() -> None:
    messages = [user(), assistant(file("image/png", PNG), text("Here is the chart."))]

    assert to_anthropic(messages)["messages"][1]["content"] == [
        {"type": "text", "text": "Here is the chart."}
    ]
    assert to_chat(messages)[1] == {"role": "assistant", "content": "Here is the chart."}
    assert to_responses(messages)[1:] == [
        {"type": "message", "role": "assistant", "content": "Here is the chart."}
    ]


# -- system messages ----------------------------------------------------------------------------


def test_system_messages_go_to_anthropics_system_parameter_and_stay_in_place_for_openai() -> None:
    messages = [
        system("You are terse."),
        user(),
        system("Never delete without approval.", "s2"),
        assistant(text("Understood.")),
    ]

    assert to_anthropic(messages) == {
        "system": [
            {"type": "text", "text": "You are terse."},
            {"type": "text", "text": "Never delete without approval."},
        ],
        "messages": [
            A_USER,
            {"role": "assistant", "content": [{"type": "text", "text": "Understood."}]},
        ],
    }
    assert to_chat(messages) == [
        {"role": "system", "content": "You are terse."},
        C_USER,
        {"role": "system", "content": "Never delete without approval."},
        {"role": "assistant", "content": "Understood."},
    ]
    assert to_responses(messages) == [
        {"type": "message", "role": "system", "content": "You are terse."},
        R_USER,
        {"type": "message", "role": "system", "content": "Never delete without approval."},
        {"type": "message", "role": "assistant", "content": "Understood."},
    ]


def test_a_system_message_joins_its_text_parts_and_no_system_means_no_key() -> None:
    two_parts = {
        "id": "s1",
        "role": "system",
        "parts": [{"type": "text", "text": "Be "}, {"type": "text", "text": "brief."}],
    }
    assert to_anthropic([two_parts, user()])["system"] == [{"type": "text", "text": "Be brief."}]
    assert "system" not in to_anthropic([user()])


# -- dynamic tools ------------------------------------------------------------------------------


def test_dynamic_tools_are_named_by_their_tool_name() -> None:
    part = {
        "type": "dynamic-tool",
        "toolName": "mcp_search",
        "toolCallId": "call_9",
        "state": "output-available",
        "input": {"q": "x"},
        "output": "found",
    }
    messages = [user(), assistant(part)]

    assert to_anthropic(messages)["messages"][1:] == [
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "call_9", "name": "mcp_search", "input": {"q": "x"}}
            ],
        },
        {"role": "user", "content": [a_result("found", call_id="call_9")]},
    ]
    assert to_chat(messages)[1]["tool_calls"][0]["function"] == {
        "name": "mcp_search",
        "arguments": '{"q":"x"}',
    }
    assert to_responses(messages)[1:] == [
        {
            "type": "function_call",
            "call_id": "call_9",
            "name": "mcp_search",
            "arguments": '{"q":"x"}',
        },
        r_result("found", "call_9"),
    ]


# -- purity and bad input -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "convert", [anthropic.convert, openai_chat.convert, openai_responses.convert]
)
def test_the_input_is_not_changed_and_shares_nothing_with_the_result(convert: Any) -> None:
    messages = [
        system("Hi."),
        user("See.", "u1", file("image/png", PNG)),
        assistant(
            reasoning("t", {"anthropic": {"signature": "s"}}),
            done() | {"output": {"a": [1]}},
            WEB_SEARCH,
        ),
    ]
    before = copy.deepcopy(messages)

    result = convert(messages)
    assert messages == before
    _scribble(result)
    assert messages == before


def _scribble(value: Any) -> None:
    if isinstance(value, dict):
        for item in value.values():
            _scribble(item)
        value["scribbled"] = True
    elif isinstance(value, list):
        for item in value:
            _scribble(item)
        value.append("scribbled")


@pytest.mark.parametrize(
    "bad",
    [
        {"id": "x", "role": "tool", "parts": []},
        {"id": "x", "role": "user", "parts": "text"},
        {
            "id": "x",
            "role": "assistant",
            "parts": [{"type": "tool-a", "state": "input-available", "input": {}}],
        },
        {"id": "x", "role": "user", "parts": [{"text": "no type"}]},
    ],
)
def test_a_malformed_message_is_a_conversion_error(bad: Message) -> None:
    with pytest.raises(MessageConversionError):
        anthropic.convert([bad])


def test_an_unknown_unanswered_option_is_refused() -> None:
    unknown: Any = "drop"
    with pytest.raises(InvalidInputError, match="unanswered"):
        openai_chat.convert([user()], unanswered=unknown)


# -- the strict validation itself catches bad payloads -----------------------------------------


def test_the_validation_accepts_the_official_shapes() -> None:
    validate_anthropic({"system": "Be brief.", "messages": [A_USER]})
    validate_openai_chat([C_USER, C_CALL, c_result("ok")])
    validate_openai_responses([R_USER, R_CALL, r_result("ok")])


@pytest.mark.parametrize(
    "payload",
    [
        # a misspelled key inside a block (ignored by pydantic's default TypedDict handling)
        {
            "messages": [
                A_USER,
                A_CALL,
                {"role": "user", "content": [a_result("x") | {"is_eror": True}]},
            ]
        },
        # a tool_result without its tool_use_id
        {
            "messages": [
                A_USER,
                A_CALL,
                {"role": "user", "content": [{"type": "tool_result", "content": "x"}]},
            ]
        },
        # a role the Messages API does not have
        {"messages": [A_USER, {"role": "tool", "content": "x"}]},
        # a non-object tool input
        {
            "messages": [
                {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": "c", "name": "n", "input": "x"}],
                }
            ]
        },
        # an extra key on a message
        {"messages": [A_USER | {"name": "alice"}]},
        # system text blocks with a typo
        {"system": [{"type": "text", "txt": "x"}], "messages": [A_USER]},
    ],
)
def test_the_anthropic_validation_rejects_bad_payloads(payload: dict[str, Any]) -> None:
    with pytest.raises((ValidationError, ValueError)):
        validate_anthropic(payload)


@pytest.mark.parametrize(
    "payload",
    [
        [C_USER, C_CALL, {"role": "tool", "tool_call_idd": "call_1", "content": "x"}],
        [C_USER, C_CALL, {"role": "tool", "content": "x"}],
        [{"role": "human", "content": "x"}],
        [
            C_CALL
            | {
                "tool_calls": [
                    {"id": "c", "type": "function", "function": {"name": "n", "arguments": {}}}
                ]
            }
        ],
    ],
)
def test_the_openai_chat_validation_rejects_bad_payloads(payload: list[dict[str, Any]]) -> None:
    with pytest.raises(ValidationError):
        validate_openai_chat(payload)


@pytest.mark.parametrize(
    "payload",
    [
        [R_USER, R_CALL, {"type": "function_call_output", "call_idd": "call_1", "output": "x"}],
        [R_USER, R_CALL | {"arguments": {"path": "/"}}],
        [{"type": "message", "role": "tool", "content": "x"}],
        [R_USER | {"content": [{"type": "input_image", "image_url": PNG}]}],  # detail is required
    ],
)
def test_the_openai_responses_validation_rejects_bad_payloads(
    payload: list[dict[str, Any]],
) -> None:
    with pytest.raises(ValidationError):
        validate_openai_responses(payload)
