"""Fresh, throw-away databases for one measurement: a temp SQLite file or a new PostgreSQL schema.

Every measurement gets its own database and drops it afterwards, so runs never
see each other's rows. PostgreSQL schemas are named ``bench_<pid>_<n>``; one left
behind by a killed run can be dropped by hand (see bench/README.md).
"""

from __future__ import annotations

import itertools
import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import psycopg

Backend = Literal["sqlite", "postgres"]
BACKENDS: tuple[Backend, ...] = ("sqlite", "postgres")
DEFAULT_POSTGRES_URL = os.environ.get(
    "CHATLEDGER_BENCH_POSTGRES_URL", "postgresql://root@127.0.0.1:5432/test"
)

_counter = itertools.count()


@dataclass(frozen=True)
class FreshDb:
    """Where one measurement writes: the store URL plus what the raw and size code need."""

    backend: Backend
    url: str
    """URL for ``ConversationStore.open``."""
    sqlite_path: Path | None = None
    postgres_url: str | None = None
    """Plain PostgreSQL URL (no ``schema`` query) for psycopg."""
    schema: str | None = None


def sqlite_url(path: Path) -> str:
    """``sqlite:///`` + absolute path (four slashes in all: the SQLAlchemy spelling)."""
    return "sqlite:///" + str(path.resolve())


def with_schema(url: str, schema: str) -> str:
    """Add ``schema=NAME`` to a PostgreSQL URL's query string."""
    parts = urlsplit(url)
    query = [*parse_qsl(parts.query), ("schema", schema)]
    return urlunsplit(parts._replace(query=urlencode(query)))


@contextmanager
def sqlite_db(name: str = "store") -> Iterator[FreshDb]:
    """A new, empty SQLite file in a temp directory removed on exit."""
    with tempfile.TemporaryDirectory(prefix="chatledger-bench-") as tmp:
        path = Path(tmp) / f"{name}.db"
        yield FreshDb("sqlite", sqlite_url(path), sqlite_path=path)


@contextmanager
def postgres_db(base_url: str = DEFAULT_POSTGRES_URL) -> Iterator[FreshDb]:
    """A new, empty schema ``bench_<pid>_<n>``, dropped (with everything in it) on exit."""
    schema = f"bench_{os.getpid()}_{next(_counter)}"
    with psycopg.connect(base_url, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    try:
        yield FreshDb(
            "postgres", with_schema(base_url, schema), postgres_url=base_url, schema=schema
        )
    finally:
        _drop_schema(base_url, schema)


def _drop_schema(base_url: str, schema: str) -> None:
    try:
        with psycopg.connect(base_url, autocommit=True) as conn:
            # A store that leaked a connection holding locks would make DROP wait forever.
            conn.execute("SET lock_timeout = '15s'")
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    except psycopg.Error as exc:
        print(f"warning: could not drop schema {schema}: {exc}", file=sys.stderr)


@contextmanager
def fresh_db(
    backend: Backend, postgres_url: str = DEFAULT_POSTGRES_URL, name: str = "store"
) -> Iterator[FreshDb]:
    """A fresh, empty database of the given backend, removed on exit."""
    if backend == "sqlite":
        with sqlite_db(name) as db:
            yield db
    else:
        with postgres_db(postgres_url) as db:
            yield db


def postgres_available(url: str = DEFAULT_POSTGRES_URL) -> str | None:
    """None when PostgreSQL answers at ``url``, else the reason it does not."""
    try:
        with psycopg.connect(url, connect_timeout=5) as conn:
            conn.execute("SELECT 1")
    except psycopg.Error as exc:
        return str(exc).strip()
    return None
