"""``chatledger compact``: let a summary stand in for a range of messages in the model's input."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO

from chatledger.adapters.cli.common import PROG, CommandError, open_existing
from chatledger.adapters.cli.options import CHAT, OPERATOR, Commands, OneOf, option

__all__ = ["add", "run"]


def add(commands: Commands) -> None:
    """Declare ``compact``."""
    commands.declare(
        "compact",
        run,
        CHAT,
        option("--from", dest="first", required=True, metavar="ID", help="the first message"),
        option("--to", dest="last", required=True, metavar="ID", help="the last message (kept)"),
        OneOf(
            (
                option("--summary", metavar="TEXT", help="the summary the model reads instead"),
                option("--summary-file", metavar="FILE", help="read the summary from FILE"),
            ),
            required=True,
        ),
        OPERATOR.but(help="who compacts, as recorded in the audit (e.g. user:alice)"),
        option("--reason", help="why (recorded in the audit)"),
        help="let a summary stand in for a range of messages in the model's input",
        description="Record a compaction of conversation CHAT: from then on its model messages "
        "(every format, and the turns the server runs) show the summary, as one system message, "
        "in place of the messages --from to --to; the messages themselves, the pages, the "
        "timeline and every earlier version stay as they are. The range must leave the latest "
        "message out.",
        epilog=f"Example: {PROG} compact chat-1 --from u1 --to a7 --summary-file summary.txt "
        "--actor user:alice --reason 'the chat got long'",
    )


def run(args: argparse.Namespace, out: TextIO) -> int:
    """Record the compaction and say how many messages it covers."""
    summary = args.summary
    if args.summary_file is not None:
        try:
            summary = Path(args.summary_file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise CommandError(f"--summary-file {args.summary_file!r}: {error}") from None
    with open_existing(args) as store:
        count = store.compact(
            args.chat,
            from_message_id=args.first,
            to_message_id=args.last,
            summary=summary,
            actor=args.actor,
            reason=args.reason,
        )
    print(f"compacted {count} message(s) of {args.chat!r} for the model", file=out)
    return 0
