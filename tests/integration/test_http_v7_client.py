"""The real AI SDK 7 client (``AbstractChat`` + ``DefaultChatTransport`` of ``ai@7.0.173``, Node 22)
against ``chatledger serve --ai-sdk 7``: its messages end equal to the store's.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from chatledger import ConversationStore
from chatledger.adapters.responders import demo
from tests.integration.conftest import Backend
from tests.integration.http_support import running_server
from tests.integration.test_http_live import NODE_CHAT, NODE_CLIENT, NODE_CUT
from tests.support.oracle import ORACLE_DIRS, ensure_installed
from tests.support.v7_responder import POLICY_REASON

pytestmark = pytest.mark.oracle

NODE_SEND = (
    NODE_CHAT
    + """
const chat = new Chat({
  id: process.env.CHATLEDGER_CHAT,
  generateId: (() => { let n = 0; return () => `client-${++n}`; })(),
  transport: new DefaultChatTransport({
    api: `${process.env.CHATLEDGER_BASE}/api/chat`,
    headers: { authorization: 'Bearer token-node' },
  }),
});
await chat.sendMessage({ text: process.env.CHATLEDGER_TEXT });
await settle(chat);
console.log(JSON.stringify({
  status: chat.status,
  error: chat.error ? String(chat.error.message ?? chat.error) : null,
  messages: chat.messages,
}));
"""
)


def _node(script: str, base: str, **env: str) -> dict[str, Any]:
    """Run ``script`` with ai@7 on its pinned Node 22; its last line of output, parsed."""
    ensure_installed(7)
    folder = ORACLE_DIRS[7]
    result = subprocess.run(
        [str(folder / "node_modules" / ".bin" / "node"), "--input-type=module", "-e", script],
        cwd=folder,
        env={**os.environ, "CHATLEDGER_BASE": base, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    report: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    return report


def test_the_v7_client_denies_a_call_and_the_turn_continues(tmp_path: Path) -> None:
    """Send, a call awaiting approval, deny with a reason, the SDK continues: equal to the store."""
    url = f"sqlite:///{tmp_path / 'v7.db'}"
    with running_server(url, "--delay", "0.02", "--ai-sdk", "7") as base:
        report = _node(
            NODE_CLIENT,
            base,
            CHATLEDGER_TEXT=demo.USER_MESSAGE["parts"][0]["text"],
            CHATLEDGER_REASON=demo.DENIAL_REASON,
        )
    assert (report["status"], report["error"]) == ("ready", None), report
    assert report["resumed"] == {"status": "ready", "messages": report["paused"]}
    with ConversationStore.open(url, tenant="node-tenant") as store:
        assert store.ai_sdk_of("node-chat") == 7
        assert report["messages"] == store.messages("node-chat")
        denied = next(
            p for p in report["messages"][-1]["parts"] if p.get("toolCallId") == demo.TOOL_CALL_ID
        )
        assert denied["state"] == "output-denied"
        assert denied["approval"]["reason"] == demo.DENIAL_REASON


def test_the_v7_client_resumes_after_its_connection_is_cut(tmp_path: Path) -> None:
    """``stop()`` mid-answer, then ``resumeStream()`` (a replay from the start, v7's default)."""
    url = f"sqlite:///{tmp_path / 'cut.db'}"
    with running_server(url, "--delay", "0.1", "--ai-sdk", "7") as base:
        report = _node(NODE_CUT, base, CHATLEDGER_TEXT=demo.USER_MESSAGE["parts"][0]["text"])
    assert (report["status"], report["error"]) == ("ready", None), report
    with ConversationStore.open(url, tenant="node-tenant") as store:
        assert report["messages"] == store.messages("cut-chat")


def test_an_automatic_denial_reaches_the_v7_client_as_stored(tmp_path: Path) -> None:
    """A policy denies on the stream: the client shows it as the store keeps and audits it."""
    url = f"sqlite:///{tmp_path / 'policy.db'}"
    responder = ("--responder", "tests.support.v7_responder:policy", "--ai-sdk", "7")
    with running_server(url, *responder) as base:
        report = _node(NODE_SEND, base, CHATLEDGER_CHAT="policy", CHATLEDGER_TEXT="rm /etc")
    assert (report["status"], report["error"]) == ("ready", None), report
    with ConversationStore.open(url, tenant="node-tenant") as store:
        assert report["messages"] == store.messages("policy")
        part = report["messages"][-1]["parts"][1]
        assert part["state"] == "output-denied"
        assert part["approval"]["isAutomatic"] is True
        assert part["approval"]["reason"] == POLICY_REASON
        [decision] = [
            e for e in store.history("policy", full=True) if "approvalDecisions" in e.details
        ]
        assert decision.details["approvalDecisions"][0]["automatic"] is True
        assert decision.actor is not None and decision.actor.startswith("agent")


def test_a_steering_message_sent_mid_answer_reaches_the_v7_client(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another device steers while the answer streams; the answer takes it; client == store."""
    url = f"sqlite:///{tmp_path / 'steer.db'}"
    monkeypatch.setenv("CHATLEDGER_URL", url)
    steering = {"id": "steer-1", "role": "user", "parts": [{"type": "text", "text": "and Rome?"}]}
    stop = threading.Event()

    def steer() -> None:
        with ConversationStore.open(url, tenant="node-tenant") as store:
            while not stop.is_set():
                try:
                    if store.status("steer").status == "streaming":
                        store.append_message("steer", steering, actor="user:phone")
                        return
                except Exception:  # not created yet
                    pass
                time.sleep(0.01)

    responder = ("--responder", "tests.support.v7_responder:steered", "--ai-sdk", "7")
    with running_server(url, *responder) as base:
        thread = threading.Thread(target=steer, daemon=True)
        thread.start()
        try:
            report = _node(NODE_SEND, base, CHATLEDGER_CHAT="steer", CHATLEDGER_TEXT="weather?")
        finally:
            stop.set()
            thread.join(10)
    assert (report["status"], report["error"]) == ("ready", None), report
    with ConversationStore.open(url, tenant="node-tenant") as store:
        stored = store.messages("steer")
        assert report["messages"] == stored
        kinds = [p["type"] for p in stored[-1]["parts"]]
        assert "steering-message" in kinds
        [queued] = store.history("steer", kinds=["steering-queued"])
        assert queued.actor == "user:phone"


NODE_STEER_BY_POST = (
    NODE_CHAT
    + """
import { WebSocketChatTransport } from 'ai';
let counter = 0;
const headers = { authorization: 'Bearer token-node' };
const chat = new Chat({
  id: 'steer-post',
  generateId: () => `client-${++counter}`,
  transport: process.env.CHATLEDGER_TRANSPORT === 'ws'
    ? new WebSocketChatTransport({ url: `${process.env.CHATLEDGER_BASE}/api/chat/ws`, headers })
    : new DefaultChatTransport({ api: `${process.env.CHATLEDGER_BASE}/api/chat`, headers }),
});
const report = {};
const first = chat.sendMessage({ text: 'weather in Paris?' });
const hasText = () => chat.lastMessage?.role === 'assistant' &&
  chat.lastMessage.parts.some(p => p.type === 'text' && p.text);
for (let i = 0; i < 2000 && !hasText(); i++) await sleep(5);
report.statusWhenSent = chat.status;
// The user sends again while the answer streams: POST /api/chat (or a send frame) mid-answer.
const second = chat.sendMessage({ text: 'and Rome?' });
await Promise.all([first, second]);
await settle(chat);
report.status = chat.status;
report.error = chat.error ? String(chat.error.message ?? chat.error) : null;
report.messages = chat.messages;
console.log(JSON.stringify(report));
process.exit(0);  // the WebSocket stays open otherwise
"""
)


@pytest.mark.parametrize("transport", ["http", "ws"])
def test_a_message_the_v7_client_sends_mid_answer_is_steering_then_its_own_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, transport: str
) -> None:
    """``sendMessage`` while the answer streams: queued (audited), not refused; answered after it.

    The running answer waits until the message is queued and ends without
    taking it, so it is the next turn, and the request's answer (POST or
    WebSocket ``send``) is its answer: the client's messages end equal to the
    store's.
    """
    url = f"sqlite:///{tmp_path / 'steer-post.db'}"
    monkeypatch.setenv("CHATLEDGER_URL", url)
    responder = ("--responder", "tests.support.v7_responder:waits", "--ai-sdk", "7")
    with running_server(url, *responder) as base:
        report = _node(NODE_STEER_BY_POST, base, CHATLEDGER_TRANSPORT=transport)
    assert (report["status"], report["error"]) == ("ready", None), report
    assert report["statusWhenSent"] == "streaming"
    with ConversationStore.open(url, tenant="node-tenant") as store:
        stored = store.messages("steer-post")
        assert report["messages"] == stored
        assert [m["role"] for m in stored] == ["user", "assistant", "user", "assistant"]
        assert stored[-1]["parts"][-1]["text"] == "Rome is rainy."
        [queued] = store.history("steer-post", kinds=["steering-queued"])
        assert queued.details["messageId"] == stored[2]["id"]
        assert queued.actor == "http-client:node-tenant"


NODE_RELOAD = (
    NODE_CHAT
    + """
const base = process.env.CHATLEDGER_BASE;
const headers = { authorization: 'Bearer token-node' };
const page = messages => new Chat({
  id: 'reload-chat',
  messages,
  generateId: (() => { let n = 0; return () => `page-${messages.length}-${++n}`; })(),
  transport: new DefaultChatTransport({ api: `${base}/api/chat`, headers }),
  sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
});
const report = {};
const before = page([]);
await before.sendMessage({ text: process.env.CHATLEDGER_TEXT });
await settle(before);
report.before = structuredClone(before.messages);
// The page reloads: a new chat from the stored messages, as the app loads them, then a resume.
const loaded = await fetch(`${base}/api/chats/reload-chat/messages`, { headers });
const chat = page((await loaded.json()).messages);
await chat.resumeStream();
report.afterReload = { status: chat.status, messages: structuredClone(chat.messages) };
const part = chat.lastMessage.parts.find(p => p.state === 'approval-requested');
await chat.addToolApprovalResponse({
  id: part.approval.id, approved: false, reason: process.env.CHATLEDGER_REASON,
});
// The SDK sends the continuation by itself, without awaiting: wait for its answer.
const answered = () =>
  chat.status === 'ready' && chat.lastMessage.parts.some(p => p.state === 'output-denied');
for (let i = 0; i < 1000 && !answered(); i++) await sleep(10);
await settle(chat);
report.status = chat.status;
report.error = chat.error ? String(chat.error.message ?? chat.error) : null;
report.messages = chat.messages;
console.log(JSON.stringify(report));
"""
)


def test_the_v7_client_reloaded_during_an_approval_answers_it_and_continues(
    tmp_path: Path,
) -> None:
    """A call awaits approval; the page reloads from ``GET /api/chats/{id}/messages``; the new
    client denies it with a reason and the SDK continues by itself: equal to the store."""
    url = f"sqlite:///{tmp_path / 'reload.db'}"
    with running_server(url, "--delay", "0.01", "--ai-sdk", "7") as base:
        report = _node(
            NODE_RELOAD,
            base,
            CHATLEDGER_TEXT=demo.USER_MESSAGE["parts"][0]["text"],
            CHATLEDGER_REASON=demo.DENIAL_REASON,
        )
    assert (report["status"], report["error"]) == ("ready", None), report
    assert report["afterReload"] == {"status": "ready", "messages": report["before"]}
    with ConversationStore.open(url, tenant="node-tenant") as store:
        stored = store.messages("reload-chat")
        assert report["messages"] == stored
        assert len(stored) == len(report["before"])  # the same message went on
        denied = next(p for p in stored[-1]["parts"] if p.get("toolCallId") == demo.TOOL_CALL_ID)
        assert denied["state"] == "output-denied"
        assert denied["approval"]["reason"] == demo.DENIAL_REASON
        assert stored[-1]["parts"][-1]["type"] == "text"  # the continuation's answer
        [decision] = store.history("reload-chat", kinds=["approval-responded"])
        assert decision.actor == "http-client:node-tenant"


NODE_RESUME_CONTINUATION = (
    NODE_CHAT
    + """
import { writeFileSync } from 'node:fs';
import { WebSocketChatTransport } from 'ai';
const base = process.env.CHATLEDGER_BASE;
const headers = { authorization: 'Bearer token-node' };
const transport = () => process.env.CHATLEDGER_TRANSPORT === 'ws'
  ? new WebSocketChatTransport({ url: `${base}/api/chat/ws`, headers })
  : new DefaultChatTransport({ api: `${base}/api/chat`, headers });  // resumeStreamIsReplay: true
const page = messages => new Chat({
  id: 'resume-cont', messages, transport: transport(),
  generateId: (() => { let n = 0; return () => `c${messages.length}-${++n}`; })(),
  sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
});
const texts = chat => chat.lastMessage?.parts.filter(p => p.type === 'text' && p.text).length ?? 0;
const report = {};
const chat = page([]);
await chat.sendMessage({ text: process.env.CHATLEDGER_TEXT });
await settle(chat);
report.paused = structuredClone(chat.messages);
const before = texts(chat);
const part = chat.lastMessage.parts.find(p => p.state === 'approval-requested');
await chat.addToolApprovalResponse({
  id: part.approval.id, approved: false, reason: process.env.CHATLEDGER_REASON,
});
// The SDK continues by itself; the continuation halts after its first words (the gate).
for (let i = 0; i < 2000 && texts(chat) <= before; i++) await sleep(5);
// Another page (loaded before the continuation) resumes it: a complete replay of the message.
const other = page(structuredClone(report.paused));
const resuming = other.resumeStream();
for (let i = 0; i < 2000 && texts(other) <= before; i++) await sleep(5);
report.otherWhileStreaming = { status: other.status, parts: structuredClone(other.lastMessage.parts) };
writeFileSync(process.env.CHATLEDGER_GATE_FILE, '');
await resuming;
await settle(chat);
await settle(other);
report.status = chat.status;
report.error = chat.error ? String(chat.error.message ?? chat.error) : null;
report.messages = chat.messages;
report.other = { status: other.status, error: other.error ? String(other.error.message ?? other.error) : null,
                 messages: other.messages };
console.log(JSON.stringify(report));
process.exit(0);
"""
)


@pytest.mark.parametrize("transport", ["http", "ws"])
def test_the_v7_client_resumes_a_continuation_as_a_complete_replay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, transport: str
) -> None:
    """v7's ``resumeStreamIsReplay`` (the ``DefaultChatTransport`` default; fixed for the WebSocket):
    a resume of a continuation rebuilds the whole message, not just what the continuation added.

    The continuation is held after its first words by a gate, so the other
    client resumes while it streams; its messages end equal to the store's.
    """
    url = f"sqlite:///{tmp_path / 'resume-cont.db'}"
    gates = tmp_path / "gates"
    gates.mkdir()
    monkeypatch.setenv("CHATLEDGER_TEST_GATE", str(gates))
    responder = ("--responder", "tests.support.gated_responder:responder", "--ai-sdk", "7")
    with running_server(url, *responder) as base:
        report = _node(
            NODE_RESUME_CONTINUATION,
            base,
            CHATLEDGER_TEXT=demo.USER_MESSAGE["parts"][0]["text"],
            CHATLEDGER_REASON=demo.DENIAL_REASON,
            CHATLEDGER_GATE_FILE=str(gates / "resume-cont"),
            CHATLEDGER_TRANSPORT=transport,
        )
    assert (report["status"], report["error"]) == ("ready", None), report
    assert report["otherWhileStreaming"]["status"] == "streaming"
    assert (report["other"]["status"], report["other"]["error"]) == ("ready", None), report
    with ConversationStore.open(url, tenant="node-tenant") as store:
        stored = store.messages("resume-cont")
        assert report["messages"] == stored
        assert report["other"]["messages"] == stored
        assert len(stored[-1]["parts"]) > len(report["paused"][-1]["parts"])


NODE_WEBSOCKET = (
    NODE_CHAT
    + """
import { WebSocketChatTransport } from 'ai';
const transport = () => new WebSocketChatTransport({
  url: `${process.env.CHATLEDGER_BASE}/api/chat/ws`,
  headers: { authorization: 'Bearer token-node' },
});
let counter = 0;
const chat = new Chat({
  id: 'ws-chat',
  generateId: () => `ws-${++counter}`,
  transport: transport(),
  sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
});
const report = {};
const sending = chat.sendMessage({ text: process.env.CHATLEDGER_TEXT });
// A second device on its own socket resumes the answer while it streams.
for (let i = 0; i < 1000 && chat.status !== 'streaming'; i++) await sleep(5);
const other = new Chat({
  id: 'ws-chat', messages: [structuredClone(chat.messages[0])],
  transport: new WebSocketChatTransport({
    url: `${process.env.CHATLEDGER_OTHER_BASE ?? process.env.CHATLEDGER_BASE}/api/chat/ws`,
    headers: { authorization: 'Bearer token-node' },
  }),
});
report.streamingWhenResumed = chat.status;
await other.resumeStream();
await sending;
await settle(chat);
await settle(other);
report.paused = structuredClone(chat.messages);
report.resumed = { status: other.status, messages: other.messages };
const part = chat.lastMessage.parts.find(p => p.state === 'approval-requested');
if (part == null) {
  console.log(JSON.stringify({ ...report, status: chat.status, messages: chat.messages,
    error: chat.error ? String(chat.error.message ?? chat.error) : 'no approval request' }));
  process.exit(0);
}
await chat.addToolApprovalResponse({
  id: part.approval.id, approved: false, reason: process.env.CHATLEDGER_REASON,
});
const answered = () =>
  chat.status === 'ready' && chat.lastMessage.parts.some(p => p.state === 'output-denied');
for (let i = 0; i < 1000 && !answered(); i++) await sleep(10);
await settle(chat);
await chat.resumeStream();   // nothing streams: the server says no-active
await settle(chat);
report.status = chat.status;
report.error = chat.error ? String(chat.error.message ?? chat.error) : null;
report.messages = chat.messages;
console.log(JSON.stringify(report));
process.exit(0);
"""
)


def test_the_v7_websocket_transport_against_the_server(tmp_path: Path) -> None:
    """``WebSocketChatTransport``: send, a second socket resumes live, deny, the SDK continues."""
    url = f"sqlite:///{tmp_path / 'ws.db'}"
    with running_server(url, "--delay", "0.02", "--ai-sdk", "7") as base:
        report = _node(
            NODE_WEBSOCKET,
            base,
            CHATLEDGER_TEXT=demo.USER_MESSAGE["parts"][0]["text"],
            CHATLEDGER_REASON=demo.DENIAL_REASON,
        )
    assert (report["status"], report["error"]) == ("ready", None), report
    assert report["streamingWhenResumed"] == "streaming", report
    assert report["resumed"] == {"status": "ready", "messages": report["paused"]}
    with ConversationStore.open(url, tenant="node-tenant") as store:
        stored = store.messages("ws-chat")
        assert report["messages"] == stored
        denied = next(p for p in stored[-1]["parts"] if p.get("toolCallId") == demo.TOOL_CALL_ID)
        assert denied["state"] == "output-denied"
        assert denied["approval"]["reason"] == demo.DENIAL_REASON


@pytest.mark.postgres
def test_a_websocket_client_resumes_through_another_server_on_postgres(
    postgres_backend: Backend,
) -> None:
    """Two ``chatledger serve`` on one PostgreSQL database: the second socket resumes via the other."""
    url = postgres_backend.url
    slow = ("--delay", "0.05", "--ai-sdk", "7")
    with running_server(url, *slow) as one, running_server(url, *slow) as two:
        report = _node(
            NODE_WEBSOCKET,
            one,
            CHATLEDGER_OTHER_BASE=two,
            CHATLEDGER_TEXT=demo.USER_MESSAGE["parts"][0]["text"],
            CHATLEDGER_REASON=demo.DENIAL_REASON,
        )
    assert (report["status"], report["error"]) == ("ready", None), report
    assert report["streamingWhenResumed"] == "streaming", report
    assert report["resumed"] == {"status": "ready", "messages": report["paused"]}
    with ConversationStore.open(url, tenant="node-tenant") as store:
        assert report["messages"] == store.messages("ws-chat")


def test_resume_after_the_last_sequence_seen(tmp_path: Path) -> None:
    """``resume{lastSequence: n}`` on a new socket sends the chunks after ``n``, numbered on."""
    import asyncio

    import websockets

    url = f"sqlite:///{tmp_path / 'seq.db'}"
    auth = {"authorization": "Bearer token-node"}

    async def client(base: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        ws_url = base.replace("http://", "ws://") + "/api/chat/ws"
        send = {
            "type": "send", "requestId": "r1", "id": "seq", "trigger": "submit-message",
            "messages": [demo.USER_MESSAGE], "headers": auth, "body": {},
        }  # fmt: skip
        async with websockets.connect(ws_url) as first:
            await first.send(json.dumps(send))
            seen = [json.loads(await first.recv()) for _ in range(3)]
            await first.send(json.dumps({"type": "abort", "requestId": "r1"}))
        resume = {
            "type": "resume", "requestId": "r2", "id": "seq", "lastSequence": 2,
            "headers": auth, "body": {},
        }  # fmt: skip
        async with websockets.connect(ws_url) as second:
            await second.send(json.dumps(resume))
            rest = []
            while (frame := json.loads(await second.recv()))["type"] != "end":
                rest.append(frame)
        return seen, rest

    with running_server(url, "--delay", "0.05", "--ai-sdk", "7") as base:
        seen, rest = asyncio.run(client(base))
    assert [f["sequence"] for f in seen] == [0, 1, 2]
    assert rest[0] == {"type": "start", "requestId": "r2"}
    chunks = [f for f in rest if f["type"] == "chunk"]
    assert [f["sequence"] for f in chunks] == list(range(3, 3 + len(chunks)))
    whole = [f["chunk"] for f in seen] + [f["chunk"] for f in chunks]
    assert whole == demo.first_turn_chunks()
