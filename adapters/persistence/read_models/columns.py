"""How values are written into the read models' columns: JSON, display text, times, timeline kinds."""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from chatledger.domain.errors import StoredDataError
from chatledger.domain.timeline import KINDS

__all__ = [
    "KIND_NUMBERS",
    "from_micros",
    "iso_time",
    "json_text",
    "list_time",
    "micros",
    "parse_time",
    "readable",
    "safe_text",
]

T = TypeVar("T")

_UNSAFE_TEXT = re.compile("[\x00\ud800-\udfff]")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
KIND_NUMBERS = {kind: number for number, kind in enumerate(KINDS)}
"""A timeline kind as stored: its index in ``KINDS`` (new kinds are only ever appended)."""


def json_text(value: Any) -> str:
    """``value`` as compact JSON text."""
    # ASCII-escaped: lone surrogates (which the log can hold) survive as \\udXXX escapes.
    return json.dumps(value, separators=(",", ":"))


def safe_text(value: str) -> str:
    """Display text (a summary, an error) safe for every SQL text column: NUL and lone surrogates escaped."""
    if _UNSAFE_TEXT.search(value) is None:
        return value
    return _UNSAFE_TEXT.sub(lambda found: f"\\u{ord(found.group()):04x}", value)


def iso_time(moment: datetime) -> str:
    """A fixed-width ISO time, so that text order is time order."""
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%f+00:00")


def list_time(moment: datetime) -> str:
    """A fixed-width UTC ISO time, so that text order is time order (any time zone given)."""
    return iso_time(moment.astimezone(UTC))


def parse_time(text: str | None) -> datetime | None:
    """Undo ``iso_time`` (None stays None)."""
    return datetime.fromisoformat(text) if text else None


def micros(moment: datetime) -> int:
    """A time as stored in the timeline: microseconds since 1970 (UTC), exactly."""
    return (moment - _EPOCH) // timedelta(microseconds=1)


def from_micros(value: int) -> datetime:
    """Undo ``micros``."""
    return _EPOCH + timedelta(microseconds=value)


def readable(what: str, read: Callable[[], T]) -> T:
    """One row read back; a row that does not decode is StoredDataError (the read models are derived)."""
    try:
        return read()
    except StoredDataError:
        raise
    except (
        ValueError,
        TypeError,
        KeyError,
        IndexError,
        zlib.error,
    ) as error:  # JSON, time, kind, deflate
        raise StoredDataError(
            f"a row of the {what} cannot be read ({type(error).__name__}: {str(error)[:200]}); "
            "'chatledger rebuild' makes the read models again from the log"
        ) from error
