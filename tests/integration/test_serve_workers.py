"""``chatledger serve --workers N``: N server processes on one port sharing one database."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from chatledger import ConversationStore
from chatledger.adapters.responders import demo
from chatledger.domain.seal import SealKey
from tests.integration.http_support import running_server, send_body, sse_events


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (from /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry))
    return found


def _server_pid(port: int) -> int:
    """The pid of the process whose command line serves ``port``."""
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                command = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"serve" in command and str(port).encode() in command:
                return int(entry)
    raise AssertionError(f"no server process on port {port}")


@pytest.mark.timeout(180)
def test_two_worker_processes_serve_one_database(tmp_path: Path) -> None:
    """Two processes answer; every answer and every resume is whole, whichever process took it."""
    url = f"sqlite:///{tmp_path / 'workers.db'}"
    with running_server(url, "--workers", "2", "--delay", "0.01") as base:
        port = int(base.rsplit(":", 1)[1])
        workers = _children(_server_pid(port))
        assert len([pid for pid in workers if b"spawn_main" in _cmdline(pid)]) == 2
        headers = {"authorization": "Bearer token-node"}  # the parent's tokens reach the workers
        with httpx.Client(base_url=base, headers=headers, timeout=60) as client:
            assert (
                client.get("/api/chats/none/status", headers={"authorization": ""}).status_code
                == 401
            )

            def turn(i: int) -> list[dict[str, object]]:
                body = send_body(f"w{i}", [demo.USER_MESSAGE])
                return sse_events(client.post("/api/chat", json=body))

            with ThreadPoolExecutor(6) as pool:
                answers = list(pool.map(turn, range(6)))
            replays = [client.get(f"/api/chat/w{i}/stream") for i in range(6)]
    for answer in answers:
        assert answer[1:] == demo.first_turn_chunks()[1:]
    assert all(replay.status_code == 204 for replay in replays)  # all finished
    with ConversationStore.open(url, tenant="node-tenant") as store:
        for i, answer in enumerate(answers):
            assert store.status(f"w{i}").last_outcome == "finished"
            assert store.messages(f"w{i}")[-1]["id"] == answer[0]["messageId"]


@pytest.mark.timeout(180)
def test_every_worker_checks_seals_with_the_servers_seal_key(tmp_path: Path) -> None:
    """``--seal-key-file`` reaches the worker processes' verify page, as it does one process's."""
    url = f"sqlite:///{tmp_path / 'workers.db'}"
    secret = "an operator secret of thirty-two bytes"
    (tmp_path / "seal.key").write_text(secret)
    options = ("--workers", "2", "--delay", "0.01", "--seal-key-file", str(tmp_path / "seal.key"))
    headers = {"authorization": "Bearer token-node"}
    with running_server(url, *options) as base:
        body = send_body("sealed", [demo.USER_MESSAGE])
        assert sse_events(httpx.post(f"{base}/api/chat", json=body, headers=headers, timeout=60))
        with ConversationStore.open(url, tenant="node-tenant") as store:
            store.operations.seal(SealKey.from_text(secret))
        pages = [  # a new connection each: either worker may take it
            httpx.get(f"{base}/ui/verify", params={"id": "sealed"}, headers=headers, timeout=60)
            for _ in range(6)
        ]
    for page in pages:
        assert page.status_code == 200
        assert "signature verified with the server" in page.text, page.text


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""
