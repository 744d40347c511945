"""PostgreSQL processes that open one store at the same time all succeed, and an existing store runs no DDL.

Processes are released together by a barrier, so the opens really overlap.
That an existing store runs no DDL is checked by opening it as a role that
may read and write its tables but not create anything (PostgreSQL refuses
even ``CREATE TABLE IF NOT EXISTS`` to it).
"""

from __future__ import annotations

import multiprocessing
import uuid
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest
from psycopg import sql

from chatledger import ConversationStore
from tests.integration.conftest import Backend

PROCESSES = 6


def _open_and_write(url: str, index: int, barrier: Any, results: Any) -> None:
    try:
        barrier.wait(timeout=60)
        with ConversationStore.open(url) as store:
            store.start_conversation(f"chat-{index}-{uuid.uuid4().hex[:6]}")
            store.pending_approvals()
        results.put((index, "ok"))
    except BaseException as error:  # reported to the test, which names it
        results.put((index, f"{type(error).__name__}: {error}"))


def open_together(url: str) -> list[str]:
    """Open the store at ``url`` from PROCESSES processes at once; each one's outcome."""
    context = multiprocessing.get_context("fork")
    barrier = context.Barrier(PROCESSES)
    results = context.Queue()
    processes = [
        context.Process(target=_open_and_write, args=(url, i, barrier, results))
        for i in range(PROCESSES)
    ]
    for process in processes:
        process.start()
    outcomes = dict(results.get(timeout=90) for _ in processes)
    for process in processes:
        process.join(timeout=30)
    return [outcomes[i] for i in range(PROCESSES)]


@pytest.mark.timeout(180)
@pytest.mark.parametrize("attempt", range(3))
def test_processes_creating_a_store_together_all_open_it(
    postgres_backend: Backend, attempt: int
) -> None:
    """A new schema, PROCESSES processes: every one opens it and writes; the store is whole."""
    assert open_together(postgres_backend.url) == ["ok"] * PROCESSES
    store = postgres_backend.open()
    assert store.operations.head() == PROCESSES
    assert store.operations.verify().ok


@pytest.fixture
def writer_role(postgres_backend: Backend) -> Iterator[str]:
    """The store created, and a URL of a role that may use its tables but run no DDL."""
    postgres_backend.open().close()
    parts = urlsplit(postgres_backend.url)
    schema = dict(p.split("=", 1) for p in parts.query.split("&"))["schema"]
    role = f"chatledger_writer_{uuid.uuid4().hex[:12]}"
    admin = urlunsplit(parts._replace(query=""))
    with psycopg.connect(admin, autocommit=True) as db:
        db.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(role)))
        for statement in (
            "GRANT USAGE ON SCHEMA {schema} TO {role}",
            "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA {schema} TO {role}",
            "GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA {schema} TO {role}",
        ):
            db.execute(
                sql.SQL(statement).format(schema=sql.Identifier(schema), role=sql.Identifier(role))
            )
    yield urlunsplit(parts._replace(netloc=f"{role}@{parts.hostname}:{parts.port or 5432}"))
    with psycopg.connect(admin, autocommit=True) as db:
        db.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(role)))
        db.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))


@pytest.mark.timeout(120)
def test_opening_an_existing_store_runs_no_ddl(writer_role: str) -> None:
    """A role that cannot create anything opens the store, from several processes at once."""
    assert open_together(writer_role) == ["ok"] * PROCESSES
    with ConversationStore.open(writer_role) as store:
        assert store.operations.head() == PROCESSES
        assert store.operations.verify().ok
