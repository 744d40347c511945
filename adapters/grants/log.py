"""Where grant ledgers are kept: an ``eventsourcing`` application next to the conversations' log.

Its own events table in the same database (``chatledger_grants_events``;
in memory for ``memory://``), written with eventsourcing's stock recorders:
a ledger is small and changes when a person gives or revokes a grant, or a
grant answers a call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from uuid import UUID

from eventsourcing.application import Application
from eventsourcing.persistence import ApplicationRecorder
from eventsourcing.sqlite import SQLiteApplicationRecorder, SQLiteFactory

from chatledger.adapters.persistence.schema import GRANTS_TABLE

if TYPE_CHECKING:
    from chatledger.adapters.persistence.config import StoreConfig

__all__ = ["GrantLog", "GrantSQLiteFactory"]

TABLE = GRANTS_TABLE
"""The ledgers' events table (PostgreSQL names it after the application too)."""

_POSTGRES_KEYS = (
    "POSTGRES_DBNAME", "POSTGRES_HOST", "POSTGRES_PORT", "POSTGRES_USER", "POSTGRES_PASSWORD",
    "POSTGRES_SCHEMA", "POSTGRES_CONNECT_TIMEOUT",
)  # fmt: skip


class GrantSQLiteFactory(SQLiteFactory):
    """eventsourcing's SQLite factory, with the ledgers in a table of their own.

    The stock factory names every application's table ``stored_events``:
    the conversations' table in a chatledger SQLite file.
    """

    def application_recorder(self) -> ApplicationRecorder:
        """The recorder of ``TABLE`` (created if absent)."""
        recorder = SQLiteApplicationRecorder(datastore=self.datastore, events_table_name=TABLE)
        if self.env_create_table():
            recorder.create_table()
        return recorder


class GrantLog(Application[UUID]):
    """The event store of the tenants' grant ledgers."""

    name = "chatledger_grants"

    def __init__(self, config: StoreConfig, *, create: bool) -> None:
        """The ledgers of the store at ``config``; ``create``: make their table (a new store)."""
        env = {"CREATE_TABLE": "y" if create else "n"}
        if config.backend == "sqlite":
            env |= {
                "PERSISTENCE_MODULE": "chatledger.adapters.grants.log:GrantSQLiteFactory",
                "SQLITE_DBNAME": config.env["SQLITE_DBNAME"],
                "SQLITE_LOCK_TIMEOUT": "30",
            }
        elif config.backend == "postgres":
            env |= {key: config.env[key] for key in _POSTGRES_KEYS if key in config.env}
            env |= {"PERSISTENCE_MODULE": "eventsourcing.postgres", "POSTGRES_POOL_SIZE": "2"}
        else:
            env |= {"PERSISTENCE_MODULE": "eventsourcing.popo"}
        super().__init__(env=env)
