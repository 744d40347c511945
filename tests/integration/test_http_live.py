"""A real server: ``chatledger serve`` (uvicorn) in a subprocess, driven by httpx and the real AI SDK client."""

from __future__ import annotations

import io
import json
import os
import subprocess
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from chatledger import ConversationStore
from chatledger.adapters.cli.tokens import TokenError, serve_tokens
from chatledger.adapters.responders import demo
from chatledger.domain.whole_stream import fold_stream
from tests.integration.conftest import Backend
from tests.integration.http_support import (
    answer_approval,
    continuation_of,
    error_of,
    running_server,
    send_body,
    sse_events,
)
from tests.support.oracle import ORACLE_DIR, ensure_installed

pytestmark = pytest.mark.anyio


@pytest.fixture
def live_server(tmp_path: Path) -> Iterator[tuple[str, str]]:
    """``chatledger serve`` in a subprocess on a SQLite file: (base URL, store URL)."""
    url = f"sqlite:///{tmp_path / 'live.db'}"
    with running_server(url) as base:
        yield base, url


def test_a_disconnected_client_resumes_from_the_log(live_server: tuple[str, str]) -> None:
    """The answer goes on after the client hangs up; resuming gives it whole from its start."""
    base, url = live_server
    headers = {"authorization": "Bearer token-node"}
    with httpx.Client(base_url=base, headers=headers, timeout=30) as client:
        body = send_body("hangup", [demo.USER_MESSAGE])
        with client.stream("POST", "/api/chat", json=body) as response:
            assert response.status_code == 200
            first = next(response.iter_lines())
            assert json.loads(first.removeprefix("data: "))["type"] == "start"
        resumed = client.get("/api/chat/hangup/stream")
        if resumed.status_code == 200:  # still streaming when asked: the whole answer, live
            assert sse_events(resumed) == demo.first_turn_chunks()
        else:  # a slow machine: it had already finished
            assert resumed.status_code == 204
        for _ in range(300):
            status = client.get("/api/chats/hangup/status").json()
            if status["status"] != "streaming":
                break
            time.sleep(0.02)
        assert (status["status"], status["lastOutcome"]) == ("awaiting-approval", "finished")
    with ConversationStore.open(url, tenant="node-tenant") as store:
        assert store.messages("hangup")[-1]["parts"][-1]["state"] == "approval-requested"


NODE_CHAT = """
import { AbstractChat, DefaultChatTransport,
         lastAssistantMessageIsCompleteWithApprovalResponses } from 'ai';

class Chat extends AbstractChat {
  constructor(init) {
    let messages = init.messages ?? [];
    const snapshot = x => structuredClone(x);
    const state = {
      status: 'ready', error: undefined,
      get messages() { return messages; },
      set messages(m) { messages = [...m]; },
      pushMessage: m => (messages = [...messages, m]),
      popMessage: () => (messages = messages.slice(0, -1)),
      replaceMessage: (i, m) =>
        (messages = [...messages.slice(0, i), snapshot(m), ...messages.slice(i + 1)]),
      snapshot,
    };
    super({ ...init, state });
  }
}

const sleep = ms => new Promise(r => setTimeout(r, ms));
const settle = async chat => {
  await sleep(20);
  for (let i = 0; i < 1000 && (chat.status === 'submitted' || chat.status === 'streaming'); i++) {
    await sleep(10);
  }
};
"""
"""A chat object of the real SDK (``AbstractChat`` with plain state, as ``useChat`` keeps it)."""


