"""The ``erase`` and ``retain`` commands: forget one conversation, or every one idle for too long.

Both are for operators: what they erase is gone for good (only the audit
timeline's kinds, actors and times stay). ``retain --dry-run`` lists what
would be erased and changes nothing.
"""

from __future__ import annotations

import argparse
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import TYPE_CHECKING, TextIO

from chatledger.adapters.cli.common import advance, open_existing, progress_bar
from chatledger.adapters.cli.options import (
    CHAT,
    OPERATOR,
    REASON,
    Commands,
    flag,
    option,
    parse_duration,
)

if TYPE_CHECKING:
    from chatledger.adapters.store.operations.erasure import Compaction

__all__ = ["add", "erase", "finish_erasure", "retain"]


def add(commands: Commands) -> None:
    """Declare ``erase`` and ``retain``."""
    commands.declare(
        "erase",
        erase,
        CHAT.but(help="the conversation's chat id"),
        OPERATOR.but(help="who erases it (e.g. operator:alice)"),
        REASON.but(help="why (e.g. the request or ticket it answers)"),
        help="erase a conversation for good (its audit skeleton stays)",
        description="Destroy the conversation's content: its data key is deleted "
        "(crypto-shredding), its events become tombstones, its snapshots and read-model rows are "
        "deleted, and an erasure event records --actor, the time and --reason. Its audit "
        "timeline keeps each event's kind, actor and time; 'chatledger verify' still passes. "
        "This cannot be undone.",
    )
    commands.declare(
        "retain",
        retain,
        option(
            "--older-than",
            type=parse_duration,
            required=True,
            metavar="DURATION",
            help="retention period: erase conversations idle for longer (90d, 12h, 30m, 45s)",
        ),
        flag("--dry-run", "list what would be erased; change nothing"),
        option(
            "--actor",
            default="system:retention",
            help="who the erasures are recorded as (default: system:retention)",
        ),
        option("--reason", help="why (default: the retention period)"),
        option(
            "--as-of",
            type=_moment,
            metavar="TIME",
            help="measure idleness from this ISO 8601 time instead of now (e.g. with --dry-run: "
            "what retention will erase by then)",
        ),
        help="erase every conversation idle for longer than a retention period",
        description="Find the conversations with no event for longer than --older-than (of "
        "--tenant, or of every tenant when --tenant is not given) and erase each as 'chatledger "
        "erase' does, showing progress and a summary. --dry-run only lists them.",
    )
    commands.declare(
        "finish-erasure",
        finish_erasure,
        help="remove erased content still held in the database's files (a pending erasure)",
        description="Complete what 'erase' or 'retain' reported as pending: SQLite: checkpoint "
        "and truncate the WAL; PostgreSQL: rewrite the tables (VACUUM FULL) and checkpoint. "
        "Run it once the readers they named have finished. Exit status 1 while still pending.",
    )


def erase(args: argparse.Namespace, out: TextIO) -> int:
    """``chatledger erase``: erase one conversation and say what was erased, when and by whom."""
    with open_existing(args) as store:
        report = store.operations.erase(args.chat, actor=args.actor, reason=args.reason)
    print(
        f"erased conversation {args.chat!r} (tenant {report.tenant!r}): "
        f"{report.events:,} event(s) at {report.erased_at.isoformat(timespec='seconds')} "
        f"by {report.actor}",
        file=out,
    )
    print("removed: " + "; ".join(report.removed), file=out)
    return _receipt(report.compaction, out)


def retain(args: argparse.Namespace, out: TextIO) -> int:
    """``chatledger retain``: erase (or list) every idle conversation; exit 1 if any failed."""
    tenant = args.tenant if getattr(args, "tenant_given", False) else None
    scope = f"tenant {tenant!r}" if tenant else "every tenant"
    what = "checking" if args.dry_run else "erasing"
    with open_existing(args) as store, progress_bar(what, " conversations") as bar:
        report = store.operations.retain(
            timedelta(seconds=args.older_than),
            tenant=tenant,
            dry_run=args.dry_run,
            actor=args.actor,
            reason=args.reason,
            progress=partial(advance, bar),
            now=args.as_of,
        )
    cutoff = report.cutoff.isoformat(timespec="seconds")
    for idle in report.idle:
        name = repr(idle.chat_id) if idle.chat_id else str(idle.conversation)
        owner = f" (tenant {idle.tenant!r})" if idle.tenant else ""
        last = idle.updated_at.isoformat(timespec="seconds")
        verb = "would erase" if args.dry_run else "erased"
        failed = next((why for f, why in report.failed if f is idle), None)
        print(
            f"{'not erased' if failed else verb}: {name}{owner}, idle since {last}"
            + (f": {failed}" if failed else ""),
            file=out,
        )
    if args.dry_run:
        summary = (
            f"dry run: {len(report.idle):,} conversation(s) of {scope} idle since before "
            f"{cutoff} would be erased; nothing was changed"
        )
    else:
        summary = (
            f"erased {len(report.erased):,} conversation(s) of {scope} idle since before "
            f"{cutoff}" + (f"; {len(report.failed):,} failed" if report.failed else "")
        )
    print(summary, file=out)
    pending = _receipt(report.compaction, out) if not args.dry_run else 0
    return 1 if report.failed or pending else 0


def finish_erasure(args: argparse.Namespace, out: TextIO) -> int:
    """``chatledger finish-erasure``: clean the files of erased content; exit 1 while still pending."""
    with open_existing(args) as store:
        return _receipt(store.operations.finish_erasure(), out)


def _receipt(compaction: Compaction | None, out: TextIO) -> int:
    """Print what the files keep after an erasure; 1 when some still hold erased content."""
    if compaction is None:
        return 0
    for line in compaction.lines():
        print(line, file=out)
    return 0 if compaction.done else 1


def _moment(text: str) -> datetime:
    """An ISO 8601 time (UTC when it names no zone), for argparse."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"not an ISO 8601 time: {text!r} (e.g. 2026-12-01 or 2026-12-01T08:00:00+00:00)"
        ) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
