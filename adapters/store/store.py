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
from typing import TYPE_CHECKING, Any, NoReturn, cast

from chatledger.adapters.bootstrap import StoreOptions, compose, open_services
from chatledger.adapters.grants.service import sharded_grants
from chatledger.adapters.store.forks import routed_fork
from chatledger.adapters.store.operations.sharded import ShardedOperations
from chatledger.adapters.store.services import DEFAULT_TENANT, Services, StoreParts
from chatledger.adapters.store.shards import ONE_PER_DATABASE, Routed, ShardedInbox, shard_index
from chatledger.adapters.store.streams.policy import DEFAULT_BATCH_CHUNKS, DEFAULT_BATCH_MS
from chatledger.adapters.store.streams.service import IngestReport
from chatledger.adapters.store.surface import ChatSurface
from chatledger.adapters.store.turns.service import Turns
from chatledger.domain.errors import InvalidInputError

if TYPE_CHECKING:
    from chatledger.adapters.grants.service import Grants
    from chatledger.adapters.persistence.config import StoreConfig
    from chatledger.adapters.persistence.log import ConversationLog
    from chatledger.adapters.store.chats import Chats
    from chatledger.adapters.store.inbox import Inbox
    from chatledger.adapters.store.operations import Operations
    from chatledger.adapters.store.reads.reader import Reader
    from chatledger.adapters.store.streams.leases import Clock
    from chatledger.adapters.store.streams.service import Streams
    from chatledger.domain.limits import Limits
    from chatledger.domain.seal import SealKey
    from chatledger.projections.projector import Projector
    from chatledger.projections.read_models import ReadModelView

__all__ = [
    "DEFAULT_TENANT",
    "ConversationStore",
    "IngestReport",
    "ShardedStore",
    "StoreOptions",
    "StoreParts",
    "open_store",
    "store_over",
]


