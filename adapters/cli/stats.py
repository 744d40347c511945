"""``chatledger stats``: a tenant's figures at a glance, for people (lines) or scripts (``--json``).

The same read as ``GET /api/stats`` and the overview page
(``chatledger.adapters.store.stats``): conversations and streams per day,
approvals per tool and per actor with the approval and denial rates, the time
from an approval's request to its decision (median and p90), what waits now
(approvals, the continuation queue) and the chunks refused or caught as replays.
"""

from __future__ import annotations

import argparse
import json
from functools import partial
from typing import TextIO

from chatledger.adapters.cli import usage
from chatledger.adapters.cli.common import advance, open_existing, progress_bar
from chatledger.adapters.cli.options import PROGRESS, Commands, as_json, option
from chatledger.adapters.store.stats import DEFAULT_DAYS, MAX_DAYS, read_stats
from chatledger.projections.stats import Decisions, StoreStats, Waiting, duration

__all__ = ["add", "lines", "run"]


def add(commands: Commands) -> None:
    """Declare ``stats``."""
    commands.declare(
        "stats",
        run,
        option(
            "--days",
            type=_days,
            default=DEFAULT_DAYS,
            metavar="N",
            help=f"days of daily counts to show (1-{MAX_DAYS}, default {DEFAULT_DAYS})",
        ),
        as_json("the figures"),
        PROGRESS,
        *usage.OPTIONS,
        help="the tenant's figures: conversations, approvals, decision times, queues",
        description="Count the tenant's conversations and streams (per day over --days), its "
        "approvals per tool and per actor with the approval and denial rates, the time from an "
        "approval's request to its decision (median and 90th percentile), what waits now (calls "
        "awaiting approval, the continuation queue, with the oldest's age), and the chunks "
        "refused or caught as replays. The serving process shows the same at /overview and "
        "GET /api/stats. --usage adds the token usage ledger (from AI SDK stream metadata and "
        "recorded usage), priced with --prices. Erased conversations are not counted.",
    )


def run(args: argparse.Namespace, out: TextIO) -> int:
    """Read the figures (a progress bar over the conversations) and print them."""
    with (
        open_existing(args) as store,
        progress_bar("reading", " conversations", show=args.progress) as bar,
    ):
        stats = read_stats(store, days=args.days, progress=partial(advance, bar))
        ledger = usage.usage_report(store, args) if usage.wanted(args) else None
    if args.json:
        extra = {"usage": ledger.to_json()} if ledger is not None else {}
        print(json.dumps(stats.to_json() | extra), file=out)
        return 0
    for line in lines(stats) + (usage.usage_lines(ledger) if ledger is not None else []):
        print(line, file=out)
    return 0


def lines(stats: StoreStats) -> list[str]:
    """The figures as lines for people."""
    when = stats.generated_at.isoformat(timespec="seconds")
    decisions = stats.decisions
    found = [
        f"tenant {stats.tenant!r}, as of {when}",
        f"conversations: {stats.conversations:,}   streams: {stats.streams:,}",
        f"approvals answered: {decisions.total:,}" + _split(decisions),
        "time to decision: "
        + (
            f"median {duration(stats.decision_median_seconds)}, "
            f"p90 {duration(stats.decision_p90_seconds)}"
            if stats.decision_median_seconds is not None
            else "-"
        ),
        f"awaiting approval: {_waiting(stats.approvals_waiting)}",
        f"continuation queue: {_waiting(stats.continuations_waiting)}",
        f"refused chunks: {stats.refused_chunks:,}   replays caught: {stats.replays:,}",
    ]
    for title, groups in (("per tool", stats.by_tool), ("per actor", stats.by_actor)):
        if groups:
            width = max(len(name) for name in groups)
            found.append(f"{title}:")
            found += [f"  {name:<{width}}  {d.total:>5,}{_split(d)}" for name, d in groups.items()]
    found.append(f"last {len(stats.days)} days (conversations, streams):")
    shown = [day for day in stats.days if day.conversations or day.streams]
    found += [f"  {d.day.isoformat()}  {d.conversations:>6,}  {d.streams:>6,}" for d in shown]
    if not shown:
        found.append("  nothing")
    return found


def _split(d: Decisions) -> str:
    if not d.total:
        return ""
    return (
        f" (approved {d.approved:,} = {d.approved / d.total:.0%}, "
        f"denied {d.denied:,} = {d.denied / d.total:.0%})"
    )


def _waiting(waiting: Waiting) -> str:
    if not waiting.count:
        return "0"
    return f"{waiting.count:,} (oldest waiting {duration(waiting.oldest_seconds)})"


def _days(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if not 1 <= value <= MAX_DAYS:
        raise argparse.ArgumentTypeError(f"between 1 and {MAX_DAYS}, got {value}")
    return value
