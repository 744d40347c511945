"""What both recorders do around an insert: the snapshots it writes, the hooks called after it.

A snapshot is taken every so often (``chatledger.domain.snapshot_cadence``).
Writing it (and dropping the older one) inside the transaction that records
the events saves a commit, and a failed save can never leave a snapshot ahead
of the log.

``insert_events(..., also=f)`` calls ``f(cursor)`` in the same transaction
after the inserts: erasure writes its ``ConversationErased`` event and
purges everything else of the conversation in one commit.

The recorders and their factories: ``sqlite_recorder`` and ``postgres_recorder``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from typing import Any

from eventsourcing.persistence import StoredEvent

__all__ = ["call_inserted", "snapshots_of"]


def snapshots_of(kwargs: dict[str, Any]) -> list[StoredEvent]:
    """The snapshots an insert writes: ``snapshot=`` (one) and ``snapshots=`` (a group commit's)."""
    one: StoredEvent | None = kwargs.get("snapshot")
    return [*([one] if one is not None else []), *kwargs.get("snapshots", ())]


def call_inserted(
    hooks: list[Callable[[Sequence[Any], Sequence[int]], None]],
    stored_events: Sequence[Any],
    ids: Sequence[int] | None,
) -> None:
    """Call the ``on_inserted`` hooks; the events are committed whatever they do."""
    for hook in hooks:
        with contextlib.suppress(Exception):
            hook(stored_events, ids or ())
