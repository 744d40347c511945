"""The root of chatledger's errors and its broad branches: refused input, unreadable data, no store."""

from __future__ import annotations

__all__ = [
    "ChatLedgerError",
    "CipherKeyError",
    "InvalidInputError",
    "StoreConfigurationError",
    "StoreUnavailableError",
    "StoredDataError",
]


class ChatLedgerError(Exception):
    """Root of every error chatledger raises on purpose."""


class InvalidInputError(ChatLedgerError):
    """An input (chunk, message, tool output, id, metadata) was refused; nothing stored changed."""


class StoredDataError(ChatLedgerError):
    """Stored data cannot be read back: a corrupt or hand-edited event or snapshot, or an unknown encoding.

    Nothing was changed. ``chatledger verify`` names what is affected; the
    events are the truth, so restore the database from a backup.
    """


class StoreUnavailableError(ChatLedgerError):
    """The database could not be reached or refused the write; nothing was recorded. Retry later."""


class StoreConfigurationError(ChatLedgerError):
    """The store cannot be opened as configured (bad URL, unreachable database)."""


class CipherKeyError(StoreConfigurationError):
    """The cipher key given (or its absence) does not open this store; nothing was read or written."""
