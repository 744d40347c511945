"""Reading one conversation: ``show`` (its messages), ``audit`` (its timeline), ``convert`` (for a model API).

These commands only read: they never create a store.
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, TextIO

from chatledger.adapters.cli.common import CommandError, open_existing
from chatledger.adapters.cli.options import (
    AT_VERSION,
    CHAT,
    Commands,
    OneOf,
    as_json,
    flag,
    iso_time,
    option,
)
from chatledger.adapters.cli.render import UNFINISHED, render_messages, unfinished_label

if TYPE_CHECKING:  # the store is imported when a command runs, so --help starts fast
    from chatledger.adapters.store import ConversationStore

__all__ = ["FORMATS", "add", "audit", "convert", "show"]

FORMATS = ("ai-sdk", "anthropic", "openai-chat", "openai-responses")
"""The converter's formats (``chatledger.domain.convert.FORMATS``, kept equal by a test)."""


def add(commands: Commands) -> None:
    """Declare ``show``, ``audit`` and ``convert``."""
    at_time = option(
        "--at-time",
        type=iso_time,
        metavar="ISO",
        help="as the conversation stood at this time (ISO 8601, e.g. 2025-01-31T12:00:00Z; "
        "no offset means UTC)",
    )
    commands.declare(
        "show",
        show,
        CHAT,
        as_json("the UIMessages"),
        OneOf((AT_VERSION.but(help="as the conversation stood at event version N"), at_time)),
        help="print a conversation's messages",
        description="Print a conversation's UIMessages, readably or as JSON, now or as they "
        "stood earlier.",
    )
    commands.declare(
        "audit",
        audit,
        CHAT,
        option(
            "--kind",
            action="append",
            metavar="KIND",
            help="only entries of this kind (repeatable), e.g. approval-responded, chunks",
        ),
        option("--actor", help="only entries caused by this actor, e.g. user:alice"),
        flag("--jsonl", "print JSON Lines with full details (every chunk of each batch)"),
        help="print a conversation's audit timeline",
        description="Print one line per event of a conversation: position, time, actor, kind "
        "and a summary. Batches holding replayed or refused chunks are marked. --jsonl prints "
        "every entry with its details as JSON Lines instead (for export).",
    )
    commands.declare(
        "convert",
        convert,
        CHAT,
        option(
            "--format", choices=FORMATS, default="ai-sdk", help="target format (default: ai-sdk)"
        ),
        AT_VERSION,
        flag(
            "--omit-unanswered",
            "leave out tool calls still waiting for a result (provider formats)",
        ),
        flag("--ignore-incomplete-tool-calls", "the AI SDK option of that name (ai-sdk format)"),
        help="print a conversation as a model API's messages",
        description="Print the conversation as the messages a model API takes (JSON): ai-sdk "
        "(AI SDK ModelMessages), anthropic (Messages API system + messages), openai-chat (Chat "
        "Completions messages) or openai-responses (Responses input items). A turn paused on "
        "tool calls without results is refused unless --omit-unanswered.",
    )


def show(args: argparse.Namespace, out: TextIO) -> int:
    """``chatledger show``: the messages, readably or as JSON, now or as they stood earlier."""
    with open_existing(args) as store:
        version = _version_within(store, args.chat, args.at_version)
        messages = store.messages(args.chat, at_version=args.at_version, at_time=args.at_time)
        label = (
            UNFINISHED  # as it stood earlier, whether its answer was still streaming is not known
        )
        if args.at_version is None and args.at_time is None:
            status = store.status(args.chat)
            label = unfinished_label(status.status == "streaming", status.last_outcome)
    if args.json:
        print(json.dumps(messages, indent=2, ensure_ascii=False), file=out)
        return 0
    when = ""
    if args.at_version is not None:
        when = f" as of version {args.at_version}"
    elif args.at_time is not None:
        when = f" as of {args.at_time.isoformat()}"
    print(
        f"conversation {args.chat!r} (tenant {args.tenant!r}, now at version {version}){when}: "
        f"{len(messages)} message{'' if len(messages) == 1 else 's'}\n",
        file=out,
    )
    if messages:
        print(render_messages(messages, label), file=out)
    return 0


def audit(args: argparse.Namespace, out: TextIO) -> int:
    """``chatledger audit``: one line per event, or every entry in full as JSON Lines."""
    with open_existing(args) as store:
        try:
            entries = store.history(args.chat, kinds=args.kind, actor=args.actor, full=args.jsonl)
        except ValueError as error:
            raise CommandError(str(error)) from None
    if args.jsonl:
        from chatledger.adapters.store.audit import write_jsonl

        write_jsonl(entries, out)
        return 0
    width = max((len(entry.actor or "-") for entry in entries), default=1)
    for entry in entries:
        marks = f" [{', '.join(entry.marks)}]" if entry.marks else ""
        when = entry.time.strftime("%Y-%m-%d %H:%M:%S")
        print(
            f"{entry.position:>6}  {when}  {entry.actor or '-':<{width}}  {entry.kind:<22} "
            f"{entry.summary}{marks}",
            file=out,
        )
    return 0


def convert(args: argparse.Namespace, out: TextIO) -> int:
    """``chatledger convert``: the messages a model API takes, as JSON."""
    with open_existing(args) as store:
        _version_within(store, args.chat, args.at_version)
        converted = store.model_messages(
            args.chat,
            args.format,
            at_version=args.at_version,
            unanswered="omit" if args.omit_unanswered else "refuse",
            ignore_incomplete_tool_calls=args.ignore_incomplete_tool_calls,
        )
    print(json.dumps(converted, indent=2, ensure_ascii=False), file=out)
    return 0


def _version_within(store: ConversationStore, chat: str, at_version: int | None) -> int:
    """The conversation's version; CommandError when ``--at-version`` is past it."""
    version = store.version(chat)
    if at_version is not None and at_version > version:
        raise CommandError(
            f"--at-version {at_version} is past the end: conversation {chat!r} is at version "
            f"{version}"
        )
    return version
