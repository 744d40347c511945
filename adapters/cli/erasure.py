"""The ``erase`` and ``retain`` commands: forget one conversation, or every one idle for too long.

Both are for operators: what they erase is gone for good (only the audit
timeline's kinds, actors and times stay). ``retain --dry-run`` lists what
would be erased and changes nothing.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, TextIO

from chatledger.adapters.cli.integrity import parse_duration

__all__ = ["TenantAction", "add_erase", "add_retain"]


class TenantAction(argparse.Action):
    """``--tenant``: stores the value and notes that it was given (``tenant_given``)."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        setattr(namespace, self.dest, values)
        namespace.tenant_given = True


def add_erase(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    subparser: Callable[..., argparse.ArgumentParser],
    open_store: Callable[[argparse.Namespace], Any],
) -> None:
    """Register ``chatledger erase``."""
    parser = subparser(
        commands,
        "erase",
        "erase a conversation for good (its audit skeleton stays)",
        "Destroy the conversation's content: its data key is deleted (crypto-shredding), its "
        "events become tombstones, its snapshots and read-model rows are deleted, and an "
        "erasure event records --actor, the time and --reason. Its audit timeline keeps each "
        "event's kind, actor and time; 'chatledger verify' still passes. This cannot be undone.",
    )
    parser.add_argument("chat", metavar="CHAT", help="the conversation's chat id")
    parser.add_argument("--actor", required=True, help="who erases it (e.g. operator:alice)")
    parser.add_argument(
        "--reason", required=True, help="why (e.g. the request or ticket it answers)"
    )

    def run(args: argparse.Namespace, out: TextIO) -> int:
        with open_store(args) as store:
            report = store.erase(args.chat, actor=args.actor, reason=args.reason)
        print(
            f"erased conversation {args.chat!r} (tenant {report.tenant!r}): "
            f"{report.events:,} event(s) at {report.erased_at.isoformat(timespec='seconds')} "
            f"by {report.actor}",
            file=out,
        )
        return 0

    parser.set_defaults(command=run)


def add_retain(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    subparser: Callable[..., argparse.ArgumentParser],
    open_store: Callable[[argparse.Namespace], Any],
) -> None:
    """Register ``chatledger retain``."""
    parser = subparser(
        commands,
        "retain",
        "erase every conversation idle for longer than a retention period",
        "Find the conversations with no event for longer than --older-than (of --tenant, or "
        "of every tenant when --tenant is not given) and erase each as 'chatledger erase' "
        "does, showing progress and a summary. --dry-run only lists them.",
    )
    parser.add_argument(
        "--older-than",
        type=parse_duration,
        required=True,
        metavar="DURATION",
        help="retention period: erase conversations idle for longer (90d, 12h, 30m, 45s)",
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="list what would be erased; change nothing"
    )
    parser.add_argument(
        "--actor",
        default="system:retention",
        help="who the erasures are recorded as (default: system:retention)",
    )
    parser.add_argument("--reason", help="why (default: the retention period)")
    parser.add_argument(
        "--as-of",
        type=_moment,
        metavar="TIME",
        help="measure idleness from this ISO 8601 time instead of now (e.g. with --dry-run: "
        "what retention will erase by then)",
    )

    def run(args: argparse.Namespace, out: TextIO) -> int:
        from tqdm import tqdm

        tenant = args.tenant if getattr(args, "tenant_given", False) else None
        scope = f"tenant {tenant!r}" if tenant else "every tenant"
        with (
            open_store(args) as store,
            tqdm(
                unit=" conversations",
                desc="checking" if args.dry_run else "erasing",
                file=sys.stderr,
                disable=None,
            ) as bar,
        ):

            def progress(done: int, total: int) -> None:
                bar.total = total
                bar.update(done - bar.n)

            report = store.retain(
                timedelta(seconds=args.older_than),
                tenant=tenant,
                dry_run=args.dry_run,
                actor=args.actor,
                reason=args.reason,
                progress=progress,
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
        return 1 if report.failed else 0

    parser.set_defaults(command=run)


def _moment(text: str) -> datetime:
    """An ISO 8601 time (UTC when it names no zone), for argparse."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"not an ISO 8601 time: {text!r} (e.g. 2026-12-01 or 2026-12-01T08:00:00+00:00)"
        ) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
