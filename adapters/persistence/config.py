"""Store URLs (``sqlite:///path``, ``postgresql://...``, ``memory://``) turned into ``eventsourcing`` settings."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs, quote, unquote, urlsplit, urlunsplit

from chatledger.domain.errors import StoreConfigurationError

__all__ = [
    "DEFAULT_URL",
    "SYNCHRONOUS_COMMIT_MODES",
    "StoreConfig",
    "parse_url",
    "resolve_url",
    "shard_urls",
]

DEFAULT_URL = "sqlite:///./chatledger.db"
"""Where the store lives when neither an argument nor ``CHATLEDGER_URL`` says."""

SYNCHRONOUS_COMMIT_MODES = ("on", "remote_apply", "remote_write", "local", "off")
"""PostgreSQL's ``synchronous_commit`` settings, for ``?synchronous_commit=`` in a store URL.

``on`` (the default) waits for each commit's WAL to reach the disk. ``off``
returns once the server has the commit: a crash of the writing process
(``kill -9``) loses nothing committed, a crash of the PostgreSQL server or
the machine may lose the last few hundred ms of commits (never a partial one),
as SQLite's ``synchronous=NORMAL`` may on power loss."""


@dataclass(frozen=True)
class StoreConfig:
    """A parsed store URL."""

    backend: str
    """``sqlite``, ``postgres`` or ``memory``."""
    env: dict[str, str]
    """Settings for the ``eventsourcing`` application."""
    display: str
    """The URL without its password, for messages."""
    schema: str | None = None
    """PostgreSQL schema (created on first use)."""
    sqlite_path: Path | None = None
    """SQLite database file."""


def resolve_url(url: str | None) -> str:
    """``url``, else ``CHATLEDGER_URL``, else the default SQLite file."""
    return url or os.environ.get("CHATLEDGER_URL") or DEFAULT_URL


def shard_urls(url: str | None) -> list[str] | None:
    """The URL of each database of a sharded PostgreSQL URL (``.../db_a,db_b``); None for any other URL."""
    url = resolve_url(url)
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("postgresql", "postgres", "postgresql+psycopg"):
        return None
    names = unquote(parts.path.lstrip("/")).split(",")
    if len(names) < 2:
        return None
    if any(not name.strip() for name in names) or len(set(names)) != len(names):
        raise StoreConfigurationError(
            f"bad sharded PostgreSQL URL {url!r}: list each database once, comma-separated, "
            "e.g. postgresql://user@host:5432/chat_a,chat_b,chat_c"
        )
    return [urlunsplit(parts._replace(path="/" + quote(name.strip()))) for name in names]


def parse_url(url: str | None) -> StoreConfig:
    """Read a store URL, falling back to ``CHATLEDGER_URL`` and then the default SQLite file."""
    url = resolve_url(url)
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
    if scheme == "memory":
        return StoreConfig("memory", {"PERSISTENCE_MODULE": "eventsourcing.popo"}, "memory://")
    if scheme == "sqlite":
        return _sqlite(url, parts.netloc, parts.path, query)
    if scheme in ("postgresql", "postgres", "postgresql+psycopg"):
        return _postgres(url, parts, query)
    raise StoreConfigurationError(
        f"unsupported store URL {url!r}: use sqlite:///path/to/file.db, "
        "postgresql://user@host:5432/dbname or memory://"
    )


def _sqlite(url: str, netloc: str, path: str, query: dict[str, str]) -> StoreConfig:
    if query.get("synchronous", "normal").lower() not in ("off", "normal", "full", "extra"):
        raise StoreConfigurationError(
            f"bad SQLite URL {url!r}: synchronous must be off, normal, full or extra"
        )
    if netloc or not path.startswith("/") or len(path) < 2:
        raise StoreConfigurationError(
            f"bad SQLite URL {url!r}: use sqlite:///relative/file.db or sqlite:////absolute/file.db"
        )
    file = Path(unquote(path[1:])).expanduser().resolve()
    if not file.parent.is_dir():
        raise StoreConfigurationError(
            f"cannot create the SQLite store {str(file)!r}: folder {str(file.parent)!r} does not exist"
        )
    env = {
        "PERSISTENCE_MODULE": "chatledger.adapters.persistence.sqlite_recorder:SQLiteFactory",
        "SQLITE_DBNAME": str(file),
        "SQLITE_SYNCHRONOUS": query.get("synchronous", "normal").upper(),
    }
    return StoreConfig("sqlite", env, f"sqlite:///{file}", sqlite_path=file)


def _postgres(url: str, parts: object, query: dict[str, str]) -> StoreConfig:
    split = urlsplit(url)
    dbname = unquote(split.path.lstrip("/"))
    if not dbname or not split.hostname:
        raise StoreConfigurationError(
            f"bad PostgreSQL URL {url!r}: use postgresql://user[:password]@host[:port]/dbname"
        )
    schema = query.get("schema", "public")
    commit_mode = query.get("synchronous_commit", "on").lower()
    if commit_mode not in SYNCHRONOUS_COMMIT_MODES:
        raise StoreConfigurationError(
            f"bad PostgreSQL URL {url!r}: synchronous_commit must be one of "
            f"{', '.join(SYNCHRONOUS_COMMIT_MODES)}, not {commit_mode!r}"
        )
    env = {
        "PERSISTENCE_MODULE": "chatledger.adapters.persistence.postgres_recorder:PostgresFactory",
        "POSTGRES_DBNAME": dbname,
        "POSTGRES_HOST": split.hostname,
        "POSTGRES_PORT": str(split.port or 5432),
        "POSTGRES_USER": unquote(split.username or os.environ.get("USER", "postgres")),
        "POSTGRES_PASSWORD": unquote(split.password or ""),
        "POSTGRES_SCHEMA": schema,
        "POSTGRES_CONNECT_TIMEOUT": query.get("connect_timeout", "5"),
        "POSTGRES_SYNCHRONOUS_COMMIT": commit_mode,
    }
    display = (
        f"postgresql://{env['POSTGRES_USER']}@{split.hostname}:{env['POSTGRES_PORT']}/{dbname}"
    )
    if schema != "public":
        display += f"?schema={schema}"
    return StoreConfig("postgres", env, display, schema=schema)