NODE_CLIENT = (
    NODE_CHAT
    + """
let counter = 0;
const chat = new Chat({
  id: 'node-chat',
  generateId: () => `client-${++counter}`,
  transport: new DefaultChatTransport({
    api: `${process.env.CHATLEDGER_BASE}/api/chat`,
    headers: { authorization: 'Bearer token-node' },
  }),
  sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
});
const report = {};
const sending = chat.sendMessage({ text: process.env.CHATLEDGER_TEXT });
// Another client (a reloaded page) resumes the answer while it streams.
for (let i = 0; i < 1000 && chat.status !== 'streaming'; i++) await sleep(5);
const other = new Chat({
  id: 'node-chat',
  messages: [structuredClone(chat.messages[0])],
  transport: new DefaultChatTransport({
    api: `${process.env.CHATLEDGER_BASE}/api/chat`,
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
await chat.addToolApprovalResponse({
  id: part.approval.id, approved: false, reason: process.env.CHATLEDGER_REASON,
});
// The SDK sends the continuation by itself, without awaiting: wait for its answer.
const answered = () =>
  chat.status === 'ready' && chat.lastMessage.parts.some(p => p.state === 'output-denied');
for (let i = 0; i < 1000 && !answered(); i++) await sleep(10);
await settle(chat);
await chat.resumeStream();
await settle(chat);
report.status = chat.status;
report.error = chat.error ? String(chat.error.message ?? chat.error) : null;
report.messages = chat.messages;
console.log(JSON.stringify(report));
"""
)


NODE_CUT = (
    NODE_CHAT
    + """
const transport = () => new DefaultChatTransport({
  api: `${process.env.CHATLEDGER_BASE}/api/chat`,
  headers: { authorization: 'Bearer token-node' },
});
const chat = new Chat({ id: 'cut-chat', transport: transport() });
const report = {};
const sending = chat.sendMessage({ text: process.env.CHATLEDGER_TEXT });
const hasText = () => chat.lastMessage?.role === 'assistant' &&
  chat.lastMessage.parts.some(p => p.type === 'text' && p.text);
for (let i = 0; i < 2000 && !hasText(); i++) await sleep(5);
report.partsWhenCut = structuredClone(chat.lastMessage.parts);
await chat.stop();              // aborts the fetch: the connection is cut mid-stream
await sending;
report.statusAfterCut = chat.status;
await chat.resumeStream();       // GET /api/chat/cut-chat/stream: the answer from its start
await settle(chat);
report.status = chat.status;
report.error = chat.error ? String(chat.error.message ?? chat.error) : null;
report.messages = chat.messages;
console.log(JSON.stringify(report));
"""
)


