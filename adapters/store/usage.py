"""The usage ledger read: one conversation's token usage, or a tenant's, rolled up and priced.

It reads each conversation's audit timeline through the store's services (so
a sharded store works the same): the chunk batches in full, for the usage an
AI SDK stream's message metadata states, and the ``UsageRecorded`` events;
``chatledger.projections.usage`` makes the entries and sums them. Erased
conversations are not counted (their content, metadata included, is gone).
A report for operators and pages, not a hot path: it reads every
conversation of the tenants asked for.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chatledger.domain.errors import (
    ConversationErasedError,
    ConversationNotFoundError,
    InvalidInputError,
)
from chatledger.projections.listing import MAX_LIMIT
from chatledger.projections.usage import (
    GROUPS,
    LEDGER_KINDS,
    PriceTable,
    UsageEntry,
    UsageRow,
    ledger_of,
    rollup,
)

if TYPE_CHECKING:
    from chatledger.adapters.store.stats import StatsProgress
    from chatledger.adapters.store.surface import Store

__all__ = ["UsageReport", "conversation_usage", "load_prices", "read_usage", "usage_ledger"]


@dataclass(frozen=True)
class UsageReport:
    """A tenant's usage: the totals, and rows per each group asked for."""

    tenants: tuple[str, ...]
    total: UsageRow
    groups: dict[str, list[UsageRow]]
    priced: bool

    def to_json(self) -> dict[str, Any]:
        """The report as JSON."""
        return {
            "tenants": list(self.tenants),
            "total": self.total.to_json(),
            "priced": self.priced,
            "groups": {by: [row.to_json() for row in rows] for by, rows in self.groups.items()},
        }


def conversation_usage(
    store: Store, chat_id: str, *, tenant: str | None = None
) -> list[UsageEntry]:
    """The usage entries of one conversation, in log order (ConversationNotFoundError if none)."""
    tenant = tenant or store.tenant
    entries = store.reads.history(chat_id, tenant=tenant, kinds=LEDGER_KINDS, full=True)
    return ledger_of(tenant, chat_id, entries)


def usage_ledger(
    store: Store,
    *,
    tenants: Iterable[str] | None = None,
    since: date | None = None,
    until: date | None = None,
    progress: StatsProgress | None = None,
) -> list[UsageEntry]:
    """Every usage entry of ``tenants`` (default: the store's), from ``since`` to ``until`` (UTC days, included)."""
    chats = [
        (tenant, chat_id)
        for tenant in tenants or [store.tenant]
        for chat_id in _chats(store, tenant)
    ]
    found: list[UsageEntry] = []
    for done, (tenant, chat_id) in enumerate(chats, start=1):
        with contextlib.suppress(ConversationErasedError, ConversationNotFoundError):
            found += conversation_usage(store, chat_id, tenant=tenant)  # unless erased (or gone)
        if progress is not None:
            progress(done, len(chats))
    return [
        entry
        for entry in found
        if (since is None or entry.time.date() >= since)
        and (until is None or entry.time.date() <= until)
    ]


def read_usage(
    store: Store,
    *,
    by: Iterable[str] = ("model", "day"),
    prices: PriceTable | None = None,
    tenants: Iterable[str] | None = None,
    since: date | None = None,
    until: date | None = None,
    progress: StatsProgress | None = None,
) -> UsageReport:
    """The usage of ``tenants`` rolled up per each of ``by`` (``GROUPS``), priced by ``prices``."""
    wanted = list(by)
    unknown = [group for group in wanted if group not in GROUPS]
    if unknown:
        raise InvalidInputError(
            f"usage cannot be rolled up by {unknown[0][:40]!r}; use {', '.join(GROUPS)}"
        )
    names = tuple(tenants or [store.tenant])
    entries = usage_ledger(store, tenants=names, since=since, until=until, progress=progress)
    everything = rollup(entries, "tenant", prices)
    total = UsageRow("all")
    for row in everything:
        total.calls += row.calls
        total.input += row.input
        total.output += row.output
        total.total += row.total
        total.reasoning += row.reasoning
        total.cached_input += row.cached_input
        total.unpriced += row.unpriced
        total.models |= row.models
        if row.cost is not None:
            total.cost = row.cost if total.cost is None else total.cost + row.cost
    groups = {group: rollup(entries, group, prices) for group in wanted}
    return UsageReport(names, total, groups, prices is not None)


def load_prices(path: str | Path) -> PriceTable:
    """The operator's price table from a JSON file (``{"model": {"input": ..., "output": ...}}``)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise InvalidInputError(
            f"cannot read the price table {str(path)!r}: {error.strerror}"
        ) from None
    try:
        table = json.loads(text)
    except ValueError as error:
        raise InvalidInputError(f"the price table {str(path)!r} is not JSON: {error}") from None
    return PriceTable.from_json(table)


def _chats(store: Store, tenant: str) -> list[str]:
    found: list[str] = []
    cursor: str | None = None
    while True:
        page = store.inbox.list_conversations(tenant=tenant, limit=MAX_LIMIT, cursor=cursor)
        found += [summary.chat_id for summary in page.conversations]
        cursor = page.next_cursor
        if cursor is None:
            return found
