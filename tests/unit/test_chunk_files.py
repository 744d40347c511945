"""``chatledger.adapters.cli.chunk_files``: reading recorded streams from JSON Lines and SSE text."""

from __future__ import annotations

import json

import pytest

from chatledger.adapters.cli.chunk_files import (
    ChunkRecord,
    detect_format,
    parse_json_value,
    read_chunks,
    read_jsonl,
    read_sse,
)

START = {"type": "start"}
DELTA = {"type": "text-delta", "id": "t1", "delta": "Hi"}


# -- JSON Lines -----------------------------------------------------------------------


def test_jsonl_gives_one_chunk_per_line_with_its_line_number() -> None:
    """Each non-blank line is a chunk; blank lines are skipped but still counted."""
    text = f"{json.dumps(START)}\n\n{json.dumps(DELTA)}\n"
    assert read_jsonl(text) == [ChunkRecord(1, START), ChunkRecord(3, DELTA)]


def test_jsonl_accepts_crlf_line_endings() -> None:
    """Windows line endings do not leave a stray carriage return in the chunk."""
    text = f"{json.dumps(START)}\r\n{json.dumps(DELTA)}\r\n"
    assert [r.chunk for r in read_jsonl(text)] == [START, DELTA]


def test_jsonl_keeps_a_bad_line_as_raw_text_with_the_reason() -> None:
    """A line that is not JSON is kept, with its number and why, not dropped or raised."""
    records = read_jsonl('{"type":"start"}\n{"type": oops}\n')
    assert records[0] == ChunkRecord(1, START)
    assert records[1].line == 2
    assert records[1].chunk == '{"type": oops}'
    assert records[1].error is not None and records[1].error.startswith("not valid JSON")


def test_jsonl_does_not_split_inside_strings_holding_unicode_line_separators() -> None:
    """JSON allows raw U+2028 in strings; only newlines end a record."""
    chunk = {"type": "text-delta", "id": "t", "delta": "a\u2028b\x85c"}
    text = json.dumps(chunk, ensure_ascii=False) + "\n"
    assert read_jsonl(text) == [ChunkRecord(1, chunk)]


def test_jsonl_skips_a_utf8_byte_order_mark() -> None:
    """A BOM left by an editor does not make the first line invalid."""
    assert read_jsonl("\ufeff" + json.dumps(START)) == [ChunkRecord(1, START)]


def test_non_object_json_values_are_passed_on_for_the_store_to_refuse() -> None:
    """Valid JSON that is not a chunk object is the store's to judge, not the reader's."""
    assert read_jsonl("42\n[1]\n") == [ChunkRecord(1, 42), ChunkRecord(2, [1])]


@pytest.mark.parametrize("text", ["NaN", '{"a": Infinity}', '{"a": -Infinity}'])
def test_nan_and_infinity_are_not_json(text: str) -> None:
    """Python's json extensions are refused like any other invalid JSON."""
    value, error = parse_json_value(text)
    assert value == text
    assert error is not None and "not valid JSON" in error


# -- SSE -----------------------------------------------------------------------------


def test_sse_reads_data_events_and_skips_done() -> None:
    """``data: {...}`` events become chunks; the final ``data: [DONE]`` is not a chunk."""
    text = f"data: {json.dumps(START)}\n\ndata: {json.dumps(DELTA)}\n\ndata: [DONE]\n\n"
    assert read_sse(text) == [ChunkRecord(1, START), ChunkRecord(3, DELTA)]


def test_sse_ignores_comments_and_other_fields() -> None:
    """Keep-alive comments, ``event:``, ``id:`` and ``retry:`` lines carry no chunk."""
    text = (
        ": stream-open\n\n"
        "event: message\nid: 7\nretry: 100\n"
        f"data: {json.dumps(START)}\n\n"
        ": keep-alive\n\n"
    )
    assert read_sse(text) == [ChunkRecord(6, START)]


def test_sse_joins_multi_line_data_with_newlines() -> None:
    """Several ``data`` lines form one event, as the SSE standard says."""
    text = 'data: {"type":\ndata: "text-delta", "id": "t1",\ndata:"delta": "Hi"}\n\n'
    assert read_sse(text) == [ChunkRecord(1, DELTA)]


@pytest.mark.parametrize("newline", ["\r\n", "\r", "\n"])
def test_sse_accepts_every_standard_line_ending(newline: str) -> None:
    """CRLF, CR and LF all end lines."""
    text = newline.join([f"data: {json.dumps(START)}", "", f"data: {json.dumps(DELTA)}", "", ""])
    assert [r.chunk for r in read_sse(text)] == [START, DELTA]


def test_sse_strips_only_one_space_after_the_colon() -> None:
    """``data:x`` and ``data: x`` are the same; further spaces belong to the data."""
    assert read_sse('data:{"type":"start"}\n\n') == [ChunkRecord(1, START)]
    assert read_sse('data:   {"type":"start"}\n\n') == [ChunkRecord(1, START)]


def test_sse_reads_a_last_event_cut_before_its_blank_line() -> None:
    """A capture that stops right after the last data line still yields that chunk."""
    assert read_sse(f"data: {json.dumps(START)}") == [ChunkRecord(1, START)]


def test_sse_keeps_a_bad_event_as_raw_text_with_its_line() -> None:
    """An event whose data is not JSON is reported at the line it starts on."""
    records = read_sse(f"data: {json.dumps(START)}\n\n: note\ndata: {{nope\n\n")
    assert records[1].line == 4
    assert records[1].chunk == "{nope"
    assert records[1].error is not None


# -- detection -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"type":"start"}\n', "jsonl"),
        ('\n\n{"type":"start"}\n', "jsonl"),
        ("{bad\n", "jsonl"),
        ('data: {"type":"start"}\n\n', "sse"),
        (": stream-open\n\ndata: [DONE]\n\n", "sse"),
        ('event: message\ndata: {"type":"start"}\n\n', "sse"),
        ("\ufeffdata: [DONE]\n\n", "sse"),
        ("", "jsonl"),
    ],
)
def test_format_is_detected_from_the_first_non_blank_line(text: str, expected: str) -> None:
    """SSE captures start with a field or a comment; anything else is JSON Lines."""
    assert detect_format(text) == expected


def test_read_chunks_reports_the_format_it_used() -> None:
    """The caller learns which format was detected, with the chunks."""
    assert read_chunks(f"data: {json.dumps(START)}\n\n") == ("sse", [ChunkRecord(1, START)])
    assert read_chunks(json.dumps(START)) == ("jsonl", [ChunkRecord(1, START)])
