"""Why a PostgreSQL store cannot be reached, said plainly before a connection pool waits it out.

A connection pool that cannot connect retries until its timeout and then
says only that it "couldn't get a connection". One direct connection first
gives the server's own reason: refused (nothing listening), no such database,
no such role, a failed password; each with what to do about it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from chatledger.domain.errors import StoreConfigurationError

if TYPE_CHECKING:
    from chatledger.adapters.persistence.config import StoreConfig

__all__ = ["check_postgres", "postgres_has_store", "postgres_problem"]

_EVENTS_TABLE = "chatledger_events"


def check_postgres(config: StoreConfig) -> None:
    """Raise StoreConfigurationError naming the cause when the PostgreSQL server cannot be used."""
    if config.backend == "postgres":
        _events_table(config)


def postgres_has_store(config: StoreConfig) -> bool:
    """Whether the PostgreSQL schema holds chatledger's tables (StoreConfigurationError if unreachable)."""
    return _events_table(config) is not None


def _events_table(config: StoreConfig) -> str | None:
    import psycopg

    env = config.env
    try:
        with psycopg.connect(
            dbname=env["POSTGRES_DBNAME"],
            host=env["POSTGRES_HOST"],
            port=int(env["POSTGRES_PORT"]),
            user=env["POSTGRES_USER"],
            password=env["POSTGRES_PASSWORD"] or None,
            connect_timeout=int(env["POSTGRES_CONNECT_TIMEOUT"]),
        ) as connection:
            name = f'"{config.schema or "public"}".{_EVENTS_TABLE}'
            row = connection.execute("SELECT to_regclass(%s)::text", (name,)).fetchone()
    except psycopg.Error as error:
        raise StoreConfigurationError(
            f"cannot open the store at {config.display}: {postgres_problem(config, str(error))}"
        ) from error
    return None if row is None else row[0]


def postgres_problem(config: StoreConfig, text: str) -> str:
    """The cause of a failed connection, from the driver's message, with the fix."""
    env = config.env
    host, port = env["POSTGRES_HOST"], env["POSTGRES_PORT"]
    database, user = env["POSTGRES_DBNAME"], env["POSTGRES_USER"]
    lowered = text.lower()
    if "database" in lowered and "does not exist" in lowered:
        return (
            f"database {database!r} does not exist on {host}:{port} "
            f"(create it, e.g. createdb {database}, or name another in the URL)"
        )
    if "role" in lowered and "does not exist" in lowered:
        return f"user {user!r} does not exist on {host}:{port} (name another user in the URL)"
    if "password authentication failed" in lowered or "no password supplied" in lowered:
        return (
            f"authentication failed for user {user!r} "
            "(check the password in the URL: postgresql://user:password@host/db)"
        )
    if "timeout" in lowered or "timed out" in lowered:
        return f"no answer from {host}:{port} within {env['POSTGRES_CONNECT_TIMEOUT']} s"
    if "refused" in lowered or "is the server running" in lowered:
        return (
            f"connection refused by {host}:{port} "
            "(is PostgreSQL running there and accepting TCP connections?)"
        )
    last = text.strip().splitlines()[-1] if text.strip() else "unknown error"
    return last.strip()
