"""A real ``chatledger serve`` process and headless Chromium (Debian's package) driven by Playwright.

The server runs on a fresh SQLite file and on a fresh PostgreSQL schema, with
two tenants' tokens; Chromium is ``/usr/bin/chromium`` (``apt-get install
chromium``; Playwright downloads no browser). When Chromium is missing the
tests fail saying how to install it; ``CHATLEDGER_TEST_SKIP_BROWSER=1`` skips
them on purpose. Screenshots go to ``tests/artifacts/screenshots/``.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql

from tests.integration.conftest import _postgres_store_url, postgres_server  # noqa: F401

CHROMIUM = os.environ.get("CHATLEDGER_TEST_CHROMIUM", "/usr/bin/chromium")
SKIP_ENV = "CHATLEDGER_TEST_SKIP_BROWSER"
SCREENSHOTS = Path(__file__).resolve().parents[1] / "artifacts" / "screenshots"
TOKENS = {"acme-token": "acme:user:alice", "globex-token": "globex"}
"""Token -> TENANT[:USER], as in a ``--token-file`` (acme's token names its user: the actor)."""


@dataclass
class Served:
    """A running ``chatledger serve`` and the store URL it serves."""

    name: str
    url: str
    base: str
    process: subprocess.Popen[str]
    gates: Path
    """A folder: a test creates ``gates/<chat id>`` to let that chat's held continuation finish."""

    def open_gate(self, chat_id: str) -> None:
        """Let the continuation of ``chat_id`` finish."""
        (self.gates / chat_id).touch()

    def screenshot(self, page: object, what: str) -> Path:
        """Save a full-page screenshot as ``<backend>-<what>.png``."""
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / f"{self.name}-{what}.png"
        page.screenshot(path=str(path), full_page=True)  # type: ignore[attr-defined]
        return path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


REPOSITORY = Path(__file__).resolve().parents[2]


def start_server(
    name: str, url: str, log: Path, gates: Path, extra: tuple[str, ...] = ()
) -> Served:
    """Start ``python -m chatledger serve`` on ``url`` and wait until it accepts connections.

    It answers with the gated demo responder (``tests.support.gated_responder``);
    ``extra`` are more options for ``serve`` (e.g. ``--seal-key-file``).
    """
    port = _free_port()
    args = [sys.executable, "-m", "chatledger", "serve", "--url", url, "--port", str(port)]
    args += list(extra)
    tokens = log.with_name("tokens.txt")
    tokens.write_text("".join(f"{token}={who}\n" for token, who in TOKENS.items()))
    args += ["--token-file", str(tokens)]
    args += ["--responder", "tests.support.gated_responder:responder", "--log-level", "warning"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHATLEDGER_")}
    gates.mkdir(exist_ok=True)
    env["CHATLEDGER_TEST_GATE"] = str(gates)
    out = log.open("w")
    process = subprocess.Popen(
        args, stdout=out, stderr=subprocess.STDOUT, text=True, env=env, cwd=REPOSITORY
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"chatledger serve exited: {log.read_text()}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return Served(name, url, f"http://127.0.0.1:{port}", process, gates)
        except OSError:
            time.sleep(0.1)  # polling for readiness, not ordering events
    process.kill()
    raise RuntimeError(f"chatledger serve did not start in 30 s: {log.read_text()}")


@contextlib.contextmanager
def serving(name: str, url: str, folder: Path, extra: tuple[str, ...] = ()) -> Iterator[Served]:
    """``start_server`` in ``folder``, stopped when the block ends."""
    server = start_server(name, url, folder / "serve.log", folder / "gates", extra)
    try:
        yield server
    finally:
        server.process.terminate()
        server.process.wait(timeout=20)


@contextlib.contextmanager
def browsing(chromium: Any, width: int = 1280, height: int = 900) -> Iterator[Any]:
    """A new tab; when the block ends, the page must have raised no script error."""
    context = chromium.new_context(viewport={"width": width, "height": height})
    context.set_default_timeout(10_000)
    tab = context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda error: errors.append(str(error)))
    yield tab
    context.close()
    assert errors == [], errors


@contextlib.contextmanager
def signed_in(
    chromium: Any, address: str, ready: str | None = None, *, height: int = 900
) -> Iterator[Any]:
    """A tab at ``address`` signed in with acme's token (asked once), ``ready`` shown if given."""
    with browsing(chromium, height=height) as tab:
        tab.goto(address)
        tab.wait_for_selector("#token-form:not([hidden])")
        tab.fill("#token", "acme-token")
        tab.keyboard.press("Enter")
        if ready is not None:
            tab.wait_for_selector(ready)
        yield tab


@pytest.fixture(scope="module")
def chromium() -> Iterator[object]:
    """Headless Chromium from the OS packages.

    Per module, not per session: Playwright's sync API keeps an event loop
    running in the main thread while it is open, and the async tests that
    follow need the thread free.
    """
    if os.environ.get(SKIP_ENV) == "1":
        pytest.skip(f"{SKIP_ENV}=1: browser tests skipped on request")
    if not Path(CHROMIUM).exists():
        pytest.fail(
            f"Chromium is not installed at {CHROMIUM}: apt-get update && apt-get install -y "
            f"chromium chromium-driver (or set {SKIP_ENV}=1 to skip the browser tests)",
            pytrace=False,
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--disable-dev-shm-usage"]
        )
        yield browser
        browser.close()


@pytest.fixture(
    scope="module",
    params=[
        pytest.param("sqlite", id="sqlite"),
        pytest.param("postgres", id="postgres", marks=pytest.mark.postgres),
    ],
)
def backend_url(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, str]]:
    """A fresh SQLite file or PostgreSQL schema, as (backend name, store URL)."""
    if request.param == "sqlite":
        yield "sqlite", f"sqlite:///{tmp_path_factory.mktemp('browser') / 'ledger.db'}"
        return
    conninfo = request.getfixturevalue("postgres_server")
    schema = f"t_{uuid.uuid4().hex}"
    try:
        yield "postgres", _postgres_store_url(schema)
    finally:
        with psycopg.connect(conninfo, connect_timeout=5, autocommit=True) as connection:
            connection.execute(
                sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema))
            )
