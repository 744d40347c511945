"""Dynamic tool parts (``dynamic-tool`` + ``toolName``) and static/dynamic interplay (§b.4)."""


def _start(call, name="mcp_search", **extra):
    return {
        "type": "tool-input-start",
        "toolCallId": call,
        "toolName": name,
        "dynamic": True,
        **extra,
    }


def _delta(call, text):
    return {"type": "tool-input-delta", "toolCallId": call, "inputTextDelta": text}


def _available(call, value, name="mcp_search", **extra):
    return {
        "type": "tool-input-available",
        "toolCallId": call,
        "toolName": name,
        "input": value,
        "dynamic": True,
        **extra,
    }


CASES = [
    {
        "name": "dynamic_full_lifecycle",
        "chunks": [
            {"type": "start-step"},
            _start("d1"),
            _delta("d1", '{"q": "ev'),
            _delta("d1", 'ent sourcing"}'),
            _available("d1", {"q": "event sourcing"}),
            {"type": "tool-output-available", "toolCallId": "d1", "output": {"hits": 3}},
            {"type": "finish-step"},
        ],
    },
    {
        "name": "dynamic_input_streaming_partial",
        "chunks": [_start("d1"), _delta("d1", '{"q": ["a", "b')],
    },
    {
        "name": "dynamic_input_streaming_text_encoding",
        "chunks": [_start("d1", inputEncoding="text"), _delta("d1", "free "), _delta("d1", "text")],
    },
    {
        "name": "dynamic_input_available_without_start",
        "chunks": [_available("d1", {"q": 1}, title="Search", toolMetadata={"server": "docs"})],
    },
    {
        "name": "dynamic_output_chunk_dynamic_flag_is_irrelevant",
        "chunks": [
            _available("d1", {}),
            {"type": "tool-output-available", "toolCallId": "d1", "output": 1, "dynamic": False},
            _available("s1", {}, name="static_tool") | {"dynamic": False},
            {"type": "tool-output-available", "toolCallId": "s1", "output": 2, "dynamic": True},
        ],
    },
    {
        "name": "dynamic_input_error_keeps_input",
        "chunks": [
            {
                "type": "tool-input-error",
                "toolCallId": "d1",
                "toolName": "mcp_search",
                "input": {"bad": True},
                "errorText": "schema mismatch",
                "dynamic": True,
            },
        ],
    },
    {
        "name": "dynamic_input_error_after_streaming_keeps_raw_text",
        "chunks": [
            _start("d1", title="Search docs"),
            _delta("d1", '{"q":'),
            {
                "type": "tool-input-error",
                "toolCallId": "d1",
                "toolName": "mcp_search",
                "input": '{"q":',
                "errorText": "truncated",
                "dynamic": True,
                "providerMetadata": {"mcp": {"latencyMs": 5}},
            },
        ],
    },
    {
        "name": "input_error_follows_kind_of_existing_part",
        "chunks": [
            _start("d1"),
            {
                "type": "tool-input-error",
                "toolCallId": "d1",
                "toolName": "mcp_search",
                "input": {"x": 1},
                "errorText": "no dynamic flag on chunk",
            },
            {"type": "tool-input-start", "toolCallId": "s1", "toolName": "getWeather"},
            {
                "type": "tool-input-error",
                "toolCallId": "s1",
                "toolName": "getWeather",
                "input": {"x": 2},
                "errorText": "dynamic flag ignored",
                "dynamic": True,
            },
        ],
    },
    {
        "name": "dynamic_preliminary_then_final_with_metadata",
        "chunks": [
            _start("d1", providerMetadata={"mcp": {"a": 1}}, toolMetadata={"k": "v"}),
            _available("d1", {}),
            {
                "type": "tool-output-available",
                "toolCallId": "d1",
                "output": "…",
                "preliminary": True,
            },
            {
                "type": "tool-output-available",
                "toolCallId": "d1",
                "output": "done",
                "providerMetadata": {"mcp": {"b": 2}},
                "toolMetadata": {"k": "w"},
            },
        ],
    },
    {
        "name": "dynamic_output_error",
        "chunks": [
            _available("d1", {"q": "x"}, providerMetadata={"mcp": {"a": 1}}),
            {
                "type": "tool-output-error",
                "toolCallId": "d1",
                "errorText": "server down",
                "providerMetadata": {"mcp": {"b": 2}},
            },
        ],
    },
    {
        "name": "dynamic_provider_executed",
        "chunks": [
            _start("d1", providerExecuted=True),
            _available("d1", {"q": 1}),
            {
                "type": "tool-output-available",
                "toolCallId": "d1",
                "output": [],
                "providerExecuted": True,
            },
        ],
    },
    {
        "name": "dynamic_and_static_calls_in_one_step",
        "chunks": [
            {"type": "start-step"},
            _start("d1"),
            {"type": "tool-input-start", "toolCallId": "s1", "toolName": "getWeather"},
            _delta("s1", '{"city":"Lima"}'),
            _delta("d1", '{"q":"Lima"}'),
            {
                "type": "tool-input-available",
                "toolCallId": "s1",
                "toolName": "getWeather",
                "input": {"city": "Lima"},
            },
            _available("d1", {"q": "Lima"}),
            {"type": "tool-output-error", "toolCallId": "d1", "errorText": "nope"},
            {"type": "tool-output-available", "toolCallId": "s1", "output": {"t": 19}},
            {"type": "finish-step"},
        ],
    },
    {
        "name": "dynamic_approval_requested_and_denied",
        "chunks": [
            _available("d1", {"path": "/etc"}),
            {"type": "tool-approval-request", "approvalId": "ap-d1", "toolCallId": "d1"},
            {"type": "tool-output-denied", "toolCallId": "d1"},
        ],
    },
]
