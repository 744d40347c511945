"""What ``import`` and ``export --format`` share: the ``--format`` options, reading the file, the report.

The formats are those of ``chatledger.adapters.formats`` (its registry).
The loss report (what a format could not carry) is printed on standard
error, so an export's JSON on standard output stays clean.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from chatledger.adapters.cli.common import CommandError, open_existing
from chatledger.adapters.cli.options import flag, option
from chatledger.adapters.formats.registry import BUNDLE, FORMATS, NAMES

if TYPE_CHECKING:
    from chatledger.adapters.formats import LossReport

__all__ = [
    "BUNDLE",
    "EXPORT_OPTIONS",
    "FORMAT",
    "LISTING",
    "export_as",
    "parse_json",
    "print_report",
]

LISTING = "; ".join(f"{name}: {listed.summary}" for name, listed in FORMATS.items())
"""Each format and what it is, for the help."""

FORMAT = option(
    "--format",
    "-f",
    choices=NAMES,
    metavar="F",
    help=f"the format, one of {', '.join(NAMES)}",
)
STRICT = flag("--strict", "exit 1 if the format dropped anything")
JSON_REPORT = flag("--json", "print the loss report as JSON")
EXPORT_OPTIONS = (
    FORMAT.but(default=BUNDLE, help=f"the format (default: {BUNDLE}); one of {', '.join(NAMES)}"),
    STRICT.but(help="with --format: exit 1 if the format dropped anything"),
    JSON_REPORT.but(help="with --format: print the loss report as JSON"),
)
"""The options ``export`` adds for ``--format``."""


def export_as(args: argparse.Namespace, out: TextIO) -> int:
    """``chatledger export CHAT --format F``: the JSON to ``--output`` or stdout, the report on stderr."""
    if args.subject is not None:
        raise CommandError("export --subject writes chatledger bundles only: leave out --format")
    if args.chat is None:
        raise CommandError("name the conversation to export")
    from chatledger.adapters.formats import export_conversation

    with open_existing(args) as store:
        exported = export_conversation(store, args.chat, args.format, at_version=args.at_version)
    text = json.dumps(exported.value, ensure_ascii=False, indent=2) + "\n"
    if args.output is None:
        out.write(text)
    else:
        Path(args.output).write_text(text, encoding="utf-8")
        print(f"wrote {args.format} to {args.output}", file=out)
    print_report(exported.report, getattr(args, "json", False))
    if getattr(args, "strict", False) and not exported.report.lossless:
        print("chatledger: error: --strict: the format dropped the above", file=sys.stderr)
        return 1
    return 0


def print_report(report: LossReport, as_json: bool) -> None:
    """The report on stderr, as text or JSON."""
    text = json.dumps(report.to_json()) if as_json else str(report)
    print(text, file=sys.stderr)


def parse_json(text: str, name: str) -> Any:
    """The JSON value in a file's text (CommandError naming the file otherwise)."""
    try:
        return json.loads(text)
    except ValueError as error:
        raise CommandError(f"{name} is not JSON: {error}") from None
