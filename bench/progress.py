"""Progress lines on stderr (stdout carries the results table)."""

from __future__ import annotations

import sys
import time

_START = time.perf_counter()


def log(message: str) -> None:
    """Print ``[elapsed s] message`` to stderr."""
    print(f"[{time.perf_counter() - _START:7.1f}s] {message}", file=sys.stderr, flush=True)
