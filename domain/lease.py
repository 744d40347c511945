"""Stream leases (docs/behaviour.md §7.1): when an open stream counts as abandoned by its writer.

An open stream holds a lease kept in the log itself. Every event of the
stream renews it (its ``StreamOpened``, each ``ChunksReceived`` batch and, for
a writer that has written nothing for a while, a small ``StreamRenewed``), so
its expiry is the time of the stream's last event plus its lease length
(recorded on ``StreamOpened``; a stream opened before leases were recorded
has the lease of whoever judges it). Once that moment has passed, any
process may close the stream as ``interrupted``.

Pure: the decisions take the open stream and ``now`` and do no I/O; the
adapters (``chatledger.adapters.store.streams.leases``) load, decide and append.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from chatledger.domain.errors import StoreConfigurationError

if TYPE_CHECKING:
    from chatledger.domain.open_stream import OpenStream

__all__ = [
    "DEFAULT_STREAM_LEASE_SECONDS",
    "RENEWALS_PER_LEASE",
    "check_lease_seconds",
    "expiry_reason",
    "lease_deadline",
    "lease_expired",
    "lease_seconds_of",
    "renew_every",
]

DEFAULT_STREAM_LEASE_SECONDS = 30.0
"""How long an open stream stays open with nothing written to it (a dead writer's stream ends then)."""

RENEWALS_PER_LEASE = 3
"""An idle writer renews after a third of its lease: two renewals may be late before it expires."""


def check_lease_seconds(seconds: object, where: str = "stream_lease_seconds") -> float:
    """``seconds`` as a lease length; StoreConfigurationError (naming ``where``) unless positive and finite."""
    if isinstance(seconds, bool) or not isinstance(seconds, int | float):
        raise StoreConfigurationError(f"{where} must be a number of seconds, not {seconds!r}")
    if not (math.isfinite(seconds) and seconds > 0):
        raise StoreConfigurationError(
            f"{where} must be a positive, finite number of seconds (e.g. 30), not {seconds!r}"
        )
    return float(seconds)


def lease_seconds_of(stream: OpenStream, default_seconds: float) -> float:
    """The stream's lease length: as recorded when it opened, else ``default_seconds``."""
    return stream.lease_seconds if stream.lease_seconds is not None else default_seconds


def lease_deadline(stream: OpenStream, default_seconds: float) -> datetime | None:
    """When the stream's lease runs out (UTC), or None if no event of it gave a time."""
    if stream.renewed_at is None:
        return None
    return _utc(stream.renewed_at) + timedelta(seconds=lease_seconds_of(stream, default_seconds))


def lease_expired(stream: OpenStream | None, now: datetime, default_seconds: float) -> bool:
    """Whether ``stream`` is open and its writer let its lease run out before ``now``."""
    if stream is None:
        return False
    deadline = lease_deadline(stream, default_seconds)
    return deadline is not None and _utc(now) > deadline


def renew_every(lease_seconds: float) -> float:
    """Seconds without a commit after which a live writer records a renewal."""
    return lease_seconds / RENEWALS_PER_LEASE


def expiry_reason(
    stream: OpenStream, now: datetime, default_seconds: float, noticed_by: str
) -> str:
    """Why an expired stream is closed, for the audit: since when nothing came, and who noticed."""
    lease = lease_seconds_of(stream, default_seconds)
    since = _utc(stream.renewed_at) if stream.renewed_at is not None else None
    quiet = f" for {(_utc(now) - since).total_seconds():.1f} s" if since is not None else ""
    last = f" (last at {since.isoformat(timespec='milliseconds')})" if since is not None else ""
    return (
        f"lease expired: its writer {stream.actor} wrote nothing{quiet}{last}, "
        f"lease {lease:g} s; noticed by {noticed_by}"
    )


def _utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment
