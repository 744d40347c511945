"""The composition root: a URL (or a parsed configuration) becomes a working ``ConversationStore``.

URL -> ``StoreConfig`` and ``StoreKey`` -> the event log (eventsourcing
application over SQLite, PostgreSQL or memory) and its data keys -> the
read models next to it -> the projector
-> the flusher, caches and unit of work -> the store. Nothing else in
chatledger builds these parts; ``ConversationStore.open`` calls
``open_store``.
"""

from __future__ import annotations

import os

from chatledger.adapters.persistence.config import StoreConfig, parse_url, resolve_url, shard_urls
from chatledger.adapters.persistence.log import ConversationLog
from chatledger.adapters.persistence.reachable import check_postgres
from chatledger.adapters.persistence.read_models import open_read_models
from chatledger.adapters.persistence.schema import preparing
from chatledger.adapters.persistence.store_key import StoreKey
from chatledger.adapters.store.shards import ShardedStore
from chatledger.adapters.store.store import DEFAULT_TENANT, ConversationStore, StoreParts
from chatledger.adapters.store.streams.policy import (
    DEFAULT_BATCH_CHUNKS,
    DEFAULT_BATCH_MS,
    BatchPolicy,
)
from chatledger.domain.errors import InvalidAiSdkVersionError, StoreConfigurationError
from chatledger.domain.lease import DEFAULT_STREAM_LEASE_SECONDS, check_lease_seconds
from chatledger.domain.limits import Limits
from chatledger.projections.projector import Projector

__all__ = ["StoreParts", "build_store", "default_ai_sdk", "default_stream_lease", "open_store"]


def open_parts(
    config: StoreConfig, env: dict[str, str] | None = None, key: StoreKey | None = None
) -> StoreParts:
    """Open (creating on first use) the log and read models at ``config``, encrypted with ``key``."""
    check_postgres(config)  # the server's own reason, before a connection pool waits it out
    with preparing(config) as create:  # on PostgreSQL: DDL only for a new store, under a lock
        settings = {**(env or {}), "CREATE_TABLE": "y" if create else "n"}
        try:
            # The log makes its data keys from the key before the key check, which may
            # decode the first event (nothing is written before the check passes).
            log = ConversationLog(config, settings, key)
        except Exception as error:  # database driver errors vary by backend
            raise StoreConfigurationError(
                f"cannot open the store at {config.display}: {error}"
            ) from error
        read_models = open_read_models(log, config.backend, key, create=create)
    return StoreParts(config, log, read_models, Projector(log, read_models))


def build_store(
    config: StoreConfig,
    *,
    tenant: str = DEFAULT_TENANT,
    limits: Limits | None = None,
    batch: BatchPolicy | None = None,
    env: dict[str, str] | None = None,
    auto_continue: bool = True,
    ai_sdk: int = 7,
    stream_lease_seconds: float = DEFAULT_STREAM_LEASE_SECONDS,
    key: StoreKey | None = None,
) -> ConversationStore:
    """A store over ``config``, encrypted with ``key``; ``env`` adds eventsourcing settings (e.g. lock timeouts)."""
    return ConversationStore(
        open_parts(config, env, key),
        tenant=tenant,
        limits=limits or Limits(),
        batch=batch or BatchPolicy(),
        auto_continue=auto_continue,
        ai_sdk=ai_sdk,
        stream_lease_seconds=stream_lease_seconds,
    )


def default_stream_lease(seconds: float | None = None) -> float:
    """The stream lease: ``seconds``, else ``CHATLEDGER_STREAM_LEASE_SECONDS``, else 30."""
    if seconds is not None:
        return check_lease_seconds(seconds)
    raw = os.environ.get("CHATLEDGER_STREAM_LEASE_SECONDS", "").strip()
    if not raw:
        return DEFAULT_STREAM_LEASE_SECONDS
    try:
        value = float(raw)
    except ValueError:
        value = None
    return check_lease_seconds(
        value if value is not None else raw, "CHATLEDGER_STREAM_LEASE_SECONDS"
    )


def default_ai_sdk(ai_sdk: int | None = None) -> int:
    """The AI SDK major for new conversations: ``ai_sdk``, else ``CHATLEDGER_AI_SDK``, else 7."""
    if ai_sdk is not None:
        return ai_sdk
    raw = os.environ.get("CHATLEDGER_AI_SDK", "").strip()
    if not raw:
        return 7
    if raw not in ("6", "7"):
        raise InvalidAiSdkVersionError(raw, where="CHATLEDGER_AI_SDK")
    return int(raw)


def open_store(
    url: str | None = None,
    *,
    tenant: str = DEFAULT_TENANT,
    batch_chunks: int = DEFAULT_BATCH_CHUNKS,
    batch_ms: float = DEFAULT_BATCH_MS,
    limits: Limits | None = None,
    compress: bool = True,
    cipher_key: str | None = None,
    auto_continue: bool = True,
    ai_sdk: int | None = None,
    stream_lease_seconds: float | None = None,
) -> ConversationStore:
    """What ``ConversationStore.open`` does; see there."""
    key = StoreKey.resolve(cipher_key)  # a malformed key: CipherKeyError, not a driver error
    env: dict[str, str] = {}
    if not compress:
        env["COMPRESSOR_TOPIC"] = ""
    urls = shard_urls(url) or [resolve_url(url)]
    stores: list[ConversationStore] = []
    try:
        for one in urls:
            stores.append(
                build_store(
                    parse_url(one),
                    tenant=tenant,
                    limits=limits,
                    batch=BatchPolicy(batch_chunks, batch_ms / 1000),
                    env=env,
                    auto_continue=auto_continue,
                    ai_sdk=default_ai_sdk(ai_sdk),
                    stream_lease_seconds=default_stream_lease(stream_lease_seconds),
                    key=key,
                )
            )
    except BaseException:
        for opened in stores:
            opened.close()
        raise
    return stores[0] if len(urls) == 1 else ShardedStore(stores)
