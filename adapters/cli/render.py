"""Plain-text views of conversations, ingest results and counts for the command line (pure functions)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from chatledger.adapters.cli.chunk_files import ChunkRecord
    from chatledger.adapters.store import IngestReport

__all__ = [
    "STILL_STREAMING",
    "UNFINISHED",
    "count",
    "render_ingest",
    "render_message",
    "render_messages",
    "render_part",
    "short_json",
    "unfinished_label",
]

_INDENT = "  "
_MAX_JSON = 300


def count(n: int, one: str, many: str | None = None) -> str:
    """``n`` things in words: ``1 event``, ``1,200 events`` (``many``: an irregular plural)."""
    return f"{n:,} {one if n == 1 else many or one + 's'}"


def short_json(value: Any, limit: int = _MAX_JSON) -> str:
    """Compact JSON of ``value``, cut after ``limit`` characters (``--json`` shows it all)."""
    text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "), default=repr)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... (+{len(text) - limit} chars)"


UNFINISHED = "[unfinished]"
"""After text a stream left unfinished (the SDK keeps its part ``streaming`` for good)."""
STILL_STREAMING = "[still streaming]"
"""After text of the answer being written now."""
_ENDED = {"aborted": "stopped", "errored": "ended by an error", "interrupted": "interrupted"}


def unfinished_label(streaming: bool, last_outcome: str | None) -> str:
    """What the last message's unfinished text is: being written, or left when its answer ended how."""
    if streaming:
        return STILL_STREAMING
    ended = _ENDED.get(last_outcome or "")
    return f"[unfinished: the answer was {ended}]" if ended else UNFINISHED


def render_messages(
    messages: Sequence[Mapping[str, Any]], last_unfinished: str = UNFINISHED
) -> str:
    """Every message, separated by blank lines; the last one's unfinished text is ``last_unfinished``."""
    last = len(messages) - 1
    return "\n\n".join(
        render_message(message, last_unfinished if index == last else UNFINISHED)
        for index, message in enumerate(messages)
    )


def render_message(message: Mapping[str, Any], unfinished: str = UNFINISHED) -> str:
    """A header ``[role] id`` and one indented block per part (``unfinished`` after unfinished text)."""
    lines = [f"[{message.get('role', '?')}] {message.get('id', '?')}"]
    if message.get("metadata") is not None:
        lines.append(f"{_INDENT}metadata: {short_json(message['metadata'])}")
    step = 0
    for index, part in enumerate(message.get("parts", [])):
        if part.get("type") == "step-start":
            step += 1
            if index > 0:  # the first step needs no separator
                lines.append(f"{_INDENT}-- step {step} --")
            continue
        lines.extend(_INDENT + line if line else "" for line in render_part(part, unfinished))
    return "\n".join(lines)


def render_part(part: Mapping[str, Any], unfinished: str = UNFINISHED) -> list[str]:
    """The lines showing one UIMessage part (not indented)."""
    kind = str(part.get("type", "?"))
    if kind == "text":
        return _text(part, "", unfinished)
    if kind == "reasoning":
        return _text(part, "(reasoning) ", unfinished)
    if kind == "dynamic-tool" or kind.startswith("tool-"):
        return _tool(part)
    if kind == "file":
        name = f" {part['filename']}" if part.get("filename") else ""
        return [f"file{name} ({part.get('mediaType')}): {_cut(str(part.get('url', '')))}"]
    if kind == "source-url":
        title = f"{part['title']} " if part.get("title") else ""
        return [f"source: {title}<{part.get('url')}>"]
    if kind == "source-document":
        return [f"source document: {part.get('title')} ({part.get('mediaType')})"]
    if kind.startswith("data-"):
        key = f" [{part['id']}]" if part.get("id") is not None else ""
        return [f"{kind}{key}: {short_json(part.get('data'))}"]
    return [f"{kind}: {short_json(dict(part))}"]


def _text(part: Mapping[str, Any], prefix: str, unfinished: str) -> list[str]:
    text = str(part.get("text", ""))
    lines = (prefix + text).split("\n")
    if part.get("state") == "streaming":
        lines[-1] += f" {unfinished}"
    return lines


def _tool(part: Mapping[str, Any]) -> list[str]:
    kind = str(part.get("type"))
    name = part.get("toolName") if kind == "dynamic-tool" else kind.partition("-")[2]
    state = part.get("state", "?")
    flags = [flag for flag in ("providerExecuted", "preliminary") if part.get(flag)]
    shown_flags = f" ({', '.join(flags)})" if flags else ""
    lines = [f"tool {name} [{part.get('toolCallId')}]: {state}{shown_flags}"]
    if "input" in part:
        lines.append(f"{_INDENT}input: {short_json(part['input'])}")
    elif part.get("rawInput") is not None:
        lines.append(f"{_INDENT}raw input: {short_json(part['rawInput'])}")
    approval = part.get("approval")
    if isinstance(approval, Mapping):
        lines.append(f"{_INDENT}approval: {_approval(approval)}")
    if state == "output-available":
        lines.append(f"{_INDENT}output: {short_json(part.get('output'))}")
    if part.get("errorText") is not None:
        lines.append(f"{_INDENT}error: {part['errorText']}")
    return lines


def _approval(approval: Mapping[str, Any]) -> str:
    decision = approval.get("approved")
    said = "requested" if decision is None else "approved" if decision else "denied"
    reason = f", reason: {approval['reason']}" if approval.get("reason") else ""
    return f"{said} (id {approval.get('id')}){reason}"


def _cut(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else f"{text[:limit]}... (+{len(text) - limit} chars)"


def render_ingest(
    chat_id: str,
    message_id: str,
    file_format: str,
    records: Sequence[ChunkRecord],
    report: IngestReport,
) -> str:
    """The counts of an ingest, then one line per refused chunk naming its line in the file."""
    refused = len(report.refused)
    lines = [
        f"ingested {len(records)} chunks ({file_format}) into {chat_id!r}, message {message_id!r}: "
        f"{report.applied} applied, {report.replays} replayed, {refused} refused"
    ]
    for error in report.refused:
        at = error.position
        record = records[at] if at is not None and 0 <= at < len(records) else None
        if record is None:
            lines.append(f"{_INDENT}{error}")
        elif record.error is not None:
            # Say why the text is not JSON, rather than that a string is not a chunk.
            lines.append(f"{_INDENT}line {record.line}: {record.error}")
        else:
            lines.append(f"{_INDENT}line {record.line}: {error}")
    return "\n".join(lines)
