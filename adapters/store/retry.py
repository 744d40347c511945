"""How writers that lost an optimistic-concurrency race try again."""

from __future__ import annotations

import random
import time

__all__ = ["RETRIES", "back_off"]

RETRIES = 30
"""Attempts before a write gives up with ConcurrentWriteError."""


def back_off(attempt: int) -> None:
    """Sleep a little, randomly, longer each attempt: concurrent writers of one conversation take turns."""
    time.sleep(random.uniform(0, min(0.002 * 2**attempt, 0.1)))
