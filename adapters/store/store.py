"""``ConversationStore``: chatledger's public API, a thin façade over services by concern.

The store is the library's entry point: ``ConversationStore.open(url)``
asks the composition root (``chatledger.adapters.bootstrap``) for the
services of the store at that URL and wraps them. Every chat-facing use case
is a one-line forward to the service that holds it (``ChatSurface``:
``chats``, ``streams``, ``reads``, ``inbox``); taking a turn for a transport
is ``turns``, what operators run is ``operations``. A URL that lists several
PostgreSQL databases opens a ``ShardedStore``, which answers the same surface.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from chatledger.adapters.bootstrap import StoreOptions, build_services, compose, open_services
from chatledger.adapters.store.services import DEFAULT_TENANT, Services, StoreParts
from chatledger.adapters.store.shards import ShardedStore
from chatledger.adapters.store.streams.policy import DEFAULT_BATCH_CHUNKS, DEFAULT_BATCH_MS
from chatledger.adapters.store.streams.service import IngestReport
from chatledger.adapters.store.surface import ChatSurface

if TYPE_CHECKING:
    from chatledger.adapters.persistence.config import StoreConfig
    from chatledger.adapters.persistence.log import ConversationLog
    from chatledger.adapters.store.streams.leases import Clock
    from chatledger.domain.limits import Limits
    from chatledger.projections.projector import Projector
    from chatledger.projections.read_models import ReadModelView

__all__ = ["DEFAULT_TENANT", "ConversationStore", "IngestReport", "StoreOptions", "StoreParts"]


class ConversationStore(ChatSurface):
    """An event-sourced store of AI chat conversations.

    Open one with ``ConversationStore.open(url)``; it is safe to share between
    threads. Every method takes the chat id and, optionally, a ``tenant``
    (default: the one the store was opened with).
    """

    def __init__(self, services: Services) -> None:
        """Wrap one store's services (``open()`` builds them; ``from_parts`` over parts you hold)."""
        self._services = services
        self.chats, self.streams, self.turns = services.chats, services.streams, services.turns
        self.reads, self.inbox, self.operations = (
            services.reads,
            services.inbox,
            services.operations,
        )
        settings, parts = services.settings, services.parts
        self.tenant, self.limits, self.batch = settings.tenant, settings.limits, settings.batch
        self.auto_continue, self.ai_sdk = settings.auto_continue, settings.ai_sdk
        self.stream_lease_seconds, self.process = settings.stream_lease_seconds, settings.process
        self.config: StoreConfig = parts.config
        self.log: ConversationLog = parts.log
        """The event log (an eventsourcing ``Application``): the source of truth."""
        self.read_models: ReadModelView = parts.read_models
        """The read-model tables next to the log."""
        self.projector: Projector = parts.projector
        """Keeps the read models up to date with the log."""

    @classmethod
    def open(
        cls,
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
    ) -> ConversationStore | ShardedStore:
        """Open (creating tables on first use) the store at ``url``.

        ``url`` is ``sqlite:///path/file.db`` (the default is
        ``sqlite:///./chatledger.db``), ``postgresql://user@host:5432/db``
        (``?schema=name`` to use another schema; several databases
        comma-separated for a sharded store) or ``memory://``; when it is
        None, ``CHATLEDGER_URL`` is used if set. ``cipher_key`` (from
        ``AESCipher.create_key``; default ``$CHATLEDGER_CIPHER_KEY``, else the
        file ``$CHATLEDGER_CIPHER_KEY_FILE`` names) encrypts events, snapshots
        and read models at rest; the store remembers a check value of its key
        and refuses a wrong or missing one (CipherKeyError). ``auto_continue=False``
        turns off the default continuation after approvals and tool outputs.
        ``ai_sdk`` (6 or 7; default ``CHATLEDGER_AI_SDK``, else 7) is the AI SDK
        major new conversations speak; a conversation keeps the one it started with.
        ``stream_lease_seconds`` (default ``CHATLEDGER_STREAM_LEASE_SECONDS``, else 30) is
        how long a stream this store opens stays open with nothing written to it: the
        writer renews it while alive, and once a dead writer's lease has run out any
        process closes the stream as ``interrupted`` (docs/behaviour.md §7.1).
        Chunks are committed when the oldest buffered one is ``batch_ms`` old (what a
        ``kill -9`` may lose), when ``batch_chunks`` are buffered (a cap), and after
        boundary chunks (see ``BatchPolicy``).
        """
        options = StoreOptions(
            tenant=tenant, batch_chunks=batch_chunks, batch_ms=batch_ms, limits=limits,
            compress=compress, cipher_key=cipher_key, auto_continue=auto_continue,
            ai_sdk=ai_sdk, stream_lease_seconds=stream_lease_seconds,
        )  # fmt: skip
        return cls.with_options(url, options)

    @classmethod
    def with_options(
        cls, url: str | None, options: StoreOptions
    ) -> ConversationStore | ShardedStore:
        """``open`` with its options as one value (``StoreOptions``: also a whole ``batch`` policy)."""
        return _one_or_sharded([cls(services) for services in open_services(url, options)])

    @classmethod
    def from_config(
        cls, config: StoreConfig, options: StoreOptions | None = None
    ) -> ConversationStore:
        """The store of one database, parsed already (``persistence.config.parse_url``)."""
        return cls(build_services(config, options))

    @classmethod
    def from_parts(
        cls, parts: StoreParts, options: StoreOptions | None = None
    ) -> ConversationStore:
        """A second store over parts another holds (its own flusher, caches and services)."""
        return cls(compose(parts, (options or StoreOptions()).settings()))

    @property
    def clock(self) -> Clock:
        """Now, for lease decisions (tests may replace it)."""
        return self.streams.clock

    @clock.setter
    def clock(self, clock: Clock) -> None:
        self.streams.clock = clock

    def close(self) -> None:
        """Release database connections."""
        self._services.close()

    def __enter__(self) -> ConversationStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _one_or_sharded(stores: Sequence[ConversationStore]) -> ConversationStore | ShardedStore:
    """The store of one database, or a ``ShardedStore`` over several (it answers the same surface)."""
    return stores[0] if len(stores) == 1 else ShardedStore(stores)
