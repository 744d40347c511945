"""Continuing a given assistant message: resumed tool input, earlier-step outputs (§b.1, §f)."""

STEP = {"type": "step-start"}


def _delta(call, text):
    return {"type": "tool-input-delta", "toolCallId": call, "inputTextDelta": text}


def _msg(*parts, mid="msg-c", **extra):
    return {"id": mid, "role": "assistant", "parts": list(parts), **extra}


STREAMING_JSON = {
    "type": "tool-getWeather",
    "toolCallId": "c1",
    "state": "input-streaming",
    "input": {"city": "Par"},
    "rawInput": '{"city": "Par',
}
STREAMING_TEXT = {
    "type": "dynamic-tool",
    "toolName": "shell",
    "toolCallId": "d1",
    "state": "input-streaming",
    "input": "ls ",
    "rawInput": "ls ",
    "inputEncoding": "text",
    "title": "Shell",
    "toolMetadata": {"k": 1},
}
EARLIER = [
    STEP,
    {"type": "text", "text": "Let me check.", "state": "done"},
    {
        "type": "tool-getWeather",
        "toolCallId": "e1",
        "state": "input-available",
        "input": {"city": "Oslo"},
        "callProviderMetadata": {"openai": {"itemId": "fc_e1"}},
    },
    {
        "type": "dynamic-tool",
        "toolName": "mcp",
        "toolCallId": "e2",
        "state": "input-available",
        "input": {},
    },
    STEP,
    {"type": "reasoning", "id": "r1", "text": "hmm", "state": "done"},
]

CASES = [
    {
        "name": "resumed_input_streaming_part_receives_deltas",
        "message": _msg(STEP, STREAMING_JSON),
        "chunks": [_delta("c1", 'is"}')],
    },
    {
        "name": "resumed_input_streaming_part_then_available_and_output",
        "message": _msg(STEP, {"type": "text", "text": "x", "state": "done"}, STREAMING_JSON),
        "chunks": [
            {"type": "start", "messageId": "msg-c"},
            _delta("c1", 'is", "unit": "C"}'),
            {
                "type": "tool-input-available",
                "toolCallId": "c1",
                "toolName": "getWeather",
                "input": {"city": "Paris", "unit": "C"},
            },
            {"type": "tool-output-available", "toolCallId": "c1", "output": 20},
        ],
    },
    {
        "name": "resumed_input_streaming_part_without_raw_input",
        "message": _msg(
            {"type": "tool-getWeather", "toolCallId": "c1", "state": "input-streaming"}
        ),
        "chunks": [_delta("c1", '{"a":1')],
    },
    {
        "name": "resumed_text_encoded_dynamic_part",
        "message": _msg(STEP, STREAMING_TEXT),
        "chunks": [_delta("d1", "-la"), _delta("d1", " /tmp")],
    },
    {
        "name": "resumed_input_streaming_part_then_input_error",
        "message": _msg(STEP, STREAMING_JSON),
        "chunks": [
            {
                "type": "tool-input-error",
                "toolCallId": "c1",
                "toolName": "getWeather",
                "input": '{"city": "Par',
                "errorText": "stream cut",
            },
        ],
    },
    {
        "name": "outputs_for_earlier_step_parts",
        "message": _msg(*EARLIER),
        "chunks": [
            {"type": "start"},
            {
                "type": "tool-output-available",
                "toolCallId": "e1",
                "output": {"t": 1},
                "providerMetadata": {"openai": {"r": 1}},
            },
            {"type": "tool-output-error", "toolCallId": "e2", "errorText": "mcp down"},
            {"type": "start-step"},
            {"type": "text-start", "id": "t"},
            {"type": "text-delta", "id": "t", "delta": "Done"},
            {"type": "text-end", "id": "t"},
            {"type": "finish-step"},
            {"type": "finish"},
        ],
    },
    {
        "name": "continuation_appends_new_step_with_new_tool_call",
        "message": _msg(*EARLIER),
        "chunks": [
            {"type": "start-step"},
            {"type": "tool-input-start", "toolCallId": "n1", "toolName": "getWeather"},
            _delta("n1", '{"city":"Rome"'),
            {"type": "finish-step"},
        ],
    },
    {
        "name": "continuation_start_with_same_message_id_and_metadata_merges",
        "message": _msg(
            STEP,
            {"type": "text", "text": "a", "state": "done"},
            metadata={"model": "gpt", "usage": {"in": 10, "out": 5}, "tags": [1]},
        ),
        "chunks": [
            {
                "type": "start",
                "messageId": "msg-c",
                "messageMetadata": {"usage": {"out": 9}, "tags": [2]},
            },
            {"type": "finish", "messageMetadata": {"usage": {"total": 19}, "model": None}},
        ],
    },
    {
        "name": "continuation_data_part_reconciled_with_starting_part",
        "message": _msg(
            STEP,
            {"type": "data-progress", "id": "p", "data": {"pct": 10}},
            {"type": "data-progress", "data": {"pct": 0}},
        ),
        "chunks": [
            {"type": "data-progress", "id": "p", "data": {"pct": 90}},
            {"type": "data-progress", "data": {"pct": 100}},
        ],
    },
    {
        "name": "continuation_streaming_text_part_is_not_reopened",
        "message": _msg(
            STEP,
            {"type": "text", "text": "cut", "state": "streaming"},
            {"type": "reasoning", "id": "r", "text": "hm", "state": "streaming"},
        ),
        "chunks": [
            {"type": "text-start", "id": "t"},
            {"type": "text-delta", "id": "t", "delta": "new"},
            {"type": "reasoning-start", "id": "r"},
            {"type": "reasoning-end", "id": "r"},
        ],
    },
    {
        "name": "continuation_of_message_without_steps_or_state",
        "message": _msg(
            {"type": "text", "text": "imported"},
            {"type": "tool-lookup", "toolCallId": "x1", "state": "input-available", "input": {}},
        ),
        "chunks": [{"type": "tool-output-available", "toolCallId": "x1", "output": None}],
    },
    {
        "name": "continuation_with_empty_chunk_list",
        "message": _msg(*EARLIER, metadata={"a": 1}),
        "chunks": [],
    },
    {
        "name": "continuation_of_empty_assistant_message",
        "message": _msg(),
        "chunks": [
            {"type": "start", "messageMetadata": {"m": 1}},
            {"type": "start-step"},
            {"type": "text-start", "id": "t"},
            {"type": "text-end", "id": "t"},
        ],
    },
]
