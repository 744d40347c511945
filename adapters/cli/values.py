"""The command line's value types: what a flag's text means (whole numbers, times, durations).

Each raises ``argparse.ArgumentTypeError`` with what was wrong and an example of what is
meant, so argparse names the flag in its error.
"""

from __future__ import annotations

import argparse
import re
from datetime import datetime

__all__ = ["iso_time", "parse_duration", "positive_int"]

_DAY = 86400
_UNITS = {"s": 1, "min": 60, "h": 3600, "d": _DAY, "w": 7 * _DAY, "mo": 30 * _DAY, "y": 365 * _DAY}
"""Seconds per unit; no bare ``m`` (``6m`` meant minutes to the parser, months to an operator)."""


def positive_int(text: str) -> int:
    """A version number: a whole number from 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"versions start at 1, got {value}")
    return value


def iso_time(text: str) -> datetime:
    """An ISO 8601 time, as given (no offset: the store reads it as UTC)."""
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"not an ISO 8601 time: {text!r} (e.g. 2025-01-31T12:00:00Z)"
        ) from None


def parse_duration(text: str) -> float:
    """Seconds in ``45s``, ``30min``, ``2h``, ``90d``, ``2w``, ``6mo`` or ``1y`` (a month is 30 days)."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-z]+)\s*", text)
    if match is not None and match.group(2) == "m":
        number = match.group(1)
        raise argparse.ArgumentTypeError(
            f"ambiguous duration: {text!r} ('m' could be minutes or months: "
            f"write {number}min or {number}mo)"
        )
    if match is None or match.group(2) not in _UNITS or float(match.group(1)) <= 0:
        raise argparse.ArgumentTypeError(
            f"not a duration: {text!r} (a positive number and a unit: "
            "45s, 30min, 2h, 90d, 2w, 6mo, 1y)"
        )
    return float(match.group(1)) * _UNITS[match.group(2)]
