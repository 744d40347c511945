"""Cross-tenant leaks, tried from outside: one tenant's token against every route, aimed at another tenant's data.

A script, not a test. A real ``chatledger serve`` (SQLite, the demo
responder) with two tenant tokens, ``acme`` and ``globex``. Acme holds a
conversation awaiting approval whose text carries a canary, plus a
conversation it created and titled with the canary. Globex then calls every
route of the API and every page, with acme's chat ids, message ids, approval
and tool call ids, acme's user, a search for the canary, and a WebSocket
resume. A *leak* is an answer to globex that holds the canary (in acme's
text, its message id and its title), or an action on acme's data that changed it (acme's messages,
version and status are compared before and after).

Run: ``python bench/tenant_leaks.py``.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import websockets

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from chatledger.adapters.responders import demo  # noqa: E402

CANARY = "canary7f3e9acme"
ACME, GLOBEX = "acme-token", "globex-token"
TOKENS = f"{ACME}=acme:user:alice,{GLOBEX}=globex:user:mallory"
CHAT, OTHER = "acme-secret", "acme-titled"


def _user(message_id: str, text: str) -> dict[str, Any]:
    return {"id": message_id, "role": "user", "parts": [{"type": "text", "text": text}]}


def main() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    work = Path(tempfile.mkdtemp(prefix="tenant-leaks-"))
    base = f"http://127.0.0.1:{port}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHATLEDGER_TOKEN")}
    env["CHATLEDGER_TOKENS"] = TOKENS
    command = [
        sys.executable,
        "-m",
        "chatledger",
        "serve",
        "--url",
        f"sqlite:///{work}/s.db",
        "--port",
        str(port),
        "--log-level",
        "warning",
    ]
    server = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{base}/openapi.json", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline and server.poll() is None, "serve did not start"
            time.sleep(0.1)
        return probe_leaks(base, port)
    finally:
        server.terminate()
        server.wait(timeout=30)


def probe_leaks(base: str, port: int) -> int:
    acme = httpx.Client(base_url=base, headers={"authorization": f"Bearer {ACME}"}, timeout=60)
    globex = httpx.Client(base_url=base, headers={"authorization": f"Bearer {GLOBEX}"}, timeout=60)
    first = {
        **demo.USER_MESSAGE,
        "id": f"{CANARY}-u1",
        "parts": [{"type": "text", "text": f"{CANARY}: clean the logs"}],
    }
    answer = acme.post(
        "/api/chat", json={"id": CHAT, "messages": [first], "trigger": "submit-message"}
    )
    assert answer.status_code == 200, answer.text
    created = acme.post("/api/chats", json={"id": OTHER, "title": f"{CANARY} plans"})
    assert created.status_code in (200, 201), created.text

    def snapshot() -> str:
        return json.dumps(
            [
                acme.get(f"/api/chats/{chat}/{what}").json()
                for chat in (CHAT, OTHER)
                for what in ("messages", "status")
            ],
            sort_keys=True,
        )

    before = snapshot()
    secrets = [CANARY]  # in acme's text, message id and title (the demo's own ids are everyone's)
    deny = {"approvalId": demo.APPROVAL_ID, "approved": True, "reason": "mallory says so"}
    requests: list[tuple[str, str, Any]] = []
    for chat in (CHAT, OTHER):
        requests += [
            ("GET", f"/api/chats/{chat}/{what}", None)
            for what in ("messages", "status", "history", "model-messages")
        ]
        requests += [
            ("GET", f"/api/chat/{chat}/stream", None),
            ("GET", f"/api/chat/{chat}/export", None),
            ("POST", f"/api/chats/{chat}/approvals", deny),
            (
                "POST",
                f"/api/chats/{chat}/tool-outputs",
                {"toolCallId": demo.TOOL_CALL_ID, "output": {"deleted": 0}},
            ),
            ("POST", f"/api/chats/{chat}/stop", {}),
            ("POST", f"/api/chats/{chat}/messages", _user("m-mallory", "hi")),
            ("POST", f"/api/chats/{chat}/continuations/retire", {"reason": "mallory"}),
            ("POST", f"/api/chat/{chat}/erase", {"reason": "mallory"}),
            ("POST", f"/api/chat/{chat}/redact", {"messageId": demo.MESSAGE_ID}),
            ("GET", f"/ui/conversation?chat={chat}", None),
            ("GET", f"/conversation?chat={chat}", None),
        ]
    requests += [
        ("GET", "/api/approvals", None),
        ("GET", f"/api/chats?q={CANARY}", None),
        ("GET", "/api/chats", None),
        ("POST", "/api/continuations/claim", {"worker": "mallory"}),
        ("GET", "/api/subjects/user:alice/conversations", None),
        ("POST", "/api/subjects/user:alice/erase", {"reason": "mallory"}),
        ("GET", "/ui/list", None),
        ("GET", f"/ui/list?q={CANARY}", None),
        ("GET", "/ui/approvals", None),
        ("GET", "/ui/overview", None),
        ("GET", "/api/stats", None),
        ("GET", "/metrics", None),
        (
            "POST",
            "/api/chat",
            {"id": CHAT, "messages": [_user("m-x", "hi")], "trigger": "submit-message"},
        ),
    ]
    leaks: list[str] = []
    statuses: dict[int, int] = {}
    for method, path, body in requests:
        response = globex.request(method, path, json=body)
        statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
        found = [s for s in secrets if s in response.text]
        if found:
            leaks.append(f"{method} {path}: {response.status_code} shows {found}")
    socket_answer = asyncio.run(_socket_resume(port))
    if any(s in socket_answer for s in secrets):
        leaks.append(f"WebSocket resume of {CHAT}: {socket_answer[:200]}")
    after = snapshot()
    changed = before != after
    total = len(requests) + 1
    print(
        f"{total} requests by tenant globex at tenant acme's data (statuses {dict(sorted(statuses.items()))}, "
        f"plus a WebSocket resume): leaks {len(leaks)} {leaks[:5]}; acme's conversations "
        f"{'CHANGED' if changed else 'unchanged'}; load average {os.getloadavg()[0]:.2f}"
    )
    return 1 if leaks or changed else 0


async def _socket_resume(port: int) -> str:
    async with websockets.connect(
        f"ws://127.0.0.1:{port}/api/chat/ws",
        additional_headers={"authorization": f"Bearer {GLOBEX}"},
        open_timeout=30,
    ) as ws:
        await ws.send(json.dumps({"type": "resume", "requestId": "r1", "chatId": CHAT}))
        frames = []
        try:
            while True:
                frame = await asyncio.wait_for(ws.recv(), 5)
                frames.append(str(frame))
                if json.loads(frame).get("type") in ("end", "error", "no-active"):
                    break
        except (TimeoutError, websockets.ConnectionClosed):
            pass
        return "\n".join(frames)


if __name__ == "__main__":
    sys.exit(main())
