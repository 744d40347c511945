"""A pytest plugin that runs the OpenAI Agents SDK's own tests on ``ChatLedgerSession``.

Loaded by ``run_sdk_tests.py`` (``-p chatledger_sdk_plugin``) into a pytest
run of the SDK's ``tests/``. Before the tests are collected it puts
chatledger-backed classes in the place of the SDK's ``SQLiteSession`` and of
its test helper sessions (``SimpleListSession``, ``CountingSession``,
``IdStrippingSession``), so every test that builds one of them drives a
``ChatLedgerSession`` instead. ``CHATLEDGER_SDK_BACKEND`` picks the store:
``memory`` (default), ``sqlite`` (a file per database path) or ``postgres``
(a schema per database path, on ``CHATLEDGER_TEST_POSTGRES_URL``). The
summary line counts the tests that built at least one chatledger session.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import threading
import types
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import agents
import agents.memory
import agents.memory.sqlite_session
import pytest

from chatledger import ConversationStore
from chatledger.adapters.frameworks.openai_agents import ChatLedgerSession

BACKEND = os.environ.get("CHATLEDGER_SDK_BACKEND", "memory")
POSTGRES_URL = os.environ.get(
    "CHATLEDGER_TEST_POSTGRES_URL", "postgresql://root@127.0.0.1:5432/test"
)
_SCRATCH = Path(tempfile.mkdtemp(prefix="chatledger-sdk-"))
_stores: dict[str, ConversationStore] = {}
_schemas: list[str] = []
_guard = threading.Lock()
_touched = threading.local()
_used: set[str] = set()
_current: list[str] = []


def _store_for(db_path: Any) -> ConversationStore:
    """One store per database path (``:memory:``: a new one each time), as SQLite gives."""
    key = str(db_path)
    if key == ":memory:":
        key = f":memory:{uuid.uuid4().hex}"
    with _guard:
        store = _stores.get(key)
        if store is None:
            store = ConversationStore.open(_url(key))
            _stores[key] = store
        return store


def _url(key: str) -> str:
    if BACKEND == "memory":
        return "memory://"
    if BACKEND == "sqlite":
        return f"sqlite:///{_SCRATCH / (uuid.uuid4().hex + '.db')}"
    schema = f"sdk_{uuid.uuid4().hex}"
    _schemas.append(schema)
    separator = "&" if "?" in POSTGRES_URL else "?"
    return f"{POSTGRES_URL}{separator}{urlencode({'schema': schema})}"


def _mark_used() -> None:
    if _current:
        _used.add(_current[-1])


class ChatLedgerSQLiteSession(ChatLedgerSession):
    """``SQLiteSession``'s constructor, a ``ChatLedgerSession`` underneath."""

    def __init__(
        self,
        session_id: str,
        db_path: Any = ":memory:",
        sessions_table: str = "agent_sessions",
        messages_table: str = "agent_messages",
        session_settings: Any = None,
    ) -> None:
        super().__init__(
            _store_for(db_path),
            session_id,
            session_settings=session_settings
            if session_settings is not None
            else agents.SessionSettings(),
        )
        self.db_path = db_path
        _mark_used()

    def close(self) -> None:
        """Nothing to release per session (the stores are closed at the end of the run)."""


class SimpleListSession(ChatLedgerSession):
    """The SDK tests' list session, a ``ChatLedgerSession`` on its own memory store."""

    session_settings = None

    def __init__(self, session_id: str = "test", history: list[Any] | None = None) -> None:
        super().__init__(_store_for(":memory:"), session_id)
        self._ignore_ids_for_matching = False
        if history:
            self.add(list(history))
        _mark_used()

    @property
    def saved_items(self) -> list[Any]:
        """The items as stored (the SDK helper's inspection attribute)."""
        return self.items()

    @property
    def _items(self) -> list[Any]:
        return self.items()


def _helper_module() -> types.ModuleType:
    """The SDK's ``tests/utils/simple_session.py`` with ``SimpleListSession`` replaced.

    Its other classes are the SDK's own code, built on the chatledger class.
    """
    import tests.utils as sdk_utils

    path = Path(next(iter(sdk_utils.__path__))) / "simple_session.py"
    source = path.read_text().replace(
        "class SimpleListSession(Session):", "class _SdkSimpleListSession(Session):"
    )
    module = types.ModuleType("tests.utils.simple_session")
    module.__file__ = str(path)
    module.__dict__["SimpleListSession"] = SimpleListSession
    exec(compile(source, str(path), "exec"), module.__dict__)
    module.__dict__["SimpleListSession"] = SimpleListSession
    return module


def pytest_configure(config: pytest.Config) -> None:
    agents.SQLiteSession = ChatLedgerSQLiteSession  # type: ignore[misc,assignment]
    agents.memory.SQLiteSession = ChatLedgerSQLiteSession  # type: ignore[misc,assignment]
    agents.memory.sqlite_session.SQLiteSession = ChatLedgerSQLiteSession  # type: ignore[misc,assignment]
    sys.modules["tests.utils.simple_session"] = _helper_module()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: Any) -> Any:
    _current.append(item.nodeid)
    try:
        return (yield)
    finally:
        _current.pop()
        _close_stores()  # each test starts on fresh databases, and connections are given back


def _close_stores() -> None:
    with _guard:
        stores = list(_stores.values())
        _stores.clear()
        schemas = sorted(set(_schemas))
        _schemas.clear()
    for store in stores:
        with contextlib.suppress(Exception):
            store.close()
    if schemas:
        import psycopg
        from psycopg import sql

        with psycopg.connect(POSTGRES_URL.split("?")[0], autocommit=True) as connection:
            for schema in schemas:
                connection.execute(
                    sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema))
                )


_outcomes: dict[str, str] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    counted = report.failed or report.when == "call" or (report.skipped and report.when == "setup")
    if counted and (report.nodeid not in _outcomes or report.failed):
        _outcomes[report.nodeid] = report.outcome


def pytest_terminal_summary(terminalreporter: Any) -> None:
    used = {nodeid: _outcomes.get(nodeid, "?") for nodeid in _used}
    passed = sorted(n for n, o in used.items() if o == "passed")
    failed = sorted(n for n, o in used.items() if o == "failed")
    write = terminalreporter.write_line
    write("")
    write(
        f"chatledger ({BACKEND}): {len(used)} SDK tests built a ChatLedgerSession: "
        f"{len(passed)} passed, {len(failed)} failed"
    )
    for nodeid in failed:
        write(f"  failed on ChatLedgerSession: {nodeid}")


def pytest_unconfigure(config: pytest.Config) -> None:
    _close_stores()
