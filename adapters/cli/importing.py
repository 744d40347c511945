"""``chatledger import``: a conversation from another framework's format (``export --format`` is the way out)."""

from __future__ import annotations

import argparse
import sys
import uuid
from functools import partial
from typing import Any, TextIO

from chatledger.adapters.cli.common import advance, open_store, progress_bar, read_text, seal_key
from chatledger.adapters.cli.format_io import (
    BUNDLE,
    FORMAT,
    JSON_REPORT,
    LISTING,
    STRICT,
    parse_json,
    print_report,
)
from chatledger.adapters.cli.options import PROGRESS, SEAL_KEY_FILE, Commands, option

__all__ = ["PROGRESS_FROM", "add", "run"]

PROGRESS_FROM = 1_000
"""Imports of fewer steps than this show no progress bar (unless --progress)."""


def add(commands: Commands) -> None:
    """Declare ``import``."""
    commands.declare(
        "import",
        run,
        option("file", metavar="FILE", help="the file to import, or - for standard input"),
        FORMAT.but(required=True, help="the file's format (see below)"),
        option("--chat", metavar="ID", help="the chat id to import into (default: a new one)"),
        option(
            "--conversation",
            metavar="ID",
            help="chatgpt: which conversation of the export (its id or title; needed when it "
            "holds more than one)",
        ),
        option("--actor", default="system", help="who the import is recorded as (default: system)"),
        SEAL_KEY_FILE.but(help="chatledger bundles: verify the bundle with this seal key first"),
        STRICT.but(help="exit 1 if the format dropped anything (nothing is imported then)"),
        JSON_REPORT,
        PROGRESS,
        help="import a conversation from another framework's format",
        description="Record the conversation FILE holds as a chatledger conversation, in one "
        "commit: its messages, and the results of its tool calls as tool outputs. An existing "
        "--chat is appended to. What the format holds that chatledger cannot is listed on "
        f"stderr (nothing is dropped silently). Formats: {LISTING}.",
    )


def run(args: argparse.Namespace, out: TextIO) -> int:
    """Import FILE as ``--format``; print where it went and what, if anything, was dropped."""
    from chatledger.adapters.formats import import_conversation, read_format

    text = read_text(args.file)
    value: Any = text if args.format == BUNDLE else parse_json(text, args.file)
    if args.format == "chatgpt":
        from chatledger.adapters.formats.chatgpt import pick_conversation

        value = pick_conversation(value, args.conversation)
    key = seal_key(args, required=False) if args.format == BUNDLE else None
    chat = args.chat or f"imported-{uuid.uuid4().hex[:8]}"
    if args.strict:
        report = read_format(value, args.format, seal_key=key).report
        if not report.lossless:
            print_report(report, args.json)
            print(f"chatledger: error: --strict: {args.file} would lose the above", file=sys.stderr)
            return 1
    with open_store(args) as store, progress_bar("importing", " steps", show=args.progress) as bar:
        result = import_conversation(
            store, chat, value, args.format, actor=args.actor, seal_key=key,
            progress=partial(_big_only, bar, args.progress),
        )  # fmt: skip
    verb = "created" if result.created else "appended to"
    print(f"{verb} {chat!r}: {result.report.messages:,} message(s) from {args.file}", file=out)
    print_report(result.report, args.json)
    return 0


def _big_only(bar: Any, forced: bool, done: int, total: int) -> None:
    """Move the bar for big imports only (or with --progress)."""
    if forced or total >= PROGRESS_FROM:
        advance(bar, done, total)
