"""``chatledger stats --usage``: the token usage ledger of the tenant, rolled up and priced.

The same read as the library's ``chatledger.adapters.store.usage.read_usage``:
tokens per model and per day by default (``--usage-by`` conversation, user,
tenant, model, day), priced with the operator's ``--prices`` table (JSON:
``{"gpt-4o": {"input": 2.5, "output": 10}}``, per million tokens; chatledger
knows no prices).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from chatledger.adapters.cli.options import Option, flag, option
from chatledger.projections.usage_groups import GROUPS

if TYPE_CHECKING:  # the roll-up loads the event models: only when the ledger is asked for
    from chatledger.adapters.store.usage import UsageReport
    from chatledger.projections.usage import UsageRow

__all__ = ["OPTIONS", "usage_lines", "usage_report", "wanted"]

OPTIONS: tuple[Option, ...] = (
    flag("--usage", "add the token usage ledger (per model and per day unless --usage-by)"),
    option(
        "--usage-by",
        action="append",
        choices=GROUPS,
        metavar="GROUP",
        help=f"roll the usage up by GROUP ({', '.join(GROUPS)}); repeat for several",
    ),
    option(
        "--prices",
        metavar="FILE",
        help='price the usage with this JSON table: {"model": {"input": 2.5, "output": 10}} '
        "per million tokens (model names or patterns like gpt-4o*)",
    ),
)


def wanted(args: argparse.Namespace) -> bool:
    """Whether the command asked for the usage ledger."""
    return bool(args.usage or args.usage_by or args.prices)


def usage_report(store: Any, args: argparse.Namespace, progress: Any = None) -> UsageReport:
    """The usage of the store's tenant as the options ask."""
    from chatledger.adapters.store.usage import load_prices, read_usage

    prices = load_prices(args.prices) if args.prices else None
    return read_usage(store, by=args.usage_by or ("model", "day"), prices=prices, progress=progress)


def usage_lines(report: UsageReport) -> list[str]:
    """The usage for people: the totals, then one table per group."""
    found = [f"token usage: {_row(report.total, report.priced)}"]
    for by, rows in report.groups.items():
        found.append(f"usage per {by}:")
        if not rows:
            found.append("  nothing")
            continue
        width = max(len(row.key) for row in rows)
        found += [f"  {row.key:<{width}}  {_row(row, report.priced)}" for row in rows]
    return found


def _row(row: UsageRow, priced: bool) -> str:
    text = (
        f"{row.total:,} tokens (input {row.input:,}, output {row.output:,}) in {row.calls:,} "
        f"{'usage' if row.calls == 1 else 'usages'}"
    )
    if priced:
        text += f", cost {row.cost:.4f}" if row.cost is not None else ", cost -"
        if row.unpriced:
            text += f" ({row.unpriced:,} unpriced)"
    return text
