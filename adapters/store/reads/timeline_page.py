"""One page of the grouped audit timeline, read in windows so a page costs about its own rows.

A run of a stream's chunk batches may be longer than a page: the read goes on
window by window until the page's last row is known to be whole (a row follows
it) or the log ends. The streams' closes are read on their own, so a run's
outcome is known whatever the page size or the kind filter.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from chatledger.domain.errors import InvalidInputError
from chatledger.domain.timeline import TimelineEntry
from chatledger.domain.timeline_groups import TimelinePage, group, page

__all__ = ["WINDOW", "kinds_asked", "timeline_page"]

WINDOW = 256
"""Entries read at a time (at least; four times the page size when that is more)."""

History = Callable[..., list[TimelineEntry]]
"""``Reader.history``: (chat_id, *, tenant, kinds, actor, after, limit) -> entries."""


def timeline_page(
    history: History,
    chat_id: str,
    *,
    tenant: str | None,
    kinds: Iterable[str] | None,
    actor: str | None,
    after: int,
    limit: int | None,
) -> TimelinePage:
    """The grouped rows after position ``after``: ``limit`` of them (all when None) and the next cursor."""
    if limit is not None and (type(limit) is not int or limit < 1):
        raise InvalidInputError(f"limit must be a whole number of at least 1, not {limit!r}")
    wanted = None if kinds is None else [kinds] if isinstance(kinds, str) else list(kinds)
    read = {"tenant": tenant, "kinds": wanted, "actor": actor}
    closes = history(chat_id, tenant=tenant, kinds=["stream-closed"], after=after)
    if limit is None:
        return page(group(history(chat_id, after=after, **read), closes), None)
    window = max(WINDOW, 4 * limit)
    entries: list[TimelineEntry] = []
    while True:
        start = entries[-1].position if entries else after
        found = history(chat_id, after=start, limit=window, **read)
        entries += found
        rows = group(entries, closes)
        if len(found) < window or len(rows) > limit:  # the log ends, or the page's rows are whole
            return page(rows, limit)


def kinds_asked(kinds: object) -> list[str] | None:
    """The timeline kinds asked for (one kind, or an iterable of them); InvalidInputError otherwise."""
    if kinds is None:
        return None
    items = [kinds] if isinstance(kinds, str) else kinds
    if isinstance(items, Mapping | bytes) or not isinstance(items, Iterable):
        raise InvalidInputError("kinds must be a kind (a string) or a list of kinds")
    wanted = list(items)
    if not all(isinstance(kind, str) for kind in wanted):
        raise InvalidInputError("kinds must be a kind (a string) or a list of kinds")
    return wanted
