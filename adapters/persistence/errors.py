"""The one translation of storage failures into chatledger errors."""

from __future__ import annotations

import psycopg
from eventsourcing.persistence import PersistenceError

__all__ = ["STORAGE_ERRORS"]

STORAGE_ERRORS: tuple[type[BaseException], ...] = (PersistenceError, psycopg.Error, OSError)
"""What a database can raise when it is unreachable or failing (not a version clash):
callers turn these into ``StoreUnavailableError``."""
