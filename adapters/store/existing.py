"""Open a store only if it is already there: what a command that only reads wants.

``ConversationStore.open`` creates the SQLite file, the PostgreSQL schema and
the tables on first use. Reading from a store that is not there would then
leave an empty one behind and report that the conversation does not exist,
when the real mistake is the URL. ``open_existing`` refuses instead, naming
the store it looked for.
"""

from __future__ import annotations

from chatledger.adapters.persistence.config import StoreConfig, parse_url
from chatledger.adapters.persistence.reachable import check_postgres
from chatledger.adapters.store.store import DEFAULT_TENANT, ConversationStore
from chatledger.domain.errors import StoreConfigurationError

__all__ = ["StoreNotFoundError", "open_existing", "store_display"]

_EVENTS_TABLE = "chatledger_events"


class StoreNotFoundError(StoreConfigurationError):
    """No store exists at the URL (nothing was created)."""

    def __init__(self, display: str, why: str) -> None:
        self.display = display
        self.why = why
        super().__init__(f"no chatledger store at {display} ({why})")


def store_display(url: str | None) -> str:
    """The store a URL names (``CHATLEDGER_URL``, then the default, when None), without password."""
    return parse_url(url).display


def open_existing(url: str | None, *, tenant: str = DEFAULT_TENANT) -> ConversationStore:
    """Open the store at ``url`` if it exists; StoreNotFoundError (creating nothing) otherwise."""
    config = parse_url(url)
    if config.backend == "sqlite":
        path = config.sqlite_path
        if path is None or not path.is_file() or path.stat().st_size == 0:
            raise StoreNotFoundError(config.display, "the file does not exist")
    elif config.backend == "postgres":
        check_postgres(config)
        if not _postgres_has_store(config):
            raise StoreNotFoundError(
                config.display, f"schema {config.schema or 'public'!r} has no chatledger tables"
            )
    return ConversationStore.open(url, tenant=tenant)


def _postgres_has_store(config: StoreConfig) -> bool:
    import psycopg

    env = config.env
    with psycopg.connect(
        dbname=env["POSTGRES_DBNAME"],
        host=env["POSTGRES_HOST"],
        port=int(env["POSTGRES_PORT"]),
        user=env["POSTGRES_USER"],
        password=env["POSTGRES_PASSWORD"] or None,
        connect_timeout=int(env["POSTGRES_CONNECT_TIMEOUT"]),
    ) as connection:
        row = connection.execute(
            "SELECT to_regclass(%s)", (f'"{config.schema or "public"}".{_EVENTS_TABLE}',)
        ).fetchone()
    return row is not None and row[0] is not None
