"""Reading recorded UI message streams: JSON Lines files and SSE captures, as pure functions.

A record that is not valid JSON is not dropped: it comes back with its raw
text and the reason, so the caller can hand it to the store as refused input
(the audit then shows what was received) and report its line number.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "ChunkRecord",
    "FileFormat",
    "detect_format",
    "parse_json_value",
    "read_chunks",
    "read_jsonl",
    "read_sse",
]

FileFormat = Literal["jsonl", "sse"]

_SSE_FIELD = re.compile(r"(data|event|id|retry)(:|$)")
_SSE_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_DONE = "[DONE]"


@dataclass(frozen=True)
class ChunkRecord:
    """One chunk read from a file."""

    line: int
    """1-based line number where the record starts."""
    chunk: Any
    """The parsed JSON value, or the raw text when it is not valid JSON."""
    error: str | None = None
    """Why the text is not a JSON value (None when it parsed)."""


def _refuse_constant(name: str) -> Any:
    # Python's json accepts NaN and Infinity; JSON (and the AI SDK) does not.
    raise ValueError(f"{name} is not valid JSON")


def parse_json_value(text: str) -> tuple[Any, str | None]:
    """Parse strict JSON text: ``(value, None)``, or ``(text, reason)`` when it is not JSON."""
    try:
        return json.loads(text, parse_constant=_refuse_constant), None
    except json.JSONDecodeError as error:
        return text, f"not valid JSON: {error.msg} (column {error.colno})"
    except (ValueError, RecursionError) as error:
        return text, f"not valid JSON: {error}"


def detect_format(text: str) -> FileFormat:
    """``sse`` when the first non-blank line is an SSE field or comment, else ``jsonl``."""
    for line in _SSE_LINE_BREAK.split(text.removeprefix("\ufeff")):
        if not line.strip():
            continue
        return "sse" if line.startswith(":") or _SSE_FIELD.match(line) else "jsonl"
    return "jsonl"


def read_jsonl(text: str) -> list[ChunkRecord]:
    """One chunk per line; blank lines are skipped, CRLF endings accepted."""
    records = []
    # Split on "\n" only: str.splitlines() would also split inside JSON strings
    # holding raw U+2028 or U+0085, which JSON allows unescaped.
    for number, line in enumerate(text.removeprefix("\ufeff").split("\n"), start=1):
        line = line.removesuffix("\r")
        if not line.strip():
            continue
        value, error = parse_json_value(line)
        records.append(ChunkRecord(number, value, error))
    return records


def read_sse(text: str) -> list[ChunkRecord]:
    """Server-Sent Events as the AI SDK client reads them.

    Only ``data`` fields count; several ``data`` lines of one event are joined
    with newlines; comments (``:``) and other fields are ignored; ``[DONE]`` is
    skipped. A last event without its closing blank line is still read, since
    captures are often cut there. A capture that lost the blank lines between
    events (several ``data:`` lines that are not one JSON value together) is
    read one ``data:`` line per chunk, each with its own line number.
    """
    records: list[ChunkRecord] = []
    data: list[tuple[int, str]] = []
    lines = _SSE_LINE_BREAK.split(text.removeprefix("\ufeff"))
    for number, line in enumerate(lines, start=1):
        if not line:
            _dispatch(records, data)
            data = []
            continue
        name, _, value = line.partition(":")
        if name == "data":  # a comment line has an empty name
            data.append((number, value.removeprefix(" ")))
    _dispatch(records, data)
    return records


def _dispatch(records: list[ChunkRecord], data: list[tuple[int, str]]) -> None:
    if not data:
        return
    payload = "\n".join(value for _, value in data)
    if payload.strip() == _DONE:
        return
    value, error = parse_json_value(payload)
    if error is not None and len(data) > 1 and _lines_are_events(data):
        for line, text in data:
            if text.strip() != _DONE:
                records.append(ChunkRecord(line, *parse_json_value(text)))
        return
    records.append(ChunkRecord(data[0][0], value, error))


def _lines_are_events(data: list[tuple[int, str]]) -> bool:
    """Whether the data lines are events that lost their blank lines: some line is a JSON object alone.

    (The lines of one JSON value split over ``data:`` lines are not objects by themselves.)
    """
    return any(isinstance(parse_json_value(text)[0], dict) for _, text in data)


def read_chunks(text: str) -> tuple[FileFormat, list[ChunkRecord]]:
    """Detect the format of ``text`` and read its chunks."""
    kind = detect_format(text)
    return kind, read_sse(text) if kind == "sse" else read_jsonl(text)
