"""Reading one conversation: ``show`` (its messages), ``audit`` (its timeline), ``convert`` (for a model API).

These commands only read: they never create a store.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, TextIO

from chatledger.adapters.cli.common import CommandError, open_existing
from chatledger.adapters.cli.options import (
    AT_VERSION,
    CHAT,
    Commands,
    OneOf,
    as_json,
    flag,
    option,
)
from chatledger.adapters.cli.render import UNFINISHED, render_messages, unfinished_label
from chatledger.adapters.cli.values import iso_time
from chatledger.projections.for_people import for_people

if TYPE_CHECKING:  # the store is imported when a command runs, so --help starts fast
    from chatledger.adapters.store import ConversationStore
    from chatledger.domain.timeline_groups import TimelineRow

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
        option("--after", type=int, default=0, metavar="N", help="only entries after position N"),
        option("--limit", type=_page_size, metavar="N", help="at most N lines (a page)"),
        flag("--every-event", "one line per event: each chunk batch on its own line"),
        flag("--jsonl", "print JSON Lines with full details (every event, every chunk)"),
        help="print a conversation's audit timeline",
        description="Print the audit timeline of a conversation, one line per event: position, "
        "time, actor, kind and a summary; each stream's run of chunk batches is one line "
        "(positions FIRST-LAST: the chunks, the text, the tool calls, how the stream ended), "
        "so decisions and the lifecycle stand out. Marks flag denials, errors, replayed and "
        "refused chunks. --limit N prints a page and tells the --after of the next one. "
        "--every-event lists each batch; --jsonl prints every event with its details as "
        "JSON Lines (for export).",
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
    readable = for_people(messages)  # --json above keeps the frameworks' bookkeeping
    when = ""
    if args.at_version is not None:
        when = f" as of version {args.at_version}"
    elif args.at_time is not None:
        when = f" as of {args.at_time.isoformat()}"
    print(
        f"conversation {args.chat!r} (tenant {args.tenant!r}, now at version {version}){when}: "
        f"{len(readable.messages)} message{'' if len(readable.messages) == 1 else 's'}",
        file=out,
    )
    if readable.note:
        print(f"({readable.note}; --json and `chatledger audit` show it)", file=out)
    print(file=out)
    if readable.messages:
        print(render_messages(readable.messages, label), file=out)
    return 0


def audit(args: argparse.Namespace, out: TextIO) -> int:
    """``chatledger audit``: a line per event (a stream's batches grouped), or JSON Lines in full."""
    from chatledger.domain.timeline_groups import one_per_event

    query = {"kinds": args.kind, "actor": args.actor, "after": args.after}
    with open_existing(args) as store:
        try:
            if args.jsonl or args.every_event:
                more = None if args.limit is None else args.limit + 1  # is there a next page?
                entries = store.history(args.chat, limit=more, full=args.jsonl, **query)
                rows = one_per_event(entries[: args.limit])
                following = rows[-1].last_position if len(entries) > len(rows) else None
            else:
                found = store.timeline(args.chat, limit=args.limit, **query)
                rows, following = found.rows, found.next_after
        except ValueError as error:
            raise CommandError(str(error)) from None
    if args.jsonl:
        from chatledger.adapters.store.audit import write_jsonl

        write_jsonl([entry for row in rows for entry in row.entries], out)
    else:
        _print_rows(rows, args.every_event, out)
    if following is not None:
        print(f"more entries follow: add --after {following} for the next page", file=sys.stderr)
    return 0


def _print_rows(rows: list[TimelineRow], every_event: bool, out: TextIO) -> None:
    spans = [f"{r.position}-{r.last_position}" if r.batches > 1 else str(r.position) for r in rows]
    width = max((len(row.actor or "-") for row in rows), default=1)
    left = 6 if every_event else 11  # room for a run's FIRST-LAST
    for row, span in zip(rows, spans, strict=True):
        marks = f" [{', '.join(row.marks)}]" if row.marks else ""
        when = row.time.strftime("%Y-%m-%d %H:%M:%S")
        print(
            f"{span:>{left}}  {when}  {row.actor or '-':<{width}}  {row.kind:<22} "
            f"{row.summary}{marks}",
            file=out,
        )


def _page_size(text: str) -> int:
    """``--limit``: a whole number from 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"a page holds at least 1 line, not {value}")
    return value


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
