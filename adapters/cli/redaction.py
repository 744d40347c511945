"""``chatledger redact``: hide one tool call's input/output, or parts of one message, from every view."""

from __future__ import annotations

import argparse
from typing import TextIO

from chatledger.adapters.cli.common import PROG, open_existing
from chatledger.adapters.cli.options import CHAT, OPERATOR, REASON, Commands, OneOf, option
from chatledger.domain.redaction import TOOL_FIELDS

__all__ = ["add", "run"]


def add(commands: Commands) -> None:
    """Declare ``redact``."""
    commands.declare(
        "redact",
        run,
        CHAT,
        OneOf(
            (
                option("--tool-call", metavar="ID", help="the tool call to redact"),
                option("--message", metavar="ID", help="the message whose parts to redact"),
            ),
            required=True,
        ),
        option(
            "--field",
            dest="fields",
            metavar="F",
            action="append",
            help=f"what to hide (repeatable; default: everything): {' or '.join(TOOL_FIELDS)} of "
            "a tool call; part kinds of a message (text, reasoning, file, source-url, data-NAME, "
            "...)",
        ),
        OPERATOR.but(help="who redacts, as recorded in the audit (e.g. user:dpo)"),
        REASON,
        help="hide a tool call's input/output or a message's parts from every view",
        description="Record a redaction of conversation CHAT: from then on messages (also as "
        "they stood earlier), model conversions, the timeline, followed streams, pages and read "
        "models show [redacted] in place of the content. The events holding it stay in the log "
        "unchanged (the chain still verifies; whoever holds the store's key can read them: see "
        "docs/audit.md). The redaction itself is in the timeline, with --actor and --reason.",
        epilog=f"Examples: {PROG} redact chat-1 --tool-call call_7 --field output "
        "--actor user:dpo --reason 'ticket 4711'; "
        f"{PROG} redact chat-1 --message msg_2 --actor user:dpo --reason 'GDPR art. 17'",
    )


def run(args: argparse.Namespace, out: TextIO) -> int:
    """Record the redaction, or say it was already there."""
    with open_existing(args) as store:
        changed = store.redact(
            args.chat,
            tool_call_id=args.tool_call,
            message_id=args.message,
            fields=args.fields,
            actor=args.actor,
            reason=args.reason,
        )
        version = store.version(args.chat)
    target = f"tool call {args.tool_call}" if args.tool_call else f"message {args.message}"
    if changed:
        print(f"redacted {target} of {args.chat} (event {version})", file=out)
    else:
        print(f"{target} of {args.chat} was already redacted: nothing recorded", file=out)
    return 0