@pytest.mark.oracle
def test_the_real_ai_sdk_client_against_the_server(live_server: tuple[str, str]) -> None:
    """``AbstractChat`` + ``DefaultChatTransport`` (ai@6.0.326) against ``serve()``: the whole demo turn.

    The client sends, gets the call awaiting approval, denies it with a reason
    (``addToolApprovalResponse``), sends the continuation by itself
    (``lastAssistantMessageIsCompleteWithApprovalResponses``), and resumes (204:
    nothing to resume). Its messages end equal to the store's. A second client
    resuming while the first answer streams gets the same message.
    """
    ensure_installed()
    base, url = live_server
    text = demo.USER_MESSAGE["parts"][0]["text"]
    result = subprocess.run(
        ["node", "--input-type=module", "-e", NODE_CLIENT],
        cwd=ORACLE_DIR,
        env={
            **os.environ,
            "CHATLEDGER_BASE": base,
            "CHATLEDGER_TEXT": text,
            "CHATLEDGER_REASON": demo.DENIAL_REASON,
        },
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert (report["status"], report["error"]) == ("ready", None)
    assert report["streamingWhenResumed"] == "streaming", report
    assert report["resumed"] == {"status": "ready", "messages": report["paused"]}
    with ConversationStore.open(url, tenant="node-tenant") as store:
        stored = store.messages("node-chat")
        paused_at = next(
            e.position for e in store.history("node-chat", kinds=["approval-responded"])
        )
        assert report["paused"] == store.messages("node-chat", at_version=paused_at - 1)
        assert report["messages"] == stored
        assert [m["id"] for m in stored] == ["client-1", demo.MESSAGE_ID]
        denied = next(p for p in stored[-1]["parts"] if p.get("toolCallId") == demo.TOOL_CALL_ID)
        assert denied["state"] == "output-denied"
        assert denied["approval"]["reason"] == demo.DENIAL_REASON
        assert store.status("node-chat").status == "idle"


def send_until_streaming(
    pool: ThreadPoolExecutor, client: httpx.Client, sender: str, watcher: str, chat: str
) -> Future[httpx.Response]:
    """POST the demo question to ``sender``; return once ``watcher`` says the answer streams."""
    sending = pool.submit(
        lambda: client.post(f"{sender}/api/chat", json=send_body(chat, [demo.USER_MESSAGE]))
    )
    for _ in range(500):
        status = client.get(f"{watcher}/api/chats/{chat}/status")
        if status.status_code == 200 and status.json()["status"] == "streaming":
            break
        time.sleep(0.01)
    return sending


@pytest.mark.postgres
def test_two_servers_on_one_postgres_database(postgres_backend: Backend) -> None:
    """Two ``chatledger serve`` processes share one database.

    A turn streamed through one is followed (resumed from its start) through
    the other while it streams; an approval answered through the other's
    endpoint continues it there, and the first server's resume follows that
    continuation; a denial sent inside ``messages`` (the ``useChat`` way)
    through the other server continues a turn the first one streamed; a stop
    through the other server ends an answer the first one is writing.
    """
    url = postgres_backend.url
    deny = {"approvalId": demo.APPROVAL_ID, "approved": False, "reason": demo.DENIAL_REASON}
    replayed = {"tool-input-start", "tool-input-delta", "tool-input-available"}
    headers = {"authorization": "Bearer token-node"}
    slow = ("--delay", "0.05")
    with (
        running_server(url, *slow) as one,
        running_server(url, *slow) as two,
        httpx.Client(headers=headers, timeout=60) as client,
        ThreadPoolExecutor(max_workers=1) as pool,
    ):
        # 1. Streamed through one, followed through two while it streams.
        sending = send_until_streaming(pool, client, one, two, "shared")
        followed = client.get(f"{two}/api/chat/shared/stream")
        assert followed.status_code == 200, "the turn should still be streaming"
        assert sse_events(followed) == demo.first_turn_chunks()
        assert sse_events(sending.result()) == demo.first_turn_chunks()

        # 2. Denied through two's endpoint: two continues it; one's resume follows.
        answered = client.post(f"{two}/api/chats/shared/approvals", json=deny)
        assert answered.json()["continuationRequested"] is True
        resumed = client.get(f"{one}/api/chat/shared/stream")
        assert resumed.status_code == 200, "the continuation should be streaming"
        replay = sse_events(resumed)
        assert continuation_of(replay) == [
            c
            for c in demo.continuation_chunks()
            if c["type"] not in {*replayed, "tool-output-denied"}
        ]

        # 3. The useChat way: streamed through one, denial inside messages through two.
        sse_events(client.post(f"{one}/api/chat", json=send_body("other", [demo.USER_MESSAGE])))
        paused = client.get(f"{two}/api/chats/other/messages").json()["messages"]
        denied = answer_approval(paused[-1], demo.APPROVAL_ID, False, demo.DENIAL_REASON)
        body = send_body("other", [demo.USER_MESSAGE, denied], messageId=demo.MESSAGE_ID)
        continued = sse_events(client.post(f"{two}/api/chat", json=body))
        assert continued == [c for c in demo.continuation_chunks() if c["type"] not in replayed]
        for chat in ("shared", "other"):
            status = client.get(f"{one}/api/chats/{chat}/status").json()
            assert (status["status"], status["lastOutcome"]) == ("idle", "finished")

        # 4. Streamed through one, stopped through two (which closes the stream in the log).
        sending = send_until_streaming(pool, client, one, two, "halt")
        assert client.post(f"{two}/api/chats/halt/stop", json={"reason": "enough"}).json()[
            "stopped"
        ]
        halted = sse_events(sending.result())
        assert halted[-1] == {"type": "abort", "reason": "the stream was closed"}
        status = client.get(f"{one}/api/chats/halt/status").json()
        assert (status["status"], status["lastOutcome"]) == ("idle", "aborted")
        assert status["lastReason"] == "stopped by http-client:node-tenant: enough"

    with ConversationStore.open(url, tenant="node-tenant") as store:
        demo.record_demo(store, "direct")
        assert store.messages("shared") == store.messages("other") == store.messages("direct")
        assert fold_stream(replay, ai_sdk=7) == store.messages("shared")[-1]  # a complete replay
        claims = store.history("shared", kinds=["continuation-claimed"])
        assert len(claims) == 1 and claims[0].actor.startswith("http:")
        assert store.pending_continuations() == []


@pytest.mark.oracle
def test_the_real_ai_sdk_client_resumes_after_its_connection_is_cut(tmp_path: Path) -> None:
    """The SDK client stops reading mid-answer (``chat.stop()`` aborts the fetch), then resumes.

    The server goes on storing the answer; ``resumeStream()`` replays it from
    its start and the client's message ends equal to the stored one.
    """
    ensure_installed()
    url = f"sqlite:///{tmp_path / 'cut.db'}"
    with running_server(url, "--delay", "0.1") as base:
        result = subprocess.run(
            ["node", "--input-type=module", "-e", NODE_CUT],
            cwd=ORACLE_DIR,
            env={
                **os.environ,
                "CHATLEDGER_BASE": base,
                "CHATLEDGER_TEXT": demo.USER_MESSAGE["parts"][0]["text"],
            },
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert (report["status"], report["error"]) == ("ready", None), report
    assert report["statusAfterCut"] == "ready"
    assert not any(p["type"].startswith("tool-") for p in report["partsWhenCut"]), "cut too late"
    with ConversationStore.open(url, tenant="node-tenant") as store:
        stored = store.messages("cut-chat")
        assert report["messages"] == stored
        assert stored[-1]["parts"][-1]["state"] == "approval-requested"
        opened = store.history("cut-chat", kinds=["stream-closed"])
        assert [e.summary.rsplit(": ", 1)[-1] for e in opened] == ["finished"]


# -- serve's tokens: a file or the environment, users, first start, --no-auth ---------------------


def test_serve_takes_tokens_from_a_file_and_records_their_users(tmp_path: Path) -> None:
    """``--token-file`` lines ``TOKEN=TENANT:USER``: the user is the recorded actor."""
    token_file = tmp_path / "tokens"
    token_file.write_text("# people\ntok-alice=acme:alice\n\ntok-bob=acme:bob\n")
    url = f"sqlite:///{tmp_path / 'users.db'}"
    with running_server(url, "--token-file", str(token_file), tokens=None) as base:
        body = send_body("c", [demo.USER_MESSAGE])
        anonymous = httpx.post(f"{base}/api/chat", json=body, timeout=30)
        error_of(anonymous, 401, "UnauthorizedError")
        alice = {"authorization": "Bearer tok-alice"}
        sse_events(httpx.post(f"{base}/api/chat", json=body, headers=alice, timeout=30))
    with ConversationStore.open(url, tenant="acme") as store:
        (appended,) = store.history("c", kinds=["message-appended"])
        assert appended.actor == "alice"


def test_the_first_start_generates_a_token_and_no_auth_is_loud(tmp_path: Path) -> None:
    """Without tokens a token is generated once (owner-only file); ``--no-auth`` warns on stderr."""
    path = tmp_path / "chatledger.tokens"
    out, err = io.StringIO(), io.StringIO()
    first = serve_tokens(str(path), no_auth=False, tenant="acme", out=out, err=err)
    assert first is not None
    ((token, identity),) = first.tokens.items()
    assert identity.tenant == "acme" and token.decode() in out.getvalue()
    assert path.stat().st_mode & 0o777 == 0o600
    again = serve_tokens(str(path), no_auth=False, tenant="acme", out=out, err=err)
    assert again is not None and again.tokens == first.tokens
    with pytest.raises(TokenError, match="--no-auth, but tokens are configured"):
        serve_tokens(str(path), no_auth=True, tenant="acme", out=out, err=err)
    path.unlink()
    assert serve_tokens(str(path), no_auth=True, tenant="acme", out=out, err=err) is None
    assert "WARNING: --no-auth" in err.getvalue()
    assert not path.exists()
