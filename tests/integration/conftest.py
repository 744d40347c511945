"""Real storage backends for the store-level tests: memory://, a SQLite file, PostgreSQL.

Every test that asks for ``store`` (or ``backend``) runs once per backend, on a
fresh database: a new ``memory://`` store, a new SQLite file in ``tmp_path``, or
a new PostgreSQL schema (dropped at teardown). PostgreSQL comes from
``CHATLEDGER_TEST_POSTGRES_URL`` (default ``postgresql://root@127.0.0.1:5432/test``).
When that server is unreachable the PostgreSQL tests fail, saying how to start
it; they are skipped only when ``CHATLEDGER_TEST_SKIP_POSTGRES=1`` is set.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import psycopg
import pytest
from psycopg import sql

from chatledger import ConversationStore

POSTGRES_URL_ENV = "CHATLEDGER_TEST_POSTGRES_URL"
SKIP_POSTGRES_ENV = "CHATLEDGER_TEST_SKIP_POSTGRES"
DEFAULT_POSTGRES_URL = "postgresql://root@127.0.0.1:5432/test"

HOW_TO_START_POSTGRES = (
    "Start the local server with\n"
    "    pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start\n"
    f"or point {POSTGRES_URL_ENV} at a reachable server "
    "(postgresql://user@host:port/dbname; the user must be able to create schemas).\n"
    f"To run without PostgreSQL on purpose, set {SKIP_POSTGRES_ENV}=1."
)

EXAMPLES = {"memory": 100, "sqlite": 50, "postgres": 25}
"""Hypothesis examples per backend: moderate on PostgreSQL, where each commit is a round trip."""

_MEMORY = pytest.param("memory", id="memory")
_SQLITE = pytest.param("sqlite", id="sqlite")
_POSTGRES = pytest.param("postgres", id="postgres", marks=pytest.mark.postgres)


def _postgres_base() -> Any:
    return urlsplit(os.environ.get(POSTGRES_URL_ENV) or DEFAULT_POSTGRES_URL)


def _postgres_conninfo() -> str:
    """The server URL for psycopg (chatledger's ``schema`` query parameter removed)."""
    return urlunsplit(_postgres_base()._replace(query=""))


def _postgres_store_url(schema: str) -> str:
    base = _postgres_base()
    query = dict(parse_qsl(base.query))
    query["schema"] = schema
    return urlunsplit(base._replace(query=urlencode(query)))


@pytest.fixture(scope="session")
def postgres_server() -> str:
    """The PostgreSQL conninfo, once checked reachable (fails loudly, skips only on request)."""
    if os.environ.get(SKIP_POSTGRES_ENV) == "1":
        pytest.skip(f"{SKIP_POSTGRES_ENV}=1: PostgreSQL tests skipped on request")
    conninfo = _postgres_conninfo()
    problem = None
    try:
        with psycopg.connect(conninfo, connect_timeout=5, autocommit=True) as connection:
            connection.execute("SELECT 1")
    except psycopg.Error as error:
        problem = str(error).strip()
    if problem is not None:
        pytest.fail(
            f"PostgreSQL is not reachable at {conninfo} ({POSTGRES_URL_ENV}): {problem}\n"
            f"{HOW_TO_START_POSTGRES}",
            pytrace=False,
        )
    return conninfo


@dataclass
class Backend:
    """One fresh database on one backend, and the stores opened on it."""

    name: str
    """``memory``, ``sqlite`` or ``postgres``."""
    url: str
    """The store URL of this database."""
    stores: list[ConversationStore] = field(default_factory=list)

    @property
    def durable(self) -> bool:
        """Whether a second store opened on ``url`` sees the same data (not memory://)."""
        return self.name != "memory"

    def open(self, **options: Any) -> ConversationStore:
        """Open a store on this database (memory://: a new, separate one); closed at teardown."""
        store = ConversationStore.open(self.url, **options)
        self.stores.append(store)
        return store

    def other_store(self, store: ConversationStore, **options: Any) -> ConversationStore:
        """A second store on the same database as ``store`` (memory://: ``store`` itself)."""
        return self.open(**options) if self.durable else store

    def close_all(self) -> None:
        """Close every store opened here (a test may have closed some already)."""
        for store in self.stores:
            with contextlib.suppress(Exception):  # closed or broken by the test: go on
                store.close()


def _backend(name: str, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    if name == "memory":
        backend = Backend(name, "memory://")
    elif name == "sqlite":
        backend = Backend(name, f"sqlite:///{tmp_path / 'chatledger.db'}")
    else:
        request.getfixturevalue("postgres_server")  # reachable, or a clear failure
        backend = Backend(name, _postgres_store_url(f"t_{uuid.uuid4().hex}"))
    try:
        yield backend
    finally:
        backend.close_all()
        if name == "postgres":
            drop_schema(backend.url)


def drop_schema(url: str) -> None:
    """Drop the PostgreSQL schema a store URL names (``?schema=``), with everything in it."""
    schema = dict(parse_qsl(urlsplit(url).query))["schema"]
    with psycopg.connect(_postgres_conninfo(), connect_timeout=5, autocommit=True) as connection:
        connection.execute(
            sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema))
        )


@pytest.fixture(params=[_MEMORY, _SQLITE, _POSTGRES])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    """A fresh database on each backend in turn."""
    yield from _backend(request.param, request, tmp_path)


@pytest.fixture(params=[_SQLITE, _POSTGRES])
def durable_backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    """A fresh database on each backend that outlives its stores (SQLite file, PostgreSQL)."""
    yield from _backend(request.param, request, tmp_path)


@pytest.fixture
def store(backend: Backend) -> ConversationStore:
    """A store with default settings on a fresh database of each backend."""
    return backend.open()


@pytest.fixture(params=[_POSTGRES])
def postgres_backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    """A fresh PostgreSQL schema (for what only PostgreSQL does, e.g. LISTEN/NOTIFY)."""
    yield from _backend(request.param, request, tmp_path)


@pytest.fixture
def sqlite_store(tmp_path: Path) -> Iterator[ConversationStore]:
    """A store on a fresh SQLite file (for tests that need one real file, not every backend)."""
    store = ConversationStore.open(f"sqlite:///{tmp_path / 'chatledger.db'}")
    yield store
    store.close()


@pytest.fixture
def anyio_backend() -> str:
    """The async tests (``pytest.mark.anyio``) run on asyncio."""
    return "asyncio"
