"""``chatledger list``: the tenant's conversations, most recently changed first, searchable."""

from __future__ import annotations

import argparse
import json
from typing import TextIO

from chatledger.adapters.cli.common import open_existing
from chatledger.adapters.cli.options import Commands, as_json, option
from chatledger.adapters.cli.values import iso_time
from chatledger.projections.listing import MAX_LIMIT, STATUSES, ConversationSummary

__all__ = ["add", "run"]


def add(commands: Commands) -> None:
    """Declare ``list``."""
    commands.declare(
        "list",
        run,
        option(
            "--query", "-q", metavar="WORDS", help="only conversations whose text has every word"
        ),
        option("--status", choices=STATUSES, help="only conversations in this status"),
        option("--updated-after", type=iso_time, metavar="ISO", help="changed after this time"),
        option("--updated-before", type=iso_time, metavar="ISO", help="changed before this time"),
        option("--limit", type=_limit, default=50, metavar="N", help="rows per page (default 50)"),
        option("--cursor", metavar="CURSOR", help="the page after this cursor"),
        as_json("the page"),
        help="list conversations, newest change first",
        description="List the tenant's conversations (title, status, pending approvals, "
        "messages), most recently changed first; search their text with --query.",
        epilog="Each page ends with the command for the next one, when there is more.",
    )


def run(args: argparse.Namespace, out: TextIO) -> int:
    """One page of the tenant's conversations, with the command for the next page."""
    with open_existing(args) as store:
        page = store.list_conversations(
            query=args.query,
            status=args.status,
            updated_before=args.updated_before,
            updated_after=args.updated_after,
            limit=args.limit,
            cursor=args.cursor,
        )
    if args.json:
        found = [row.to_json() for row in page.conversations]
        print(json.dumps({"conversations": found, "nextCursor": page.next_cursor}), file=out)
        return 0
    if not page.conversations:
        print("no conversations" + (" match" if args.query or args.status else ""), file=out)
    for row in page.conversations:
        print(_line(row), file=out)
    if page.next_cursor:
        print(f"\nmore: chatledger list --cursor {page.next_cursor} ...", file=out)
    return 0


def _line(row: ConversationSummary) -> str:
    waiting = f" [{row.pending_approvals} awaiting approval]" if row.pending_approvals else ""
    when = row.updated_at.strftime("%Y-%m-%d %H:%M:%S")
    messages = f"{row.message_count} message{'' if row.message_count == 1 else 's'}"
    return (
        f"{when}  {_printable(row.chat_id)}  {row.status}{waiting}  {messages}  "
        f"{_printable(row.title)}"
    )


def _limit(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if not 1 <= value <= MAX_LIMIT:
        raise argparse.ArgumentTypeError(f"between 1 and {MAX_LIMIT}, got {value}")
    return value


def _printable(text: str) -> str:
    """The text with control and other unprintable characters shown as ``?`` (safe in a terminal)."""
    return "".join(c if c.isprintable() else "?" for c in text)
