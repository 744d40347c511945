"""``chatledger redact``: hide one tool call's input/output, or parts of one message, from every view."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, TextIO

from chatledger.domain.redaction import TOOL_FIELDS

if TYPE_CHECKING:
    from collections.abc import Callable

    from chatledger.adapters.store import ConversationStore

__all__ = ["add_redact"]

_PROG = "chatledger"


def add_redact(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    subparser: Callable[..., argparse.ArgumentParser],
    open_existing: Callable[[argparse.Namespace], ConversationStore],
) -> None:
    """Register ``redact`` (``subparser`` adds the store options; ``open_existing`` opens)."""
    parser = subparser(
        commands,
        "redact",
        "hide a tool call's input/output or a message's parts from every view",
        "Record a redaction of conversation CHAT: from then on messages (also as they stood "
        "earlier), model conversions, the timeline, followed streams, pages and read models "
        "show [redacted] in place of the content. The events holding it stay in the log "
        "unchanged (the chain still verifies; whoever holds the store's key can read them: "
        "see docs/audit.md). The redaction itself is in the timeline, with --actor and --reason.",
        epilog=f"Examples: {_PROG} redact chat-1 --tool-call call_7 --field output "
        "--actor user:dpo --reason 'ticket 4711'; "
        f"{_PROG} redact chat-1 --message msg_2 --actor user:dpo --reason 'GDPR art. 17'",
    )
    parser.add_argument("chat", metavar="CHAT", help="chat id")
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--tool-call", metavar="ID", help="the tool call to redact")
    target.add_argument("--message", metavar="ID", help="the message whose parts to redact")
    parser.add_argument(
        "--field",
        dest="fields",
        metavar="F",
        action="append",
        help=f"what to hide (repeatable; default: everything): {' or '.join(TOOL_FIELDS)} of a "
        "tool call; part kinds of a message (text, reasoning, file, source-url, data-NAME, ...)",
    )
    parser.add_argument(
        "--actor", required=True, help="who redacts, as recorded in the audit (e.g. user:dpo)"
    )
    parser.add_argument("--reason", required=True, help="why (recorded in the audit)")
    parser.set_defaults(command=lambda args, out: _redact(args, out, open_existing))


def _redact(
    args: argparse.Namespace,
    out: TextIO,
    open_existing: Callable[[argparse.Namespace], ConversationStore],
) -> int:
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
