"""``checkpointer_for``: a durable LangGraph checkpointer next to a chatledger store.

A paused LangGraph answer resumes from its checkpoint in whichever process
continues the conversation, so every process needs the same durable
checkpointer: LangGraph's own ``SqliteSaver`` (``langgraph-checkpoint-sqlite``)
or ``PostgresSaver`` (``langgraph-checkpoint-postgres``), made from the store's
URL:

* ``sqlite:///path/chat.db``: a SQLite file of its own beside the store,
  ``path/chat.db.langgraph`` (the store's file stays chatledger's alone: two
  writers on one SQLite file would wait on each other's locks);
* ``postgresql://...?schema=S``: LangGraph's tables in the same database and
  schema (created if missing), through a small connection pool;
* ``memory://``: ``InMemorySaver``, which resumes in this process only.

The SQLite and PostgreSQL savers hold their connection (a pool on
PostgreSQL) as ``saver.conn``: a process that makes one for a while only
closes it with ``saver.conn.close()``; one kept for the process's life needs
nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from chatledger.adapters.persistence.config import parse_url

__all__ = ["checkpointer_for", "sqlite_checkpoint_path"]


def sqlite_checkpoint_path(store_path: Path) -> Path:
    """Where the checkpoints of a SQLite store at ``store_path`` are kept."""
    return store_path.with_name(store_path.name + ".langgraph")


def checkpointer_for(url: str) -> Any:
    """A LangGraph checkpointer for the store at ``url`` (see the module docstring), set up."""
    config = parse_url(url)
    if config.backend == "sqlite":
        import sqlite3

        from langgraph.checkpoint.sqlite import SqliteSaver

        assert config.sqlite_path is not None
        path = sqlite_checkpoint_path(config.sqlite_path)
        # The turn runner advances a responder in worker threads: the saver locks around it.
        connection = sqlite3.connect(path, check_same_thread=False, timeout=30)
        connection.execute("PRAGMA journal_mode=WAL")
        saver = SqliteSaver(connection)
        saver.setup()
        return saver
    if config.backend == "postgres":
        return _postgres_saver(url, config.schema or "public")
    from langgraph.checkpoint.memory import InMemorySaver

    return InMemorySaver()


def _postgres_saver(url: str, schema: str) -> Any:
    import psycopg
    from langgraph.checkpoint.postgres import PostgresSaver
    from psycopg import sql
    from psycopg.rows import dict_row
    from psycopg_pool import ConnectionPool

    conninfo = urlunsplit(urlsplit(url)._replace(query=""))
    with psycopg.connect(conninfo, autocommit=True) as connection:
        connection.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema)))
    pool: ConnectionPool[Any] = ConnectionPool(
        conninfo,
        min_size=1,
        max_size=4,
        kwargs={
            "autocommit": True,
            "prepare_threshold": 0,
            "row_factory": dict_row,
            "options": f"-c search_path={schema}",
        },
        open=True,
    )
    saver = PostgresSaver(pool)
    saver.setup()
    return saver
