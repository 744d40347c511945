"""The read models from the event log: ``rebuild`` (all over again) and ``project`` (keep them current)."""

from __future__ import annotations

import argparse
import contextlib
import time
from functools import partial
from typing import TextIO

from chatledger.adapters.cli.common import advance, open_store, progress_bar, stop_on_sigterm
from chatledger.adapters.cli.options import POLL, PROGRESS, Commands, flag
from chatledger.adapters.cli.render import count

__all__ = ["add", "project", "rebuild"]


def add(commands: Commands) -> None:
    """Declare ``rebuild`` and ``project``."""
    commands.declare(
        "rebuild",
        rebuild,
        flag(
            "--accept-broken-chain",
            "rebuild even from a log whose hash chain fails (recorded beside the chain)",
        ),
        PROGRESS,
        help="drop the read models and rebuild them from the event log",
        description="Empty the read models (current messages, audit timeline, approvals inbox, "
        "continuation queue) and apply the whole event log again, showing progress. The log "
        "itself is never changed. Readers see the read models fill up while it runs. A log "
        "whose hash chain fails is refused (exit 1), unless --accept-broken-chain is given.",
    )
    commands.declare(
        "project",
        project,
        flag("--once", "catch up once and exit instead of running on"),
        POLL,
        help="keep the read models up to date (run it as a process of its own)",
        description="Apply new events to the read models as they are recorded, until "
        "interrupted (Ctrl-C or SIGTERM). Restarted, it resumes where it stopped. On PostgreSQL "
        "it wakes on each write (LISTEN/NOTIFY); elsewhere it polls. Reads catch up by "
        "themselves, so this only keeps them fast.",
    )


def rebuild(args: argparse.Namespace, out: TextIO) -> int:
    """``chatledger rebuild``: empty the read models, apply the whole log, say how fast."""
    with open_store(args) as store:
        with progress_bar(
            "rebuilding", " events", store.operations.head(), show=args.progress
        ) as bar:
            started = time.perf_counter()
            applied = store.operations.rebuild(
                progress=partial(advance, bar), accept_broken_chain=args.accept_broken_chain
            )
            seconds = time.perf_counter() - started
        counts = store.operations.read_model_counts()
    rate = f" ({applied / seconds:,.0f} events/s)" if seconds > 0 and applied else ""
    print(
        f"rebuilt the read models from {count(applied, 'event')} in {seconds:.1f} s{rate}: "
        f"{count(counts['conversations'], 'conversation')}, "
        f"{count(counts['timeline'], 'timeline entry', 'timeline entries')}, "
        f"{count(counts['approvals'], 'pending approval')}, "
        f"{count(counts['continuations'], 'pending continuation')}",
        file=out,
    )
    return 0


def project(args: argparse.Namespace, out: TextIO) -> int:
    """``chatledger project``: apply new events as they are recorded, until stopped."""
    with open_store(args) as store:
        if args.once:
            print(f"applied {count(store.operations.catch_up(), 'event')}", file=out)
            return 0
        stop = stop_on_sigterm()
        print(f"projecting {store.config.display}; Ctrl-C to stop", file=out, flush=True)

        def report(applied: int) -> None:
            print(f"applied {count(applied, 'event')}", file=out, flush=True)

        from chatledger.adapters.store.operations.projection_loop import project_forever

        with contextlib.suppress(KeyboardInterrupt):
            project_forever(store, stop, poll_seconds=args.poll, on_catch_up=report)
    return 0
