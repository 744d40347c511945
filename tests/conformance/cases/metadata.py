"""Message id and metadata: ``start``, ``finish``, ``message-metadata``, deep merge (§b.3)."""

CASES = [
    {
        "name": "start_with_message_id",
        "chunks": [{"type": "start", "messageId": "msg-123"}],
    },
    {
        "name": "start_with_message_id_and_metadata",
        "chunks": [
            {"type": "start", "messageId": "msg-1", "messageMetadata": {"createdAt": 1700000000}},
            {"type": "text-start", "id": "t"},
            {"type": "text-end", "id": "t"},
            {"type": "start", "messageId": "msg-1"},
        ],
    },
    {
        "name": "start_without_message_id_keeps_empty_id",
        "chunks": [{"type": "start"}, {"type": "text-start", "id": "t"}],
    },
    {
        "name": "start_repeated_with_metadata_only",
        "chunks": [
            {"type": "start", "messageId": "m"},
            {"type": "text-start", "id": "t"},
            {"type": "start", "messageMetadata": {"again": True}},
        ],
    },
    {
        "name": "metadata_deep_merge_from_all_three_chunks",
        "chunks": [
            {
                "type": "start",
                "messageMetadata": {"model": "m1", "usage": {"input": 10}, "tags": ["a"]},
            },
            {
                "type": "message-metadata",
                "messageMetadata": {"usage": {"output": 5}, "tags": ["b", "c"]},
            },
            {
                "type": "finish",
                "finishReason": "stop",
                "messageMetadata": {
                    "usage": {"input": 11, "detail": {"cached": 2}},
                    "finishedAt": "2025-01-01T00:00:00Z",
                },
            },
        ],
    },
    {
        "name": "metadata_null_chunk_changes_nothing",
        "chunks": [
            {"type": "message-metadata", "messageMetadata": {"a": 1}},
            {"type": "message-metadata", "messageMetadata": None},
            {"type": "finish", "messageMetadata": None},
            {"type": "start", "messageMetadata": None},
        ],
    },
    {
        "name": "metadata_only_null_leaves_metadata_absent",
        "chunks": [{"type": "message-metadata", "messageMetadata": None}],
    },
    {
        "name": "metadata_nested_null_and_scalar_replace",
        "chunks": [
            {"type": "message-metadata", "messageMetadata": {"a": {"b": 1, "c": 2}, "d": {"e": 1}}},
            {"type": "message-metadata", "messageMetadata": {"a": None, "d": 5}},
            {"type": "message-metadata", "messageMetadata": {"a": {"x": 1}, "d": {"y": [1, 2]}}},
        ],
    },
    {
        "name": "metadata_object_replaces_array_and_empty_object_merges",
        "chunks": [
            {"type": "message-metadata", "messageMetadata": {"list": [1, 2], "obj": {"k": 1}}},
            {"type": "message-metadata", "messageMetadata": {"list": {"0": "x"}, "obj": {}}},
            {"type": "message-metadata", "messageMetadata": {}},
        ],
    },
    {
        "name": "metadata_first_value_non_object_taken_as_is",
        "chunks": [{"type": "message-metadata", "messageMetadata": "just a string"}],
    },
    {
        "name": "metadata_scalar_first_value_then_nothing",
        "chunks": [
            {"type": "start", "messageMetadata": 0},
            {"type": "finish", "messageMetadata": None},
        ],
    },
    {
        "name": "metadata_empty_object_then_values",
        "chunks": [
            {"type": "start", "messageMetadata": {}},
            {"type": "finish", "messageMetadata": {"a": {"b": {"c": {"d": 1}}}}},
            {"type": "message-metadata", "messageMetadata": {"a": {"b": {"c": {"e": 2}}}}},
        ],
    },
    {
        "name": "finish_reason_is_not_stored",
        "chunks": [
            {"type": "text-start", "id": "t"},
            {"type": "text-end", "id": "t"},
            {"type": "finish", "finishReason": "length"},
        ],
    },
]
