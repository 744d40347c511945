"""The composition root: a URL (or a parsed configuration) becomes a store's services.

URL -> ``StoreConfig`` and ``StoreKey`` -> the event log (eventsourcing
application over SQLite, PostgreSQL or memory) and its data keys -> the read
models next to it -> the projector (``open_parts``) -> the flusher, unit of
work and news hub -> the services by concern (``compose``). Nothing else in chatledger builds these parts.
``ConversationStore.open`` (the library's entry point) wraps what
``open_services`` builds; ``StoreOptions`` are its options, written once.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from eventsourcing.persistence import OperationalError

from chatledger.adapters.grants.log import GrantLog
from chatledger.adapters.grants.service import Grants
from chatledger.adapters.persistence.config import StoreConfig, parse_url, resolve_url, shard_urls
from chatledger.adapters.persistence.log import ConversationLog
from chatledger.adapters.persistence.reachable import check_postgres
from chatledger.adapters.persistence.read_models import open_read_models
from chatledger.adapters.persistence.schema import preparing
from chatledger.adapters.persistence.signed_heads import HeadSigner, sign_writes_key
from chatledger.adapters.persistence.store_key import StoreKey
from chatledger.adapters.store.chats import Chats
from chatledger.adapters.store.inbox import Inbox
from chatledger.adapters.store.operations import Operations
from chatledger.adapters.store.reads.news import News
from chatledger.adapters.store.reads.reader import Reader
from chatledger.adapters.store.services import DEFAULT_TENANT, Services, StoreParts, StoreSettings
from chatledger.adapters.store.streams.flusher import Flusher
from chatledger.adapters.store.streams.leases import process_name
from chatledger.adapters.store.streams.policy import (
    DEFAULT_BATCH_CHUNKS,
    DEFAULT_BATCH_MS,
    BatchPolicy,
)
from chatledger.adapters.store.streams.service import Streams
from chatledger.adapters.store.turns.service import Turns
from chatledger.adapters.store.unit_of_work import UnitOfWork
from chatledger.domain.dialects import dialect_for
from chatledger.domain.errors import StoreConfigurationError
from chatledger.domain.lease import DEFAULT_STREAM_LEASE_SECONDS, check_lease_seconds, renew_every
from chatledger.domain.limits import Limits
from chatledger.domain.owners import OWNER_CLAIM_LIMIT_SECONDS, check_claim_limit
from chatledger.domain.seal import SealKey
from chatledger.projections.projector import Projector

__all__ = [
    "StoreOptions",
    "build_services",
    "compose",
    "default_ai_sdk",
    "default_claim_limit",
    "default_stream_lease",
    "open_parts",
    "open_services",
]


@dataclass(frozen=True)
class StoreOptions:
    """How a store is opened (``ConversationStore.open`` documents each); None: the environment's, else the default."""

    tenant: str = DEFAULT_TENANT
    batch_chunks: int = DEFAULT_BATCH_CHUNKS
    batch_ms: float = DEFAULT_BATCH_MS
    limits: Limits | None = None
    compress: bool = True
    cipher_key: str | None = None
    auto_continue: bool = True
    ai_sdk: int | None = None
    stream_lease_seconds: float | None = None
    sign_writes: SealKey | None = None
    owner_claim_limit_seconds: float | None = None
    batch: BatchPolicy | None = None
    """A whole batching policy (its ``settle`` too), instead of ``batch_chunks`` and ``batch_ms``."""
    env: Mapping[str, str] = field(default_factory=dict)
    """More eventsourcing settings (lock timeouts, say), for tests and benchmarks."""

    def settings(self) -> StoreSettings:
        """The store's settings, each checked once (a bad AI SDK major, lease or batching is refused)."""
        ai_sdk = dialect_for(default_ai_sdk(self.ai_sdk)).major  # the version, checked once
        return StoreSettings(
            tenant=self.tenant,
            limits=self.limits or Limits(),
            batch=self.batch or BatchPolicy(self.batch_chunks, self.batch_ms / 1000),
            auto_continue=self.auto_continue,
            ai_sdk=ai_sdk,
            stream_lease_seconds=float(default_stream_lease(self.stream_lease_seconds)),
            process=process_name(),
            owner_claim_limit_seconds=default_claim_limit(self.owner_claim_limit_seconds),
        )


def open_parts(
    config: StoreConfig,
    env: dict[str, str] | None = None,
    key: StoreKey | None = None,
    sign_writes: SealKey | None = None,
) -> StoreParts:
    """Open (creating on first use) the log and read models at ``config``, encrypted with ``key``.

    SQLite: processes creating a new store at once clash ("database is
    locked", at once: SQLite does not wait in a transaction that read first);
    the loser looks again (the tables are usually there by then) and retries,
    for up to ``CREATE_WAIT_SECONDS``.
    """
    check_postgres(config)  # the server's own reason, before a connection pool waits it out
    deadline = time.monotonic() + CREATE_WAIT_SECONDS
    while True:
        try:
            return _open_parts(config, env, key, sign_writes)
        except (StoreConfigurationError, OperationalError) as error:
            locked = config.backend == "sqlite" and "database is locked" in str(error)
            if not locked or time.monotonic() > deadline:
                raise
            time.sleep(0.02)


