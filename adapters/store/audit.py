"""Writing the audit timeline out: JSON Lines, one entry per line (``chatledger audit --jsonl``)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TextIO

from chatledger.domain.timeline import TimelineEntry

__all__ = ["write_jsonl"]


def write_jsonl(entries: Iterable[TimelineEntry], out: TextIO) -> int:
    """Write timeline entries as JSON Lines (one object per line); returns how many."""
    count = 0
    for entry in entries:
        out.write(json.dumps(entry.to_json()) + "\n")  # ASCII: lone surrogates survive
        count += 1
    return count
