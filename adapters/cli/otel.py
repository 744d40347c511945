"""``chatledger export-otel``: the timeline as OpenTelemetry GenAI spans, to an OTLP/HTTP endpoint."""

from __future__ import annotations

import argparse
import contextlib
import signal
import threading
from collections.abc import Callable
from typing import Any, TextIO

__all__ = ["add_export_otel"]


def add_export_otel(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    subparser: Callable[..., argparse.ArgumentParser],
    open_store: Callable[[argparse.Namespace], Any],
) -> None:
    """Register ``chatledger export-otel``."""
    parser = subparser(
        commands,
        "export-otel",
        "send the audit timeline to an OpenTelemetry backend (OTLP/HTTP)",
        "Send every conversation's streams and tool calls as OpenTelemetry GenAI spans (a "
        "'chat' span per stream, an 'execute_tool NAME' span per tool call, approvals and "
        "tool outputs as span events with actor and reason). Resumes where the last run "
        "stopped; span ids come from event positions, so sending again repeats the same "
        "spans. Needs pip install 'chatledger[otel]'.",
    )
    parser.add_argument(
        "--endpoint",
        required=True,
        metavar="URL",
        help="the OTLP/HTTP endpoint, e.g. http://localhost:4318 (/v1/traces is added)",
    )
    parser.add_argument(
        "--follow", action="store_true", help="keep sending new spans until interrupted"
    )
    parser.add_argument(
        "--content",
        action="store_true",
        help="add tool call arguments and results (gen_ai.tool.call.arguments/result)",
    )
    parser.add_argument(
        "--poll", type=float, default=1.0, metavar="SECONDS", help="--follow: wait between checks"
    )

    def run(args: argparse.Namespace, out: TextIO) -> int:
        with open_store(args) as store:
            exporter = store.otel_exporter(args.endpoint, content=args.content)
            try:
                sent = exporter.run_once()
                print(f"sent {sent:,} span(s) to {args.endpoint}", file=out, flush=True)
                if args.follow:
                    stop = threading.Event()
                    signal.signal(signal.SIGTERM, lambda *_: stop.set())
                    with contextlib.suppress(KeyboardInterrupt):
                        exporter.follow(stop, args.poll)
            finally:
                exporter.close()
        return 0

    parser.set_defaults(command=run)
