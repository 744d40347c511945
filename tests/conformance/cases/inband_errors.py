"""In-band ``error`` chunks: ``readUIMessageStream`` reports them and carries on (§b.3).

The fold must treat them like the SDK: no change to the message, later chunks
still applied. (Whether the stream is then closed as ``errored`` is the
store's business, not the fold's.)
"""

INBAND_ERRORS = [
    {"name": "error_chunk_alone", "chunks": [{"type": "error", "errorText": "An error occurred."}]},
    {
        "name": "error_chunk_between_content",
        "chunks": [
            {"type": "start", "messageId": "m"},
            {"type": "start-step"},
            {"type": "text-start", "id": "t"},
            {"type": "text-delta", "id": "t", "delta": "a"},
            {"type": "error", "errorText": "rate limited"},
            {"type": "text-delta", "id": "t", "delta": "b"},
            {"type": "text-end", "id": "t"},
            {"type": "finish-step"},
            {"type": "start-step"},
        ],
    },
    {
        "name": "two_error_chunks_and_tool_call",
        "chunks": [
            {"type": "error", "errorText": "e1"},
            {"type": "tool-input-available", "toolCallId": "c", "toolName": "t", "input": {}},
            {"type": "error", "errorText": "e2"},
            {"type": "tool-output-error", "toolCallId": "c", "errorText": "tool failed"},
        ],
    },
]
