"""``chatledger.adapters.cli.render``: the readable views the command line prints."""

from __future__ import annotations

from chatledger.adapters.cli.chunk_files import ChunkRecord
from chatledger.adapters.cli.render import (
    STILL_STREAMING,
    render_ingest,
    render_message,
    render_part,
    short_json,
)
from chatledger.adapters.store import IngestReport
from chatledger.domain.errors import InvalidChunkError


def test_a_denied_tool_part_shows_its_state_decision_and_reason() -> None:
    """An audit reader sees who-said-what of an approval without reading JSON."""
    part = {
        "type": "tool-delete_file",
        "toolCallId": "call_1",
        "state": "output-denied",
        "input": {"path": "/tmp/x"},
        "approval": {"id": "ap_1", "approved": False, "reason": "not now"},
    }
    assert render_part(part) == [
        "tool delete_file [call_1]: output-denied",
        '  input: {"path": "/tmp/x"}',
        "  approval: denied (id ap_1), reason: not now",
    ]


def test_dynamic_tools_are_named_by_their_tool_name_and_show_output() -> None:
    """``dynamic-tool`` parts carry the name in ``toolName``; outputs are shown."""
    part = {
        "type": "dynamic-tool",
        "toolName": "search",
        "toolCallId": "c",
        "state": "output-available",
        "input": {},
        "output": [1, 2],
    }
    assert render_part(part)[0] == "tool search [c]: output-available"
    assert "  output: [1, 2]" in render_part(part)


def test_a_pending_approval_reads_as_requested() -> None:
    """An approval not yet answered is shown as requested."""
    part = {
        "type": "tool-x",
        "toolCallId": "c",
        "state": "approval-requested",
        "input": 1,
        "approval": {"id": "a"},
    }
    assert render_part(part)[-1] == "  approval: requested (id a)"


def test_a_message_shows_role_id_text_and_later_steps() -> None:
    """The first step needs no separator; later steps are marked; text lines are indented."""
    message = {
        "id": "m1",
        "role": "assistant",
        "parts": [
            {"type": "step-start"},
            {"type": "text", "text": "one\n\ntwo", "state": "done"},
            {"type": "step-start"},
            {"type": "reasoning", "text": "hmm", "state": "streaming"},
        ],
    }
    assert render_message(message, STILL_STREAMING).split("\n") == [
        "[assistant] m1",
        "  one",
        "",
        "  two",
        "  -- step 2 --",
        "  (reasoning) hmm [still streaming]",
    ]
    # Unless told its answer is being written, unfinished text is only that.
    assert render_message(message).endswith("hmm [unfinished]")


def test_long_json_is_cut_with_a_count_of_what_was_left_out() -> None:
    """Large tool outputs do not flood the terminal."""
    shown = short_json("x" * 1000, limit=10)
    assert shown.startswith('"xxxxxxxxx')
    assert shown.endswith("(+992 chars)")


def test_ingest_summary_names_the_file_line_of_each_refusal() -> None:
    """Refusals are reported at their line in the file, with the JSON error for bad lines."""
    records = [
        ChunkRecord(1, {"type": "start"}),
        ChunkRecord(3, "{oops", "not valid JSON: Expecting property name (column 2)"),
        ChunkRecord(4, {"type": "nope"}),
    ]
    report = IngestReport(
        "m1",
        applied=1,
        refused=[
            InvalidChunkError("chunk must be a JSON object, got string", position=1),
            InvalidChunkError("unknown chunk type 'nope'", chunk_type="nope", position=2),
        ],
    )
    assert render_ingest("c1", "m1", "jsonl", records, report).split("\n") == [
        "ingested 3 chunks (jsonl) into 'c1', message 'm1': 1 applied, 0 replayed, 2 refused",
        "  line 3: not valid JSON: Expecting property name (column 2)",
        "  line 4: 'nope' chunk at position 2 refused: unknown chunk type 'nope'",
    ]