class ConversationStore(ChatSurface):
    """An event-sourced store of AI chat conversations.

    Open one with ``ConversationStore.open(url)``; it is safe to share between
    threads. Every method takes the chat id and, optionally, a ``tenant``
    (default: the one the store was opened with).
    """

    def __init__(self, services: Services) -> None:
        """Wrap one store's services (``open()`` builds them; ``store_over`` over parts you hold)."""
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
        self.owner_claim_limit_seconds = settings.owner_claim_limit_seconds
        self.config: StoreConfig = parts.config

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
        sign_writes: SealKey | None = None,
        owner_claim_limit_seconds: float | None = None,
    ) -> ConversationStore:
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
        Chunks are committed within ``batch_ms`` of their append (what a ``kill -9``
        may lose: the commit starts when the oldest buffered one is 70% of that old),
        when ``batch_chunks`` are buffered (a cap), and after boundary chunks (see
        ``BatchPolicy``). ``sign_writes`` (a seal key; default: the
        seal key of the environment when ``CHATLEDGER_SIGN_WRITES=1``) signs each commit's
        chain heads, so that ``verify`` with the key names events appended after the newest
        seal without it (``chatledger.domain.signed_writes``). ``owner_claim_limit_seconds``
        (default ``CHATLEDGER_OWNER_CLAIM_LIMIT_SECONDS``, else 300) is how long a continuation
        request waits for its owner before ``status``, the inbox and ``/metrics`` call it overdue.
        """
        options = StoreOptions(
            tenant=tenant, batch_chunks=batch_chunks, batch_ms=batch_ms, limits=limits,
            compress=compress, cipher_key=cipher_key, auto_continue=auto_continue,
            ai_sdk=ai_sdk, stream_lease_seconds=stream_lease_seconds, sign_writes=sign_writes,
            owner_claim_limit_seconds=owner_claim_limit_seconds,
        )  # fmt: skip
        return open_store(url, options)

    @property
    def grants(self) -> Grants:
        """Standing approval grants: give, list, revoke (``chatledger.adapters.grants``)."""
        assert self._services.grants is not None  # composed with every single-database store
        return self._services.grants

    @property
    def log(self) -> ConversationLog:
        """The event log (an eventsourcing ``Application``): the source of truth."""
        return self._services.parts.log

    @property
    def read_models(self) -> ReadModelView:
        """The read-model tables next to the log."""
        return self._services.parts.read_models

    @property
    def projector(self) -> Projector:
        """Keeps the read models up to date with the log."""
        return self._services.parts.projector

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


class ShardedStore(ConversationStore):
    """A store over several PostgreSQL databases (``adapters/store/shards.py``): the same surface.

    Its services route each call about one conversation to the database that
    holds it, and merge what spans conversations; ``shards`` are the store of
    each database, in the URL's order.
    """

    def __init__(self, shards: Sequence[ConversationStore]) -> None:
        """Compose over the stores of each database (``ConversationStore.open`` with a list URL)."""
        if not shards:
            raise InvalidInputError("a sharded store needs at least one database")
        self.shards = list(shards)
        """One ``ConversationStore`` per database, in the URL's order."""
        first = self.shards[0]._services
        chats = cast("Chats", Routed(self, "chats", across={"fork": routed_fork(self)}))
        reads = cast("Reader", Routed(self, "reads"))
        expire = {"expire_streams": self._expire_streams}
        streams = cast("Streams", Routed(self, "streams", across=expire))
        settings = first.settings
        by_chat = lambda chat, tenant: self.shard(chat, tenant).operations  # noqa: E731
        super().__init__(
            Services(
                first.parts, settings, chats=chats, streams=streams, reads=reads,
                turns=Turns(chats, reads, streams, settings.limits, tenant=settings.tenant),
                inbox=cast("Inbox", ShardedInbox(self)),
                operations=cast("Operations", ShardedOperations(
                    [s.operations for s in self.shards], by_chat
                )),
                grants=sharded_grants(self.shards, chats, reads),
            )
        )  # fmt: skip

    def shard(self, chat_id: str, tenant: str | None = None) -> ConversationStore:
        """The store of the database that holds this conversation."""
        return self.shards[shard_index(tenant or self.tenant, chat_id, len(self.shards))]

    @property
    def log(self) -> NoReturn:
        """Not one: each database has its own log (``shards[i].log``)."""
        raise InvalidInputError(ONE_PER_DATABASE)

    @property
    def read_models(self) -> NoReturn:
        """Not one: each database has its own read models (``shards[i].read_models``)."""
        raise InvalidInputError(ONE_PER_DATABASE)

    @property
    def projector(self) -> NoReturn:
        """Not one: each database has its own projector (``shards[i].projector``)."""
        raise InvalidInputError(ONE_PER_DATABASE)

    @property
    def clock(self) -> Clock:
        """The shards' clock (the time leases are measured with); setting it sets every shard's."""
        return self.shards[0].clock

    @clock.setter
    def clock(self, value: Clock) -> None:
        for store in self.shards:
            store.clock = value

    def close(self) -> None:
        """Close every shard."""
        for store in self.shards:
            store.close()

    def _expire_streams(self, **options: Any) -> list[str]:
        """Close the streams whose writer's lease ran out, in every shard; the chat ids closed."""
        return [chat for s in self.shards for chat in s.streams.expire_streams(**options)]


def open_store(url: str | None, options: StoreOptions | None = None) -> ConversationStore:
    """``ConversationStore.open`` with its options as one value (``StoreOptions`` also takes a
    whole ``batch`` policy and more eventsourcing ``env`` settings, for tests and benchmarks).

    One database gives its ``ConversationStore``; a URL listing several, a ``ShardedStore``.
    """
    stores = [ConversationStore(services) for services in open_services(url, options)]
    return stores[0] if len(stores) == 1 else ShardedStore(stores)


def store_over(parts: StoreParts, options: StoreOptions | None = None) -> ConversationStore:
    """A second store over parts another holds: its own flusher, caches and services, one log."""
    return ConversationStore(compose(parts, (options or StoreOptions()).settings()))
