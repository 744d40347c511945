"""The ``chatledger`` command line: the parser, the registry of command modules, and ``main``.

Each command family lives in a module named after what it is about, with
one shape: ``add(commands)`` declares its commands (and their options, as
data), and a function per command runs it with ``(args, out)`` and returns
the exit status. ``common`` and ``options`` hold what they share; nothing
imports this module but the entry point, so the order is one way:
``common`` <- ``options`` <- the command modules <- ``commands``. Commands
that only read never create a store: they refuse a URL where there is none.

Every command takes ``--url`` (default: ``$CHATLEDGER_URL``, else
``sqlite:///./chatledger.db``) and ``--tenant``, before or after the command
name. chatledger's own errors print one line on stderr and exit 1; bad usage
exits 2.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from chatledger.adapters.cli import (
    approvals,
    compaction,
    conversation,
    demo,
    erasure,
    grants,
    importing,
    ingest,
    integrity,
    listing,
    mcp,
    otel,
    owners,
    projection,
    redaction,
    replay,
    serve,
    stats,
    worker,
)
from chatledger.adapters.cli.common import PROG, CommandError
from chatledger.adapters.cli.messages import describe
from chatledger.adapters.cli.options import Commands, Run, add_store_options
from chatledger.adapters.version import installed_version
from chatledger.domain.errors import ChatLedgerError

__all__ = ["LISTED", "MODULES", "build_parser", "main"]

MODULES = (
    serve,
    demo,
    conversation,  # show, audit, convert
    ingest,
    importing,  # import (export --format is in integrity)
    projection,  # rebuild, project
    integrity,  # verify, seal, export, verify-export
    worker,
    approvals,  # status, inbox, approve, deny, tool-output
    owners,  # owner
    listing,  # list
    stats,  # stats
    otel,  # export-otel
    redaction,  # redact
    compaction,  # compact
    erasure,  # erase, retain, finish-erasure
    mcp,  # mcp
    replay,  # replay
    grants,  # grant, grants, revoke-grant
)
"""The command modules (where each command lives): each declares its commands in ``add(commands)``."""

LISTED = (
    "serve",
    "demo",
    "show",
    "ingest",
    "import",
    "audit",
    "convert",
    "rebuild",
    "project",
    "verify",
    "worker",
    "status",
    "inbox",
    "approve",
    "deny",
    "tool-output",
    "owner",
    "list",
    "stats",
    "seal",
    "export",
    "verify-export",
    "export-otel",
    "redact",
    "compact",
    "erase",
    "retain",
    "finish-erasure",
    "mcp",
    "replay",
    "grant",
    "grants",
    "revoke-grant",
)
"""Every command, in the order ``chatledger --help`` lists them: a newcomer's first."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status (0 ok, 1 error, 2 bad usage)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # argparse exits on --help (0) and on bad usage (2)
        return exit_.code if isinstance(exit_.code, int) else 2
    command: Run = args.command
    try:
        return command(args, sys.stdout)
    except (ChatLedgerError, CommandError) as error:
        print(f"{PROG}: error: {describe(error, args.url)}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # e.g. `chatledger show c | head`
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - keeps the interpreter's final flush quiet
        return 1
    except KeyboardInterrupt:
        return 130


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every command."""
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="chatledger: an event-sourced store of AI chat conversations "
        "with tool calls and approvals.",
        epilog=f"Run '{PROG} COMMAND --help' for a command's options.",
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {installed_version()}")
    add_store_options(parser, suppress=False)
    commands = Commands()
    for module in MODULES:
        module.add(commands)
    commands.add_to(parser, LISTED)
    return parser
