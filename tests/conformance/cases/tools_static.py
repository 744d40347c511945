"""Static tool parts (``tool-<name>``): input streaming, outputs, errors, metadata (§b.4, §c)."""

CPM = {"openai": {"itemId": "fc_1"}}
RPM = {"openai": {"cost": 3}}


def _start(call, name="getWeather", **extra):
    return {"type": "tool-input-start", "toolCallId": call, "toolName": name, **extra}


def _delta(call, text):
    return {"type": "tool-input-delta", "toolCallId": call, "inputTextDelta": text}


def _available(call, value, name="getWeather", **extra):
    return {
        "type": "tool-input-available",
        "toolCallId": call,
        "toolName": name,
        "input": value,
        **extra,
    }


def _output(call, value, **extra):
    return {"type": "tool-output-available", "toolCallId": call, "output": value, **extra}


CASES = [
    {
        "name": "static_full_lifecycle",
        "chunks": [
            {"type": "start", "messageId": "m1"},
            {"type": "start-step"},
            _start("c1"),
            _delta("c1", '{"ci'),
            _delta("c1", 'ty": "Par'),
            _delta("c1", 'is"}'),
            _available("c1", {"city": "Paris"}),
            _output("c1", {"temp": 21, "unit": "C"}),
            {"type": "finish-step"},
            {"type": "start-step"},
            {"type": "text-start", "id": "t"},
            {"type": "text-delta", "id": "t", "delta": "It is 21C."},
            {"type": "text-end", "id": "t"},
            {"type": "finish-step"},
            {"type": "finish", "finishReason": "stop"},
        ],
    },
    {
        "name": "static_input_streaming_partial_json_object",
        "chunks": [_start("c1"), _delta("c1", '{"city":"Par')],
    },
    {
        "name": "static_input_streaming_key_without_value",
        "chunks": [_start("c1"), _delta("c1", '{"a":1,'), _delta("c1", '"b":')],
    },
    {
        "name": "static_input_streaming_nested_and_literals",
        "chunks": [_start("c1"), _delta("c1", '{"a": [1, tr'), _delta("c1", "")],
    },
    {
        "name": "static_input_streaming_no_delta_yet",
        "chunks": [_start("c1")],
    },
    {
        "name": "static_input_streaming_whitespace_only",
        "chunks": [_start("c1"), _delta("c1", "  \n ")],
    },
    {
        "name": "static_input_streaming_explicit_json_encoding",
        "chunks": [_start("c1", inputEncoding="json"), _delta("c1", '[1, 2, {"x": nu')],
    },
    {
        "name": "static_input_streaming_text_encoding",
        "chunks": [
            _start("c1", name="shell", inputEncoding="text"),
            _delta("c1", "ls -la "),
            _delta("c1", '{"not json'),
        ],
    },
    {
        "name": "static_text_encoding_then_available",
        "chunks": [
            _start("c1", name="shell", inputEncoding="text"),
            _delta("c1", "echo hi"),
            _available("c1", "echo hi", name="shell"),
            _output("c1", "hi\n"),
        ],
    },
    {
        "name": "static_input_available_without_start",
        "chunks": [{"type": "start-step"}, _available("c1", {"q": "x"})],
    },
    {
        "name": "static_input_available_input_null_and_scalar",
        "chunks": [_available("c1", None), _available("c2", 42, name="count")],
    },
    {
        "name": "static_tool_name_with_hyphens",
        "chunks": [
            _start("c1", name="get-weather-now"),
            _delta("c1", "{}"),
            _available("c1", {}, name="get-weather-now"),
            _output("c1", None),
        ],
    },
    {
        "name": "static_output_null_string_and_array",
        "chunks": [
            _available("c1", {}),
            _output("c1", None),
            _available("c2", {}),
            _output("c2", "plain text"),
            _available("c3", {}),
            _output("c3", [1, {"a": [True, False, None]}]),
        ],
    },
    {
        "name": "static_preliminary_outputs_then_final",
        "chunks": [
            _available("c1", {"city": "Oslo"}),
            _output("c1", {"status": "loading"}, preliminary=True),
            _output("c1", {"status": "50%"}, preliminary=True),
            _output("c1", {"status": "done", "temp": 3}),
        ],
    },
    {
        "name": "static_preliminary_output_left_preliminary",
        "chunks": [
            _available("c1", {"city": "Oslo"}),
            _output("c1", {"status": "loading"}, preliminary=True),
        ],
    },
    {
        "name": "static_preliminary_then_final_with_preliminary_false",
        "chunks": [
            _available("c1", {}),
            _output("c1", 1, preliminary=True),
            _output("c1", 2, preliminary=False),
        ],
    },
    {
        "name": "static_preliminary_then_output_error",
        "chunks": [
            _available("c1", {}),
            _output("c1", {"partial": True}, preliminary=True),
            {"type": "tool-output-error", "toolCallId": "c1", "errorText": "crashed"},
        ],
    },
    {
        "name": "static_output_error_after_input_available",
        "chunks": [
            _start("c1"),
            _delta("c1", '{"city": "Nowhere"}'),
            _available("c1", {"city": "Nowhere"}),
            {"type": "tool-output-error", "toolCallId": "c1", "errorText": "city not found"},
        ],
    },
    {
        "name": "static_output_error_while_input_streaming_keeps_raw_input",
        "chunks": [
            _start("c1"),
            _delta("c1", '{"city": "Ber'),
            {"type": "tool-output-error", "toolCallId": "c1", "errorText": "gave up"},
        ],
    },
    {
        "name": "static_input_error_without_start_moves_input_to_raw_input",
        "chunks": [
            {"type": "start-step"},
            {
                "type": "tool-input-error",
                "toolCallId": "c1",
                "toolName": "getWeather",
                "input": {"citty": "Paris"},
                "errorText": "Invalid input: city is required",
            },
        ],
    },
    {
        "name": "static_input_error_after_streaming",
        "chunks": [
            _start("c1", title="Weather"),
            _delta("c1", '{"citty": "Pa'),
            {
                "type": "tool-input-error",
                "toolCallId": "c1",
                "toolName": "getWeather",
                "input": '{"citty": "Pa',
                "errorText": "bad JSON",
                "title": "ignored title",
            },
        ],
    },
    {
        "name": "static_input_error_after_input_available",
        "chunks": [
            _available("c1", {"city": 5}),
            {
                "type": "tool-input-error",
                "toolCallId": "c1",
                "toolName": "getWeather",
                "input": {"city": 5},
                "errorText": "city must be a string",
            },
        ],
    },
    {
        "name": "static_input_error_unknown_tool_with_metadata",
        "chunks": [
            {
                "type": "tool-input-error",
                "toolCallId": "c1",
                "toolName": "noSuchTool",
                "input": None,
                "errorText": "Model tried to call unavailable tool 'noSuchTool'.",
                "providerExecuted": False,
                "providerMetadata": RPM,
                "toolMetadata": {"v": 1},
            },
        ],
    },
    {
        "name": "static_provider_metadata_call_and_result",
        "chunks": [
            _start("c1", providerMetadata=CPM),
            _delta("c1", "{}"),
            _available("c1", {}, providerMetadata={"openai": {"itemId": "fc_2"}}),
            _output("c1", {"ok": True}, providerMetadata=RPM),
        ],
    },
    {
        "name": "static_provider_metadata_on_available_only",
        "chunks": [_available("c1", {}, providerMetadata=CPM), _output("c1", 1)],
    },
    {
        "name": "static_provider_metadata_on_output_error",
        "chunks": [
            _available("c1", {}, providerMetadata=CPM),
            {
                "type": "tool-output-error",
                "toolCallId": "c1",
                "errorText": "x",
                "providerMetadata": RPM,
            },
        ],
    },
    {
        "name": "static_provider_metadata_preliminary_then_final",
        "chunks": [
            _available("c1", {}),
            _output("c1", 1, preliminary=True, providerMetadata={"p": {"n": 1}}),
            _output("c1", 2),
        ],
    },
    {
        "name": "static_provider_executed",
        "chunks": [
            _start("ws1", name="web_search", providerExecuted=True),
            _delta("ws1", '{"query":"ai sdk"}'),
            _available("ws1", {"query": "ai sdk"}, name="web_search", providerExecuted=True),
            _output("ws1", [{"url": "https://ai-sdk.dev"}], providerExecuted=True),
        ],
    },
    {
        "name": "static_provider_executed_only_on_start_is_kept",
        "chunks": [
            _start("ws1", name="web_search", providerExecuted=True),
            _available("ws1", {"query": "x"}, name="web_search"),
            _output("ws1", "r"),
        ],
    },
    {
        "name": "static_provider_executed_false_overrides_true",
        "chunks": [
            _start("c1", providerExecuted=True),
            _available("c1", {}, providerExecuted=False),
        ],
    },
    {
        "name": "static_provider_executed_error",
        "chunks": [
            _available("ws1", {"q": 1}, name="code_exec", providerExecuted=True),
            {
                "type": "tool-output-error",
                "toolCallId": "ws1",
                "errorText": "sandbox failed",
                "providerExecuted": True,
            },
        ],
    },
    {
        "name": "static_title_and_tool_metadata_from_start_kept",
        "chunks": [
            _start("c1", title="Get the weather", toolMetadata={"ui": "card", "v": [1, 2]}),
            _delta("c1", '{"a":'),
            _available("c1", {"a": 1}),
            _output("c1", "ok"),
        ],
    },
    {
        "name": "static_title_and_tool_metadata_replaced",
        "chunks": [
            _start("c1", title="first", toolMetadata={"a": 1}),
            _available("c1", {}, title="second", toolMetadata={"b": 2}),
            _output("c1", "ok", toolMetadata={"c": 3}),
        ],
    },
    {
        "name": "static_tool_metadata_on_output_error",
        "chunks": [
            _available("c1", {}, toolMetadata={"a": 1}),
            {
                "type": "tool-output-error",
                "toolCallId": "c1",
                "errorText": "e",
                "toolMetadata": {"z": None},
            },
        ],
    },
    {
        "name": "static_two_parallel_calls_interleaved",
        "chunks": [
            {"type": "start-step"},
            _start("a"),
            _start("b", name="getTime"),
            _delta("a", '{"city":'),
            _delta("b", '{"tz":"UTC"}'),
            _delta("a", '"Rome"}'),
            _available("b", {"tz": "UTC"}, name="getTime"),
            _available("a", {"city": "Rome"}),
            _output("b", "12:00"),
            _output("a", {"temp": 30}),
            {"type": "finish-step"},
        ],
    },
    {
        "name": "static_output_in_later_step_finds_earlier_part",
        "chunks": [
            {"type": "start-step"},
            _available("c1", {"x": 1}),
            {"type": "finish-step"},
            {"type": "start-step"},
            {"type": "text-start", "id": "t"},
            {"type": "text-end", "id": "t"},
            _output("c1", {"late": True}),
            {"type": "finish-step"},
        ],
    },
]
