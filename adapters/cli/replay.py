"""``chatledger replay``: re-run a recorded conversation against another responder and report the divergences.

For CI: the exit status is 0 when the new run does what the recording did,
3 when it diverges (1: a chatledger error, 2: bad usage). ``--json`` prints
the machine-readable report; ``--report FILE`` writes it to a file as well.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TextIO

from chatledger.adapters.cli.common import PROG, CommandError, load_responder, open_existing
from chatledger.adapters.cli.options import CHAT, Commands, as_json, option

__all__ = ["add", "replay"]


def add(commands: Commands) -> None:
    """Declare ``replay``."""
    commands.declare(
        "replay",
        replay,
        CHAT,
        option(
            "--responder",
            required=True,
            metavar="demo|MODULE:NAME",
            help="what answers in the replay: a Python object MODULE:NAME that is a responder, "
            "a pydantic_ai.Agent, or a function returning one ('demo': the demo turn)",
        ),
        option(
            "--into",
            metavar="CHAT",
            help="the new conversation's id (default: CHAT.replay-XXXXXXXX)",
        ),
        option(
            "--actor",
            default="system:replay",
            help="who gives the recorded decisions and results in the replay (default: system:replay)",
        ),
        option("--report", metavar="FILE", help="also write the JSON report to FILE"),
        as_json("the report"),
        help="replay a recorded conversation against another responder; report the divergences",
        description="Re-run conversation CHAT turn by turn into a new conversation: its user "
        "messages go to the responder; a tool call that matches a recorded one (same turn, tool "
        "and input) gets the recorded result or human decision, and no tool runs for real. "
        "Prints, per turn, where the new run differs (text, tool calls and inputs, approvals, "
        "finish reason, calls the recording could not answer). Exit status: 0 the same, "
        "3 diverged.",
        epilog=f"Example: {PROG} replay chat-1 --responder myapp.bot:new_prompt --json",
    )


def replay(args: argparse.Namespace, out: TextIO) -> int:
    """``chatledger replay``: the report, as lines or JSON; the exit status says whether it diverged."""
    from chatledger.adapters.replay import replay as replay_conversation  # loads the store

    responder = load_responder(args.responder, 0.0)
    with open_existing(args) as store:
        report = replay_conversation(store, args.chat, responder, into=args.into, actor=args.actor)
    document = json.dumps(report.to_json(), indent=2, ensure_ascii=False)
    if args.report:
        try:
            Path(args.report).write_text(document + "\n", encoding="utf-8")
        except OSError as error:
            raise CommandError(
                f"--report {args.report}: cannot write it ({error.strerror or error})"
            ) from None
    print(document if args.json else report.summary(), file=out)
    return report.exit_code
