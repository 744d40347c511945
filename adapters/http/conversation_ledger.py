"""What the conversation page shows of compaction and usage, at the version shown.

Compactions come from the conversation's state at that version (so a version
before a compaction shows none); usage from the usage ledger
(``chatledger.projections.usage``) up to that version: each entry, and their
total. The page draws compacted messages as they are, marked, with who
compacted them, when, why and the summary the model reads instead.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from chatledger.adapters.store.reads.compacted import compactions_of
from chatledger.adapters.store.reads.reader import Reader
from chatledger.domain.conversation import ConversationState
from chatledger.projections.usage import LEDGER_KINDS, UsageEntry, ledger_of, rollup

__all__ = ["ledger_fields"]


def ledger_fields(
    reads: Reader,
    tenant: str,
    chat_id: str,
    version: int,
    state: ConversationState,
    *,
    latest: int,
    live: bool,
) -> dict[str, Any]:
    """The page's ``compacted``, ``compaction_starts``, ``usage`` and ``usage_total`` at ``version``.

    While the answer streams (``live``: the page refreshes every second) the
    usage is not read (``usage_pending``): reading it takes every chunk of the log.
    Otherwise it is kept per log version (``latest``), so reloads and the slider
    read it once.
    """
    compacted: dict[str, dict[str, Any]] = {}
    starts: dict[str, dict[str, Any]] = {}
    for record in compactions_of(state):
        ids = record["messageIds"]
        if ids:
            starts[ids[0]] = record
            compacted |= dict.fromkeys(ids, record)
    if live:
        return {"compacted": compacted, "compaction_starts": starts, "usage_pending": True}
    usage = [e for e in _ledger(reads, tenant, chat_id, latest) if e.position <= version]
    total = rollup(usage, "conversation")
    return {
        "compacted": compacted,
        "compaction_starts": starts,
        "usage": usage,
        "usage_total": total[0] if total else None,
    }


@lru_cache(maxsize=64)
def _ledger(reads: Reader, tenant: str, chat_id: str, latest: int) -> tuple[UsageEntry, ...]:
    """The conversation's usage entries as of its version ``latest`` (which fixes them)."""
    history = reads.history(chat_id, tenant=tenant, kinds=LEDGER_KINDS, full=True)
    return tuple(e for e in ledger_of(tenant, chat_id, history) if e.position <= latest)
