"""Partial JSON of streaming tool input (``parsePartialJson``/``fixJson``, §b.5).

Each case streams one static tool call's input text and stops while it is
still ``input-streaming``, so the part's ``input`` is the SDK's repair of the
text received so far.
"""

TEXTS = {
    "open_key": '{"ci',
    "dangling_colon": '{"a":',
    "trailing_comma_object": '{"a":1,',
    "trailing_comma_array": "[1,",
    "open_string_value": '{"city":"Par',
    "literal_prefix_in_array": '{"a": [1, tr',
    "dangling_backslash": '{"a": 1, "b": "x\\',
    "null_prefix": '{"c": nu',
    "deep_nesting": '{"a":{"b":[{"c":',
    "top_level_literal_prefix": "tr",
    "false_prefix": "[f",
    "number_exponent_cut": "[1.5e",
    "number_exponent_sign_cut": "[1e+",
    "number_decimal_point_cut": "[0.",
    "lone_minus": "[-",
    "negative_number": '{"n": -12',
    "unicode_escape_cut": '{"s": "caf\\u00',
    "unicode_escape_complete": '{"s": "caf\\u00e9',
    "surrogate_pair_cut": '["\\ud83d',
    "escaped_quote_inside": '{"q": "say \\"hi',
    "escaped_newline": '{"q": "a\\nb',
    "non_ascii_raw": '{"name": "Zoë ☃',
    "complete_with_whitespace": ' {\n  "a" : [ 1 , 2 ] \n} ',
    "top_level_string": '"abc',
    "top_level_number": "42",
    "top_level_null": "null",
    "empty_object_open": "{",
    "empty_array_open": "[",
    "array_of_objects": '[{"a":1},{"b":',
    "key_with_escape": '{"a\\"b": 1, "c\\',
    "garbage_after_close": "}}garbage",
    "text_then_object": 'Sure! {"a": 1}',
    "nan_literal": "[NaN",
    "double_comma": "[1,,2",
    "spaces_before_colon": '{"a"  ',
    "nested_empty": '{"a": {}, "b": [], "c": [{}',
    "exponent_complete_in_object": '{"x": 2E-3, "y": 1e2',
    "string_with_slash_escape": '{"u": "http:\\/\\/x',
    "bool_completed_in_object": '{"ok": fals',
    "leading_zero": "[01",
}

CASES = [
    {
        "name": f"partial_json_{name}",
        "chunks": [
            {"type": "tool-input-start", "toolCallId": "c1", "toolName": "t"},
            *(
                {"type": "tool-input-delta", "toolCallId": "c1", "inputTextDelta": piece}
                for piece in (text[: len(text) // 2], text[len(text) // 2 :])
            ),
        ],
    }
    for name, text in TEXTS.items()
] + [
    {
        "name": "partial_json_dynamic_open_string",
        "chunks": [
            {"type": "tool-input-start", "toolCallId": "d", "toolName": "t", "dynamic": True},
            {"type": "tool-input-delta", "toolCallId": "d", "inputTextDelta": '{"path": "/ho'},
        ],
    },
    {
        "name": "partial_json_each_prefix_snapshot_ends_complete",
        "chunks": [
            {"type": "tool-input-start", "toolCallId": "c1", "toolName": "t"},
            *(
                {"type": "tool-input-delta", "toolCallId": "c1", "inputTextDelta": ch}
                for ch in '{"a": [1, 2.5, "x\\ny"], "b": {"c": null, "d": true}}'
            ),
        ],
    },
]
