"""``chatledger owner``: show or change who continues a conversation (its owner), audited."""

from __future__ import annotations

import argparse
from typing import TextIO

from chatledger.adapters.cli.common import PROG, open_existing
from chatledger.adapters.cli.options import CHAT, Commands, option

__all__ = ["add", "run"]


def add(commands: Commands) -> None:
    """Declare ``owner``."""
    commands.declare(
        "owner",
        run,
        CHAT,
        option(
            "name",
            nargs="?",
            metavar="NAME",
            help="the new owner: any, none, openai-agents, pydantic-ai, responder:<actor> "
            "or an external runtime's name (omit it to show the owner)",
        ),
        option("--actor", default="user:cli", help="who hands it over (default: user:cli)"),
        option("--reason", help="why (recorded in the audit)"),
        help="show or change who continues a conversation (its owner)",
        description="A conversation's owner is the runtime that continues it: only a worker of "
        "that owner claims its continuation requests ('serve' and 'worker' work as "
        "responder:<their responder's actor>, or --owner; 'any' lets every worker, 'none' "
        "none). Without NAME, print the owner; with NAME, hand the conversation (and a "
        "request it has pending) to NAME, recorded in the audit with --actor and --reason.",
        epilog=f"Example: {PROG} owner chat-1 responder:agent:ops-assistant --actor user:ann "
        "--reason 'the agent process is retired'",
    )


def run(args: argparse.Namespace, out: TextIO) -> int:
    """Print the owner, or record the change."""
    with open_existing(args) as store:
        if args.name is None:
            print(store.status(args.chat).owner, file=out)
            return 0
        changed = store.set_owner(args.chat, args.name, actor=args.actor, reason=args.reason)
    if changed:
        print(f"{args.chat} is now owned by {args.name}", file=out)
    else:
        print(f"{args.chat} is already owned by {args.name}: nothing recorded", file=out)
    return 0