CREATE_WAIT_SECONDS = 15.0
"""How long opening a new SQLite store retries after clashing with another process creating it."""


def _open_parts(
    config: StoreConfig,
    env: dict[str, str] | None,
    key: StoreKey | None,
    sign_writes: SealKey | None = None,
) -> StoreParts:
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
        grant_log = GrantLog(config, create=create or config.backend == "memory")
    if sign_writes is not None and config.backend in ("sqlite", "postgres"):
        recorder: Any = log.recorder
        recorder.signer = HeadSigner(
            sign_writes, config.backend, getattr(recorder.datastore, "schema", None)
        )
    return StoreParts(config, log, read_models, Projector(log, read_models), grant_log)


def compose(parts: StoreParts, settings: StoreSettings) -> Services:
    """The services of one store over its opened parts, wired to each other."""
    flusher = Flusher(settings.batch.max_delay, settings.stream_lease_seconds)
    # Read-your-writes: every decision first commits what this process's writers hold back.
    uow = UnitOfWork(parts.log, settle_writers=flusher.settle)
    streams = Streams(
        uow, flusher, tenant=settings.tenant, policy=settings.batch, limits=settings.limits,
        lease_seconds=settings.stream_lease_seconds, process=settings.process,
        read_models=parts.read_models, projector=parts.projector,
    )  # fmt: skip
    news = News(parts.log)

    def overdue_at() -> tuple[datetime, float]:  # the store's clock: tests may set it
        return streams.clock(), settings.owner_claim_limit_seconds

    def expire_followed(tenant: str, chat_id: str, stream_id: str) -> bool:
        return streams.expire_stream(
            chat_id, tenant=tenant, stream_id=stream_id, noticed_by="a follower"
        )

    reads = Reader(
        uow, parts.log, parts.read_models, parts.projector, news, tenant=settings.tenant,
        expire=expire_followed, expire_every=renew_every(settings.stream_lease_seconds),
        writes=flusher.writes, overdue=overdue_at,
    )  # fmt: skip
    chats = Chats(
        uow, settings.limits, tenant=settings.tenant, ai_sdk=settings.ai_sdk,
        auto_continue=settings.auto_continue, expire_lapsed=streams.expire_lapsed,
    )  # fmt: skip
    inbox = Inbox(
        uow, parts.read_models, parts.projector, tenant=settings.tenant,
        settle_all=flusher.settle_all, overdue=overdue_at,
    )  # fmt: skip
    operations = Operations(
        config=parts.config, log=parts.log, read_models=parts.read_models,
        projector=parts.projector, cache=uow.cache, forget_reads=reads.forget_cached,
        tenant=settings.tenant,
    )  # fmt: skip
    turns = Turns(chats, reads, streams, settings.limits, tenant=settings.tenant)
    grant_log = parts.grant_log or GrantLog(parts.config, create=False)
    grants = Grants(grant_log, chats, reads, tenant=settings.tenant)
    streams.after_close = grants.after_close  # a closed stream's calls a grant covers are approved
    operations.notify_erasures(grants.forget_conversation)  # the ledger stops naming erased chats
    inbox.grants = grants  # the inbox lists what grants approved
    operations.also_verify(grants.findings)  # verify checks the grant ledgers
    return Services(
        parts, settings, chats=chats, streams=streams, turns=turns, reads=reads, inbox=inbox,
        operations=operations, flusher=flusher, news=news, grants=grants,
    )  # fmt: skip


def build_services(
    config: StoreConfig, options: StoreOptions | None = None, key: StoreKey | None = None
) -> Services:
    """One store's services over ``config`` (one database), opened with ``options``.

    ``key`` is the store key resolved already (else it is resolved from the options).
    """
    options = options or StoreOptions()
    settings = options.settings()
    key = key or StoreKey.resolve(options.cipher_key)  # malformed: CipherKeyError, not a driver's
    env = {**({} if options.compress else {"COMPRESSOR_TOPIC": ""}), **options.env}
    signing = sign_writes_key(options.sign_writes)
    return compose(open_parts(config, env, key, signing), settings)


def open_services(url: str | None, options: StoreOptions | None = None) -> list[Services]:
    """The services of the store at ``url``: one per database (several for a sharded URL)."""
    options = options or StoreOptions()
    urls = shard_urls(url) or [resolve_url(url)]
    key = StoreKey.resolve(options.cipher_key)
    opened: list[Services] = []
    try:
        for one in urls:
            opened.append(build_services(parse_url(one), options, key))
    except BaseException:
        for services in opened:
            services.close()
        raise
    return opened


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
    major = int(raw) if raw.isdigit() else raw
    return dialect_for(major, where="CHATLEDGER_AI_SDK").major


def default_claim_limit(seconds: float | None = None) -> float:
    """The owner claim limit: ``seconds``, else ``CHATLEDGER_OWNER_CLAIM_LIMIT_SECONDS``, else 300."""
    if seconds is not None:
        return check_claim_limit(seconds)
    raw = os.environ.get("CHATLEDGER_OWNER_CLAIM_LIMIT_SECONDS", "").strip()
    if not raw:
        return OWNER_CLAIM_LIMIT_SECONDS
    try:
        value: Any = float(raw)
    except ValueError:
        value = raw
    return check_claim_limit(value, "CHATLEDGER_OWNER_CLAIM_LIMIT_SECONDS")
