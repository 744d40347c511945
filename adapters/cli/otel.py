"""``chatledger export-otel``: the timeline as OpenTelemetry GenAI spans, to an OTLP/HTTP endpoint."""

from __future__ import annotations

import argparse
import contextlib
from typing import TextIO

from chatledger.adapters.cli.common import open_existing, stop_on_sigterm
from chatledger.adapters.cli.options import POLL, Commands, flag, option

__all__ = ["add", "run"]


def add(commands: Commands) -> None:
    """Declare ``export-otel``."""
    commands.declare(
        "export-otel",
        run,
        option(
            "--endpoint",
            required=True,
            metavar="URL",
            help="the OTLP/HTTP endpoint, e.g. http://localhost:4318 (/v1/traces is added)",
        ),
        flag("--follow", "keep sending new spans until interrupted"),
        flag(
            "--content",
            "add tool call arguments and results (gen_ai.tool.call.arguments/result)",
        ),
        POLL.but(default=1.0, help="--follow: wait between checks"),
        help="send the audit timeline to an OpenTelemetry backend (OTLP/HTTP)",
        description="Send every conversation's streams and tool calls as OpenTelemetry GenAI "
        "spans (a 'chat' span per stream, an 'execute_tool NAME' span per tool call, approvals "
        "and tool outputs as span events with actor and reason). Resumes where the last run "
        "stopped; span ids come from event positions, so sending again repeats the same spans. "
        "Needs pip install 'chatledger[otel]'.",
    )


def run(args: argparse.Namespace, out: TextIO) -> int:
    """Send the spans not sent yet; with ``--follow``, keep sending until stopped."""
    with open_existing(args) as store:
        exporter = store.operations.otel_exporter(args.endpoint, content=args.content)
        try:
            sent = exporter.run_once()
            print(f"sent {sent:,} span(s) to {args.endpoint}", file=out, flush=True)
            if args.follow:
                stop = stop_on_sigterm()
                with contextlib.suppress(KeyboardInterrupt):
                    exporter.follow(stop, args.poll)
        finally:
            exporter.close()
    return 0
