"""Text and reasoning parts: start/delta/end, provider metadata, ids, steps."""

PM_A = {"openai": {"itemId": "msg_1"}}
PM_B = {"openai": {"itemId": "msg_1", "phase": "final"}}
PM_C = {"anthropic": {"signature": "sig=="}}

CASES = [
    {
        "name": "text_start_delta_end",
        "chunks": [
            {"type": "start"},
            {"type": "start-step"},
            {"type": "text-start", "id": "t1"},
            {"type": "text-delta", "id": "t1", "delta": "Hello"},
            {"type": "text-delta", "id": "t1", "delta": ", world"},
            {"type": "text-end", "id": "t1"},
            {"type": "finish-step"},
            {"type": "finish", "finishReason": "stop"},
        ],
    },
    {
        "name": "text_left_streaming_without_end",
        "chunks": [
            {"type": "text-start", "id": "t1"},
            {"type": "text-delta", "id": "t1", "delta": "half"},
        ],
    },
    {
        "name": "text_empty_start_end",
        "chunks": [{"type": "text-start", "id": "t1"}, {"type": "text-end", "id": "t1"}],
    },
    {
        "name": "text_empty_delta_and_unicode",
        "chunks": [
            {"type": "text-start", "id": "t1"},
            {"type": "text-delta", "id": "t1", "delta": ""},
            {"type": "text-delta", "id": "t1", "delta": 'héllo \u2603 \U0001f600 "q" \\ \n'},
            {"type": "text-end", "id": "t1"},
        ],
    },
    {
        "name": "text_provider_metadata_on_start_kept",
        "chunks": [
            {"type": "text-start", "id": "t1", "providerMetadata": PM_A},
            {"type": "text-delta", "id": "t1", "delta": "a"},
            {"type": "text-end", "id": "t1"},
        ],
    },
    {
        "name": "text_provider_metadata_replaced_by_delta_then_end",
        "chunks": [
            {"type": "text-start", "id": "t1", "providerMetadata": PM_A},
            {"type": "text-delta", "id": "t1", "delta": "a", "providerMetadata": PM_B},
            {"type": "text-delta", "id": "t1", "delta": "b"},
            {"type": "text-end", "id": "t1", "providerMetadata": PM_C},
        ],
    },
    {
        "name": "text_provider_metadata_only_on_end",
        "chunks": [
            {"type": "text-start", "id": "t1"},
            {"type": "text-end", "id": "t1", "providerMetadata": PM_C},
        ],
    },
    {
        "name": "text_two_ids_interleaved",
        "chunks": [
            {"type": "text-start", "id": "a"},
            {"type": "text-start", "id": "b"},
            {"type": "text-delta", "id": "b", "delta": "B1"},
            {"type": "text-delta", "id": "a", "delta": "A1"},
            {"type": "text-end", "id": "b"},
            {"type": "text-delta", "id": "a", "delta": "A2"},
            {"type": "text-end", "id": "a"},
        ],
    },
    {
        "name": "text_id_reused_after_end_makes_new_part",
        "chunks": [
            {"type": "text-start", "id": "t"},
            {"type": "text-delta", "id": "t", "delta": "one"},
            {"type": "text-end", "id": "t"},
            {"type": "text-start", "id": "t"},
            {"type": "text-delta", "id": "t", "delta": "two"},
            {"type": "text-end", "id": "t"},
        ],
    },
    {
        "name": "text_id_reused_while_open_leaves_old_part_streaming",
        "chunks": [
            {"type": "text-start", "id": "t"},
            {"type": "text-delta", "id": "t", "delta": "old"},
            {"type": "text-start", "id": "t"},
            {"type": "text-delta", "id": "t", "delta": "new"},
            {"type": "text-end", "id": "t"},
        ],
    },
    {
        "name": "finish_step_leaves_open_text_streaming",
        "chunks": [
            {"type": "start-step"},
            {"type": "text-start", "id": "t"},
            {"type": "text-delta", "id": "t", "delta": "cut"},
            {"type": "reasoning-start", "id": "r"},
            {"type": "finish-step"},
            {"type": "start-step"},
            {"type": "text-start", "id": "t"},
            {"type": "text-delta", "id": "t", "delta": "fresh"},
            {"type": "text-end", "id": "t"},
            {"type": "finish-step"},
        ],
    },
    {
        "name": "reasoning_start_delta_end_keeps_id",
        "chunks": [
            {"type": "start-step"},
            {"type": "reasoning-start", "id": "rs_1"},
            {"type": "reasoning-delta", "id": "rs_1", "delta": "Let me "},
            {"type": "reasoning-delta", "id": "rs_1", "delta": "think."},
            {"type": "reasoning-end", "id": "rs_1"},
            {"type": "text-start", "id": "t"},
            {"type": "text-delta", "id": "t", "delta": "Answer"},
            {"type": "text-end", "id": "t"},
            {"type": "finish-step"},
        ],
    },
    {
        "name": "reasoning_provider_metadata_on_start_delta_end",
        "chunks": [
            {"type": "reasoning-start", "id": "r", "providerMetadata": PM_A},
            {"type": "reasoning-delta", "id": "r", "delta": "x", "providerMetadata": PM_B},
            {"type": "reasoning-end", "id": "r", "providerMetadata": PM_C},
            {"type": "reasoning-start", "id": "r2", "providerMetadata": PM_A},
            {"type": "reasoning-delta", "id": "r2", "delta": "y"},
            {"type": "reasoning-end", "id": "r2"},
        ],
    },
    {
        "name": "reasoning_left_streaming_and_empty",
        "chunks": [
            {"type": "reasoning-start", "id": "r1"},
            {"type": "reasoning-end", "id": "r1"},
            {"type": "reasoning-start", "id": "r2"},
            {"type": "reasoning-delta", "id": "r2", "delta": "unfinished"},
        ],
    },
    {
        "name": "text_and_reasoning_share_an_id",
        "chunks": [
            {"type": "reasoning-start", "id": "x"},
            {"type": "text-start", "id": "x"},
            {"type": "reasoning-delta", "id": "x", "delta": "R"},
            {"type": "text-delta", "id": "x", "delta": "T"},
            {"type": "text-end", "id": "x"},
            {"type": "reasoning-end", "id": "x"},
        ],
    },
    {
        "name": "three_steps_with_text",
        "chunks": [
            {"type": "start", "messageId": "msg-steps"},
            {"type": "start-step"},
            {"type": "text-start", "id": "a"},
            {"type": "text-delta", "id": "a", "delta": "step one"},
            {"type": "text-end", "id": "a"},
            {"type": "finish-step"},
            {"type": "start-step"},
            {"type": "finish-step"},
            {"type": "start-step"},
            {"type": "text-start", "id": "a"},
            {"type": "text-delta", "id": "a", "delta": "step three"},
            {"type": "text-end", "id": "a"},
            {"type": "finish-step"},
            {"type": "finish"},
        ],
    },
    {
        "name": "trailing_step_start_is_kept",
        "chunks": [
            {"type": "text-start", "id": "a"},
            {"type": "text-end", "id": "a"},
            {"type": "start-step"},
        ],
    },
    {
        "name": "empty_stream",
        "chunks": [],
    },
    {
        "name": "only_step_markers",
        "chunks": [{"type": "start-step"}, {"type": "finish-step"}, {"type": "start-step"}],
    },
    {
        "name": "abort_changes_nothing",
        "chunks": [
            {"type": "start-step"},
            {"type": "text-start", "id": "a"},
            {"type": "text-delta", "id": "a", "delta": "partial"},
            {"type": "abort", "reason": "user pressed stop"},
            {"type": "abort"},
        ],
    },
]
