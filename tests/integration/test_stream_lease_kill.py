"""A real ``chatledger serve`` killed (SIGKILL) mid-answer: its stream ends, and the chat goes on.

Two servers share one database (a SQLite file, a PostgreSQL schema), both
with a short stream lease. The first starts an answer that hangs half
written; a client resumes it through the second; the first is killed. Once
the dead writer's lease has run out the second server closes the stream as
``interrupted``, the resume ends, and a new turn is answered. Real time
passes here (the lease of a killed process must run out), polled with a
deadline, never slept on.
"""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest

from chatledger import ConversationStore
from tests.integration.conftest import Backend
from tests.integration.http_support import send_body, server_process, user
from tests.support.hanging_responder import PARTIAL

LEASE = "3"
TOKEN = "token-kill"
TENANT = "kill-tenant"
HEADERS = {"authorization": f"Bearer {TOKEN}"}
RESPONDER = "tests.support.hanging_responder:responder"


@dataclass
class Server:
    process: subprocess.Popen[str]
    base: str


@contextmanager
def _server(url: str) -> Iterator[Server]:
    """``chatledger serve`` with the hanging responder and a short stream lease, on a free port."""
    options = ("--responder", RESPONDER, "--stream-lease-seconds", LEASE)
    with server_process(url, *options, tokens=f"{TOKEN}={TENANT}") as (process, base):
        yield Server(process, base)


@dataclass
class Resume:
    """``GET /api/chat/{id}/stream`` read in a thread of its own: what arrived, and whether it ended."""

    data: list[str] = field(default_factory=list)
    ended: threading.Event = field(default_factory=threading.Event)
    first: threading.Event = field(default_factory=threading.Event)
    error: list[BaseException] = field(default_factory=list)

    def read(self, base: str, chat: str) -> None:
        try:
            with httpx.stream(
                "GET", f"{base}/api/chat/{chat}/stream", headers=HEADERS, timeout=60
            ) as response:
                assert response.status_code == 200, response.read()
                for line in response.iter_lines():
                    if line.startswith("data: "):
                        self.data.append(line[6:])
                        self.first.set()
            self.ended.set()
        except BaseException as error:  # reported by the test
            self.error.append(error)
            self.ended.set()


@dataclass
class SocketResume:
    """The WebSocket transport's ``resume`` on ``/api/chat/ws``, in a thread: its frames until ``end``."""

    frames: list[dict[str, Any]] = field(default_factory=list)
    first: threading.Event = field(default_factory=threading.Event)
    ended: threading.Event = field(default_factory=threading.Event)
    error: list[BaseException] = field(default_factory=list)

    def read(self, base: str, chat: str) -> None:
        try:
            asyncio.run(self._read(base.replace("http://", "ws://") + "/api/chat/ws", chat))
        except BaseException as error:  # reported by the test
            self.error.append(error)
        self.ended.set()

    async def _read(self, url: str, chat: str) -> None:
        import websockets

        frame = {"type": "resume", "requestId": "r1", "id": chat, "headers": HEADERS, "body": {}}
        async with websockets.connect(url) as socket_:
            await socket_.send(json.dumps(frame))
            while True:
                got = json.loads(await socket_.recv())
                self.frames.append(got)
                if got["type"] == "chunk":
                    self.first.set()
                if got["type"] in ("end", "error", "no-active"):
                    return


