"""The text of packed read-model values (compressed messages, timeline entries), for tests reading raw rows."""

from __future__ import annotations

import zlib
from typing import Any

from chatledger.adapters.persistence.keys import PLAIN
from chatledger.adapters.persistence.packing import unpack
from chatledger.domain.errors import StoredDataError


def unpacked(value: Any) -> str | None:
    """The text a packed value holds (a store without a key), or None for any other value."""
    if not isinstance(value, bytes | memoryview) or not value:
        return None
    try:
        return unpack(PLAIN, bytes(value))
    except (StoredDataError, UnicodeDecodeError, ValueError, zlib.error):
        return None
