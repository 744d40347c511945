"""Streams the SDK fails on (``AI_UIMessageStreamError``): chatledger refuses the same chunk.

The failing position is not written down here: the test finds it by asking the
oracle about every prefix, so these cases cannot drift from the SDK.
"""

STEP = {"type": "step-start"}


def _text(tid, delta="x"):
    return [{"type": "text-start", "id": tid}, {"type": "text-delta", "id": tid, "delta": delta}]


REFUSED = [
    {
        "name": "text_delta_for_unknown_id",
        "chunks": [*_text("a"), {"type": "text-delta", "id": "b", "delta": "x"}],
    },
    {
        "name": "text_end_for_unknown_id",
        "chunks": [{"type": "start"}, {"type": "text-end", "id": "nope"}],
    },
    {
        "name": "text_delta_after_text_end",
        "chunks": [
            *_text("a"),
            {"type": "text-end", "id": "a"},
            {"type": "text-delta", "id": "a", "delta": "late"},
        ],
    },
    {
        "name": "text_end_twice",
        "chunks": [*_text("a"), {"type": "text-end", "id": "a"}, {"type": "text-end", "id": "a"}],
    },
    {
        "name": "text_delta_after_finish_step",
        "chunks": [
            {"type": "start-step"},
            *_text("a"),
            {"type": "finish-step"},
            {"type": "start-step"},
            {"type": "text-delta", "id": "a", "delta": "late"},
        ],
    },
    {
        "name": "text_delta_for_reasoning_id",
        "chunks": [
            {"type": "reasoning-start", "id": "r"},
            {"type": "text-delta", "id": "r", "delta": "x"},
        ],
    },
    {
        "name": "reasoning_delta_for_unknown_id",
        "chunks": [{"type": "reasoning-delta", "id": "r", "delta": "x"}],
    },
    {
        "name": "reasoning_end_for_unknown_id",
        "chunks": [*_text("a"), {"type": "reasoning-end", "id": "a"}],
    },
    {
        "name": "reasoning_end_after_finish_step",
        "chunks": [
            {"type": "reasoning-start", "id": "r"},
            {"type": "finish-step"},
            {"type": "reasoning-end", "id": "r"},
        ],
    },
    {
        "name": "tool_input_delta_for_unknown_call",
        "chunks": [{"type": "tool-input-delta", "toolCallId": "c9", "inputTextDelta": "{}"}],
    },
    {
        "name": "tool_input_delta_for_call_that_only_had_input_available_elsewhere",
        "chunks": [
            {"type": "tool-input-start", "toolCallId": "c1", "toolName": "t"},
            {"type": "tool-input-delta", "toolCallId": "c2", "inputTextDelta": "{}"},
        ],
    },
    {
        "name": "tool_approval_request_for_unknown_call",
        "chunks": [
            {"type": "start-step"},
            {"type": "tool-approval-request", "approvalId": "a", "toolCallId": "c9"},
        ],
    },
    {
        "name": "tool_output_available_for_unknown_call",
        "chunks": [
            {"type": "tool-input-available", "toolCallId": "c1", "toolName": "t", "input": {}},
            {"type": "tool-output-available", "toolCallId": "c2", "output": 1},
        ],
    },
    {
        "name": "tool_output_error_for_unknown_call",
        "chunks": [{"type": "tool-output-error", "toolCallId": "c9", "errorText": "e"}],
    },
    {
        "name": "tool_output_denied_for_unknown_call",
        "chunks": [{"type": "tool-output-denied", "toolCallId": "c9"}],
    },
    {
        "name": "bad_chunk_after_much_content_and_followed_by_more",
        "chunks": [
            {"type": "start", "messageId": "m"},
            {"type": "start-step"},
            *_text("a"),
            {"type": "text-end", "id": "a"},
            {"type": "tool-input-available", "toolCallId": "c1", "toolName": "t", "input": {}},
            {"type": "data-x", "data": 1},
            {"type": "tool-output-available", "toolCallId": "zz", "output": 1},
            {"type": "tool-output-available", "toolCallId": "c1", "output": 1},
            {"type": "finish-step"},
            {"type": "finish"},
        ],
    },
    {
        "name": "continuation_text_delta_for_streaming_text_of_starting_message",
        "message": {
            "id": "m",
            "role": "assistant",
            "parts": [STEP, {"type": "text", "text": "cut", "state": "streaming"}],
        },
        "chunks": [{"type": "text-delta", "id": "t", "delta": "more"}],
    },
    {
        "name": "continuation_reasoning_delta_for_streaming_reasoning_of_starting_message",
        "message": {
            "id": "m",
            "role": "assistant",
            "parts": [STEP, {"type": "reasoning", "id": "r", "text": "x", "state": "streaming"}],
        },
        "chunks": [{"type": "reasoning-delta", "id": "r", "delta": "more"}],
    },
    {
        "name": "continuation_tool_input_delta_for_streaming_part_in_earlier_step",
        "message": {
            "id": "m",
            "role": "assistant",
            "parts": [
                STEP,
                {
                    "type": "tool-t",
                    "toolCallId": "c1",
                    "state": "input-streaming",
                    "rawInput": "[1",
                },
                STEP,
                {"type": "text", "text": "x", "state": "done"},
            ],
        },
        "chunks": [{"type": "tool-input-delta", "toolCallId": "c1", "inputTextDelta": "]"}],
    },
    {
        "name": "continuation_output_for_call_not_in_starting_message",
        "message": {
            "id": "m",
            "role": "assistant",
            "parts": [
                STEP,
                {"type": "tool-t", "toolCallId": "c1", "state": "input-available", "input": {}},
            ],
        },
        "chunks": [
            {"type": "start"},
            {"type": "tool-output-available", "toolCallId": "c2", "output": 1},
        ],
    },
]
