"""Odd but replay-free streams the SDK folds without error.

docs/behaviour.md §3.1 asks for JSON equality on *every* replay-free stream the SDK folds
without error, so these sharp edges are part of the contract too.
"""

CASES = [
    {
        "name": "dynamic_flag_differs_between_start_and_available",
        "note": "the available chunk writes a second part of the other kind (§b.4)",
        "chunks": [
            {"type": "tool-input-start", "toolCallId": "c1", "toolName": "t"},
            {"type": "tool-input-delta", "toolCallId": "c1", "inputTextDelta": '{"a":1}'},
            {
                "type": "tool-input-available",
                "toolCallId": "c1",
                "toolName": "t",
                "input": {"a": 1},
                "dynamic": True,
            },
        ],
    },
    {
        "name": "tool_name_differs_between_start_and_available",
        "note": "the static part's type is rewritten to the new name",
        "chunks": [
            {"type": "tool-input-start", "toolCallId": "c1", "toolName": "first"},
            {"type": "tool-input-available", "toolCallId": "c1", "toolName": "second", "input": {}},
        ],
    },
    {
        "name": "input_delta_after_new_step_appends_second_part",
        "note": "deltas look for the part in the current step only",
        "chunks": [
            {"type": "start-step"},
            {"type": "tool-input-start", "toolCallId": "c1", "toolName": "t"},
            {"type": "tool-input-delta", "toolCallId": "c1", "inputTextDelta": '{"a":'},
            {"type": "finish-step"},
            {"type": "start-step"},
            {"type": "tool-input-delta", "toolCallId": "c1", "inputTextDelta": "1}"},
        ],
    },
    {
        "name": "input_available_after_new_step_appends_second_part",
        "chunks": [
            {"type": "start-step"},
            {"type": "tool-input-start", "toolCallId": "c1", "toolName": "t"},
            {"type": "finish-step"},
            {"type": "start-step"},
            {"type": "tool-input-available", "toolCallId": "c1", "toolName": "t", "input": {}},
            {"type": "tool-output-available", "toolCallId": "c1", "output": "x"},
        ],
    },
    {
        "name": "resumed_input_streaming_part_after_new_step_appends_second_part",
        "message": {
            "id": "m",
            "role": "assistant",
            "parts": [
                {"type": "step-start"},
                {
                    "type": "tool-t",
                    "toolCallId": "c1",
                    "state": "input-streaming",
                    "rawInput": "[1",
                },
            ],
        },
        "chunks": [
            {"type": "start-step"},
            {"type": "tool-input-delta", "toolCallId": "c1", "inputTextDelta": ",2]"},
        ],
    },
    {
        "name": "metadata_array_merged_into_object_by_index",
        "chunks": [
            {"type": "message-metadata", "messageMetadata": {"a": 1}},
            {"type": "message-metadata", "messageMetadata": [5, 6]},
        ],
    },
    {
        "name": "metadata_merge_skips_prototype_keys",
        "chunks": [
            {"type": "message-metadata", "messageMetadata": {"constructor": 1, "k": {"a": 1}}},
            {
                "type": "message-metadata",
                "messageMetadata": {
                    "constructor": 2,
                    "prototype": 3,
                    "k": {"constructor": 4, "b": 2},
                },
            },
        ],
    },
    {
        "name": "partial_json_forbidden_proto_key_gives_no_input",
        "chunks": [
            {"type": "tool-input-start", "toolCallId": "c1", "toolName": "t"},
            {
                "type": "tool-input-delta",
                "toolCallId": "c1",
                "inputTextDelta": '{"a": {"__proto__": {"x": 1}}}',
            },
        ],
    },
    {
        "name": "partial_json_js_number_semantics",
        "chunks": [
            {"type": "tool-input-start", "toolCallId": "c1", "toolName": "t"},
            {
                "type": "tool-input-delta",
                "toolCallId": "c1",
                "inputTextDelta": "[12345678901234567890, 1e400, -1e400, 1.0, 5e-324, 1.5e",
            },
        ],
    },
]
