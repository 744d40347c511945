"""Unknown extra keys on chunks: allowed on the wire; only data parts keep them in the message."""

X = {"x-vendor": {"trace": "abc", "n": [1, 2]}, "experimental_field": True}

CASES = [
    {
        "name": "extra_keys_on_every_chunk_type",
        "chunks": [
            {"type": "start", "messageId": "mx", **X},
            {"type": "start-step", **X},
            {"type": "reasoning-start", "id": "r", **X},
            {"type": "reasoning-delta", "id": "r", "delta": "r", **X},
            {"type": "reasoning-end", "id": "r", **X},
            {"type": "text-start", "id": "t", **X},
            {"type": "text-delta", "id": "t", "delta": "t", **X},
            {"type": "text-end", "id": "t", **X},
            {"type": "tool-input-start", "toolCallId": "c1", "toolName": "w", **X},
            {"type": "tool-input-delta", "toolCallId": "c1", "inputTextDelta": "{}", **X},
            {"type": "tool-input-available", "toolCallId": "c1", "toolName": "w", "input": {}, **X},
            {"type": "tool-approval-request", "approvalId": "a1", "toolCallId": "c1", **X},
            {"type": "tool-output-available", "toolCallId": "c1", "output": 1, **X},
            {"type": "tool-input-available", "toolCallId": "c2", "toolName": "w", "input": {}},
            {"type": "tool-output-error", "toolCallId": "c2", "errorText": "e", **X},
            {"type": "tool-input-available", "toolCallId": "c3", "toolName": "w", "input": {}},
            {"type": "tool-output-denied", "toolCallId": "c3", **X},
            {
                "type": "tool-input-error",
                "toolCallId": "c4",
                "toolName": "w",
                "input": 1,
                "errorText": "e",
                **X,
            },
            {"type": "source-url", "sourceId": "s", "url": "u", **X},
            {"type": "source-document", "sourceId": "d", "mediaType": "m", "title": "t", **X},
            {"type": "file", "url": "u", "mediaType": "image/png", **X},
            {"type": "data-thing", "id": "k", "data": 1, **X},
            {"type": "data-thing", "id": "k", "data": 2, "y-other": 1},
            {"type": "message-metadata", "messageMetadata": {"a": 1}, **X},
            {"type": "abort", **X},
            {"type": "finish-step", **X},
            {"type": "finish", "finishReason": "stop", **X},
        ],
    },
    {
        "name": "extra_key_named_like_a_part_field_is_ignored",
        "chunks": [
            {"type": "text-start", "id": "t", "state": "done", "text": "injected"},
            {"type": "text-end", "id": "t", "text": "x"},
            {
                "type": "tool-input-available",
                "toolCallId": "c1",
                "toolName": "w",
                "input": {},
                "state": "output-available",
                "output": "forged",
                "approval": {"id": "x"},
            },
            {"type": "source-url", "sourceId": "s", "url": "u", "filename": "f"},
        ],
    },
]
