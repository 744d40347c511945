"""Open a store only if it is already there: what a command that only reads wants.

``ConversationStore.open`` creates the SQLite file, the PostgreSQL schema and
the tables on first use. Reading from a store that is not there would then
leave an empty one behind and report that the conversation does not exist,
when the real mistake is the URL. ``open_existing`` refuses instead, naming
the store it looked for.
"""

from __future__ import annotations

from chatledger.adapters.persistence.config import parse_url, resolve_url, shard_urls
from chatledger.adapters.persistence.reachable import postgres_has_store
from chatledger.adapters.store.store import DEFAULT_TENANT, ConversationStore
from chatledger.domain.errors import StoreConfigurationError

__all__ = ["StoreNotFoundError", "open_existing", "store_display"]


class StoreNotFoundError(StoreConfigurationError):
    """No store exists at the URL (nothing was created)."""

    def __init__(self, display: str, why: str) -> None:
        self.display = display
        self.why = why
        super().__init__(f"no chatledger store at {display} ({why})")


def store_display(url: str | None) -> str:
    """The store a URL names (``CHATLEDGER_URL``, then the default, when None), without password."""
    return parse_url(url).display


def open_existing(
    url: str | None, *, tenant: str = DEFAULT_TENANT, cipher_key: str | None = None
) -> ConversationStore:
    """Open the store at ``url`` if it exists; StoreNotFoundError (creating nothing) otherwise."""
    for one in shard_urls(url) or [resolve_url(url)]:  # a sharded URL: every database
        config = parse_url(one)
        if config.backend == "sqlite":
            path = config.sqlite_path
            if path is None or not path.is_file() or path.stat().st_size == 0:
                raise StoreNotFoundError(config.display, "the file does not exist")
        elif config.backend == "postgres" and not postgres_has_store(config):
            raise StoreNotFoundError(
                config.display, f"schema {config.schema or 'public'!r} has no chatledger tables"
            )
    return ConversationStore.open(url, tenant=tenant, cipher_key=cipher_key)
