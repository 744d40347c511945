"""``chatledger ingest``: write a recorded stream (JSON Lines or an SSE capture) into a conversation."""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Iterable
from typing import Any, TextIO

from chatledger.adapters.cli.chunk_files import read_chunks
from chatledger.adapters.cli.common import PROG, CommandError, open_store, progress_bar, read_text
from chatledger.adapters.cli.options import CHAT, Commands, flag, option
from chatledger.adapters.cli.render import count, render_ingest
from chatledger.domain.errors import ConversationExistsError, ConversationNotFoundError

__all__ = ["PROGRESS_FROM", "add", "run"]

PROGRESS_FROM = 1_000
"""Fewer chunks than this are written without a progress bar."""

_OUTCOME_WHY = {
    "interrupted": "the capture ends without a finish chunk",
    "aborted": "the capture ends with an abort chunk",
    "errored": "the capture holds an error chunk and no finish chunk",
}


def add(commands: Commands) -> None:
    """Declare ``ingest``."""
    commands.declare(
        "ingest",
        run,
        CHAT,
        option("file", metavar="FILE", help="the recorded stream, or - for standard input"),
        flag(
            "--continuation",
            "continue the last assistant message instead of writing a new one",
        ),
        option(
            "--actor",
            default="system",
            help="who the events are recorded as caused by (default: system)",
        ),
        flag("--create", "start the conversation if it does not exist"),
        option(
            "--owner",
            default="any",
            metavar="NAME",
            help="with --create: who continues the conversation (default: any worker)",
        ),
        help="write a recorded stream (JSON Lines or SSE) into a conversation",
        description="Write a recorded UI message stream into a conversation as one model "
        "response. FILE holds one chunk per line (JSON Lines) or an SSE capture ('data: {...}' "
        "events; comments and 'data: [DONE]' are ignored); the format is detected. Invalid "
        "lines are recorded as refused input and reported with their line number. A capture "
        "without a finish chunk closes the stream as interrupted. Exit status 1 when a chunk "
        "was refused or none was applied.",
    )


def run(args: argparse.Namespace, out: TextIO) -> int:
    """Write the file's chunks as one model response; exit 1 when any was refused or none applied."""
    file_format, records = read_chunks(read_text(args.file))
    if not records:
        raise CommandError(f"{args.file} holds no chunks")
    outcome = _capture_outcome(record.chunk for record in records)
    chunks: Iterable[Any] = (record.chunk for record in records)
    if len(records) >= PROGRESS_FROM:
        chunks = progress_bar("ingesting", " chunks", len(records), chunks)
    with open_store(args) as store:
        if args.create:
            with contextlib.suppress(ConversationExistsError):
                store.start_conversation(args.chat, actor=args.actor, owner=args.owner)
        try:
            report = store.ingest(
                args.chat,
                chunks,
                actor=args.actor,
                continuation=args.continuation,
                outcome=outcome,
            )
        except ConversationNotFoundError as error:
            raise CommandError(
                f"conversation {error.chat_id!r} (tenant {error.tenant!r}) does not exist; "
                "pass --create to start it"
            ) from None
    print(render_ingest(args.chat, report.message_id, file_format, records, report), file=out)
    if outcome != "finished":
        print(f"the stream was closed as {outcome}: {_OUTCOME_WHY[outcome]}", file=out)
    if report.refused or not report.applied:
        what = (
            f"{count(len(report.refused), 'chunk')} refused (listed above)"
            if report.refused
            else "no chunk was applied"
        )
        print(f"{PROG}: error: {args.file}: {what}; what was received is recorded", file=sys.stderr)
        return 1
    return 0


def _capture_outcome(chunks: Iterable[Any]) -> str:
    """How a recorded stream ended: finished, aborted, errored, or interrupted (cut short)."""
    kinds = {chunk.get("type") for chunk in chunks if isinstance(chunk, dict)}
    if "finish" in kinds:
        return "finished"
    if "abort" in kinds:
        return "aborted"
    if "error" in kinds:
        return "errored"
    return "interrupted"