@pytest.mark.timeout(180)
def test_a_killed_servers_stream_ends_and_the_chat_goes_on(durable_backend: Backend) -> None:
    url = durable_backend.url
    store = durable_backend.open(tenant=TENANT)
    with _server(url) as doomed, _server(url) as survivor:
        # 1. The doomed server starts an answer that hangs half written.
        with httpx.stream(
            "POST", f"{doomed.base}/api/chat", headers=HEADERS, timeout=60,
            json=send_body("chat-k", [user("u1", "hang")]),
        ) as response:  # fmt: skip
            assert response.status_code == 200
            for line in response.iter_lines():
                if PARTIAL in line:
                    break
            # 2. A client resumes it through the other server: live, not ended.
            resume = Resume()
            reader = threading.Thread(target=resume.read, args=(survivor.base, "chat-k"))
            reader.start()
            socket_resume = SocketResume()
            socket_reader = threading.Thread(
                target=socket_resume.read, args=(survivor.base, "chat-k")
            )
            socket_reader.start()
            assert resume.first.wait(30), "the resume got nothing"
            assert socket_resume.first.wait(30), "the WebSocket resume got nothing"
            assert not resume.ended.is_set() and not socket_resume.ended.is_set()
            assert store.status("chat-k").status == "streaming"
            # 3. Killed mid-answer: nothing closes its stream.
            doomed.process.send_signal(signal.SIGKILL)
            doomed.process.wait(timeout=30)
        # 4. Once the lease has run out, the survivor closes the stream: the resume ends.
        assert resume.ended.wait(60), "the resume of a dead writer's stream never ended"
        reader.join(timeout=10)
        assert not resume.error, resume.error
        chunks = [json.loads(d) for d in resume.data if d != "[DONE]"]
        assert any(chunk.get("delta") == PARTIAL for chunk in chunks)
        assert resume.data[-1] == "[DONE]"
        assert socket_resume.ended.wait(30), "the WebSocket resume never ended"
        socket_reader.join(timeout=10)
        assert not socket_resume.error, socket_resume.error
        assert socket_resume.frames[-1] == {"type": "end", "requestId": "r1"}
        assert any(f.get("chunk", {}).get("delta") == PARTIAL for f in socket_resume.frames)
        status = store.status("chat-k")
        assert (status.status, status.last_outcome) == ("idle", "interrupted")
        [closed] = store.history("chat-k", kinds=["stream-closed"])
        assert closed.actor is not None and closed.actor.endswith(f":{survivor.process.pid}")
        assert "lease expired" in closed.details["reason"]
        # 5. A new turn is answered (no 409), through the survivor.
        answer = httpx.post(
            f"{survivor.base}/api/chat", headers=HEADERS, timeout=60,
            json=send_body("chat-k", [*store.messages("chat-k"), user("u2", "again")]),
        )  # fmt: skip
        assert answer.status_code == 200, answer.text
        assert "a whole answer" in answer.text
    assert _final(store, "chat-k") == ["interrupted", "finished"]


@pytest.mark.timeout(180)
def test_a_resume_after_the_kill_ends_in_another_process(durable_backend: Backend) -> None:
    """Nobody followed while the server died: a later follower (this process) ends it."""
    url = durable_backend.url
    store = durable_backend.open(tenant=TENANT, stream_lease_seconds=float(LEASE))
    with _server(url) as doomed, httpx.stream(
        "POST", f"{doomed.base}/api/chat", headers=HEADERS, timeout=60,
        json=send_body("chat-f", [user("u1", "hang")]),
    ) as response:  # fmt: skip
        assert response.status_code == 200
        for line in response.iter_lines():
            if PARTIAL in line:
                break
        _wait_until_committed(store, "chat-f")  # sent is not yet committed (a 50 ms batch)
        doomed.process.send_signal(signal.SIGKILL)
        doomed.process.wait(timeout=30)
    # Without leases this would wait for more until the timeout, and raise.
    followed = [item.chunk for item in store.follow("chat-f", timeout=60)]
    assert any(chunk.get("delta") == PARTIAL for chunk in followed)
    [closed] = store.history("chat-f", kinds=["stream-closed"])
    assert closed.actor == store.process
    assert "noticed by a follower" in closed.details["reason"]
    with store.open_stream("chat-f", continuation=True, actor="agent:bot") as again:
        again.append({"type": "start"})
    assert _final(store, "chat-f") == ["interrupted", "finished"]


def _wait_until_committed(store: ConversationStore, chat: str) -> None:
    deadline = time.monotonic() + 30
    while not any(PARTIAL in json.dumps(m) for m in store.messages(chat)):
        assert time.monotonic() < deadline, "the half answer was never committed"
        time.sleep(0.02)


def _final(store: ConversationStore, chat: str) -> list[str]:
    return [entry.details["outcome"] for entry in store.history(chat, kinds=["stream-closed"])]
