"""Creating the PostgreSQL schema a store lives in (eventsourcing needs it to exist)."""

from __future__ import annotations

import psycopg
from psycopg import sql

from chatledger.adapters.persistence.config import StoreConfig
from chatledger.domain.errors import StoreConfigurationError

__all__ = ["ensure_schema"]


def ensure_schema(config: StoreConfig) -> None:
    """Create the store's PostgreSQL schema on first use; nothing for other backends or ``public``."""
    if config.backend != "postgres" or not config.schema or config.schema == "public":
        return
    env = config.env
    try:
        with psycopg.connect(
            dbname=env["POSTGRES_DBNAME"],
            host=env["POSTGRES_HOST"],
            port=int(env["POSTGRES_PORT"]),
            user=env["POSTGRES_USER"],
            password=env["POSTGRES_PASSWORD"] or None,
            connect_timeout=int(env["POSTGRES_CONNECT_TIMEOUT"]),
            autocommit=True,
        ) as connection:
            connection.execute(
                sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(config.schema))
            )
    except psycopg.Error as error:
        raise StoreConfigurationError(
            f"cannot open the store at {config.display}: {error}"
        ) from error
