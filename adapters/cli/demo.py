"""``chatledger demo``: record a demo conversation with a denied tool call, and print it."""

from __future__ import annotations

import argparse
import uuid
from typing import TextIO

from chatledger.adapters.cli.common import PROG, open_store
from chatledger.adapters.cli.options import Commands, option
from chatledger.adapters.cli.render import render_messages
from chatledger.adapters.responders.demo import record_demo

__all__ = ["add", "run"]


def add(commands: Commands) -> None:
    """Declare ``demo``."""
    commands.declare(
        "demo",
        run,
        option("--chat", metavar="ID", help="chat id to create (default: a fresh demo-XXXXXXXX)"),
        help="record a demo conversation with a denied tool call and print it",
        description="Record a realistic conversation (the chunks a streamText server sends, in a "
        "conversation speaking AI SDK v7, or the major $CHATLEDGER_AI_SDK names): a question, a "
        "delete_file call that needs approval, the user's denial, and a continuation in which "
        "the provider replays the earlier call. Then print it.",
    )


def run(args: argparse.Namespace, out: TextIO) -> int:
    """Record the demo turn into a new conversation and print it with how to show it again."""
    chat_id = args.chat or f"demo-{uuid.uuid4().hex[:8]}"
    with open_store(args) as store:
        result = record_demo(store, chat_id)
        messages = store.messages(chat_id)
        where = store.config.display
    print(f"Recorded demo conversation {chat_id!r} in {where}\n", file=out)
    print(render_messages(messages), file=out)
    summary = f"\nrecorded {result.events} events; {result.replays} replayed chunks ignored"
    if result.refused:
        summary += f"; {len(result.refused)} refused: " + "; ".join(result.refused)
    print(summary, file=out)
    print(f"Show it again with: {PROG} show {chat_id} --url {where}", file=out)
    return 0
