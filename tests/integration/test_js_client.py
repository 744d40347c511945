"""The JS/TS client (``clients/ai-sdk``) end to end: browser -> Node AI SDK server -> chatledger.

A Node server (``clients/ai-sdk/test/e2e/server.mjs``) runs the real
``streamText`` with the SDK's mock language model (``ai/test``) and stores
through the package in a real ``chatledger serve`` (SQLite and PostgreSQL);
the browser is the real SDK chat (``AbstractChat`` + ``DefaultChatTransport``,
as ``useChat`` runs it) talking to the Node server only. Interleavings are
forced: the model stops after its first words of a ``[gate]`` turn until the
test opens the gate, and the client waits on chatledger's status.
"""

from __future__ import annotations

import subprocess
import time
from typing import Any

import pytest

from chatledger import ConversationStore
from tests.integration.conftest import Backend
from tests.integration.http_support import running_server
from tests.integration.test_http_live import NODE_CHAT
from tests.support.js_client import NODE, PACKAGE, app_server, ensure_built, run_node

pytestmark = [pytest.mark.oracle, pytest.mark.timeout(300)]

OWNER = "client:node-app"
ACTOR = "http-client:node-tenant"
"""Who the token of the Node server is to chatledger."""

NODE_PAGE = (
    NODE_CHAT
    + """
const app = process.env.APP_BASE, ledger = process.env.LEDGER_BASE;
const ledgerStatus = async id => (await (await fetch(`${ledger}/api/chats/${id}/status`,
  { headers: { authorization: 'Bearer token-node' } })).json()).status;
const until = async (check, what) => {
  for (let i = 0; i < 6000; i++) { if (await check()) return; await sleep(5); }
  throw new Error(`timed out waiting for ${what}`);
};
const openGate = () => fetch(`${app}/__gate`, { method: 'POST' });
const page = (id, messages) => new Chat({
  id, messages,
  generateId: (() => { let n = 0; return () => `${id}-page-${messages.length}-${++n}`; })(),
  transport: new DefaultChatTransport({ api: `${app}/api/chat` }),
  sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
});
const hasText = (chat, text = '') => chat.lastMessage?.role === 'assistant' &&
  chat.lastMessage.parts.some(p => p.type === 'text' && p.text.includes(text) && p.text);
const errorOf = chat => chat.error ? String(chat.error.message ?? chat.error) : null;
const report = {};
"""
)

NODE_TURN = (
    NODE_PAGE
    + """
const id = 'js-chat';
const chat = page(id, []);
const sending = chat.sendMessage({ text: 'What is the weather in Paris? [gate]' });
// Another device resumes while the answer streams (held after its first words).
await until(async () => (await ledgerStatus(id)) === 'streaming', 'the answer to stream in');
const other = page(id, [structuredClone(chat.messages[0])]);
const resuming = other.resumeStream();
await until(() => hasText(other), 'the resumed page to show the first words');
report.otherWhileStreaming = other.status;
await openGate();
await Promise.all([sending, resuming]);
await settle(chat);
await settle(other);
report.paused = structuredClone(chat.messages);
report.other = { status: other.status, error: errorOf(other), messages: other.messages };
// Approve in the page: the SDK sends by itself, the Node server continues.
const part = chat.lastMessage.parts.find(p => p.state === 'approval-requested');
await chat.addToolApprovalResponse({ id: part.approval.id, approved: true });
await until(() => chat.status === 'ready' && hasText(chat, 'sunny'), 'the continuation');
await settle(chat);
// The page reloads: messages from the app's route, then a resume (nothing streams).
const loaded = await (await fetch(`${app}/api/chats/${id}/messages`)).json();
const reloaded = page(id, loaded.messages);
await reloaded.resumeStream();
report.reloaded = { status: reloaded.status, error: errorOf(reloaded), messages: reloaded.messages };
report.status = chat.status;
report.error = errorOf(chat);
report.messages = chat.messages;
console.log(JSON.stringify(report));
"""
)

NODE_STOP = (
    NODE_PAGE
    + """
const id = 'stop-chat';
const chat = page(id, []);
const sending = chat.sendMessage({ text: 'tell me a story [gate]' });
await until(() => hasText(chat), 'the first words');
await chat.stop();
await sending;
report.stopped = { status: chat.status, messages: structuredClone(chat.messages) };
report.ledgerAfterStop = await ledgerStatus(id);
// The answer went on in chatledger: the page resumes it (a replay from its start, then live).
const resuming = chat.resumeStream();
await until(() => chat.status === 'streaming', 'the resume');
await openGate();
await resuming;
await settle(chat);
report.status = chat.status;
report.error = errorOf(chat);
report.messages = chat.messages;
console.log(JSON.stringify(report));
"""
)

NODE_HALT = (
    NODE_PAGE
    + """
const id = 'halt-chat';
const chat = page(id, []);
const sending = chat.sendMessage({ text: 'What is the weather in Paris? [hold]' });
const storedText = async () => (await (await fetch(`${ledger}/api/chats/${id}/messages`,
  { headers: { authorization: 'Bearer token-node' } })).json()).messages?.at(-1)?.parts
  .some(p => p.type === 'text' && p.text === 'Let me ');
await until(storedText, 'the first words to be stored');
// The app's stop route: chatledger closes the answer aborted; the next chunks the app
// sends are refused, its answer says closedElsewhere, and the package aborts the model.
report.stop = await (await fetch(`${app}/api/chat/${id}/stop`, { method: 'POST' })).json();
await openGate();
await Promise.race([sending, sleep(30000).then(() => {
  throw new Error('the answer never ended: the model was not aborted');
})]);
await settle(chat);
report.ledgerStatus = await ledgerStatus(id);
const loaded = await (await fetch(`${app}/api/chats/${id}/messages`)).json();
const reloaded = page(id, loaded.messages);
await reloaded.resumeStream();
report.reloaded = { status: reloaded.status, messages: reloaded.messages };
report.status = chat.status;
report.error = errorOf(chat);
report.messages = chat.messages;
console.log(JSON.stringify(report));
process.exit(0);  // the bound on the answer's end is a pending timer
"""
)

NODE_PAUSE = (
    NODE_PAGE
    + """
const chat = page(process.env.CHAT, []);
await chat.sendMessage({ text: 'What is the weather in Paris?' });
await settle(chat);
report.status = chat.status;
report.error = errorOf(chat);
report.messages = chat.messages;
console.log(JSON.stringify(report));
"""
)


def _tool_part(message: dict[str, Any]) -> dict[str, Any]:
    return next(p for p in message["parts"] if p.get("toolCallId") == "call-weather-1")


def _texts(message: dict[str, Any]) -> list[str]:
    return [p["text"] for p in message["parts"] if p["type"] == "text"]


def test_send_resume_approve_and_reload_through_a_node_server(durable_backend: Backend) -> None:
    """The Node server persists and serves resumes from chatledger; the page approves in the
    browser, the server records it and streams the continuation; client == store."""
    _send_resume_approve_and_reload(durable_backend.url, ai_sdk=7)


def test_the_v6_variant_on_ai_6(durable_backend: Backend) -> None:
    """The same with ``ai@6`` in the Node server and the page: the conversation speaks v6."""
    _send_resume_approve_and_reload(durable_backend.url, ai_sdk=6)


def _send_resume_approve_and_reload(url: str, *, ai_sdk: int) -> None:
    ensure_built(ai_sdk)
    with (
        running_server(url, "--ai-sdk", str(ai_sdk)) as ledger,
        app_server(ledger, ai_sdk=ai_sdk) as app,
    ):
        report = run_node(NODE_TURN, ai_sdk=ai_sdk, APP_BASE=app, LEDGER_BASE=ledger)
    assert (report["status"], report["error"]) == ("ready", None), report
    assert report["otherWhileStreaming"] == "streaming"
    assert report["other"] == {"status": "ready", "error": None, "messages": report["paused"]}
    assert _tool_part(report["paused"][-1])["state"] == "approval-requested"
    with ConversationStore.open(url, tenant="node-tenant") as store:
        stored = store.messages("js-chat")
        assert report["messages"] == stored
        assert report["reloaded"] == {"status": "ready", "error": None, "messages": stored}
        assert [m["role"] for m in stored] == ["user", "assistant"]
        part = _tool_part(stored[-1])
        assert (part["state"], part["output"]) == (
            "output-available",
            {"city": "Paris", "forecast": "sunny"},
        )
        assert part["approval"]["approved"] is True
        assert _texts(stored[-1]) == ["Let me check.", "It is sunny in Paris."]
        status = store.status("js-chat")
        assert (status.status, status.owner) == ("idle", OWNER)
        assert store.ai_sdk_of("js-chat") == ai_sdk
        [decision] = store.history("js-chat", kinds=["approval-responded"])
        assert decision.actor == ACTOR
        opened = store.history("js-chat", kinds=["stream-opened"])
        assert [e.actor for e in opened] == [ACTOR, ACTOR]  # chatledger's responder never wrote
        assert store.pending_continuations() == []


def test_a_stopped_page_resumes_the_answer_the_server_goes_on_storing(
    durable_backend: Backend,
) -> None:
    """``stop()`` closes the page's connection only: the answer is stored to its end, and the
    page's ``resumeStream()`` replays it from chatledger: client == store."""
    url = durable_backend.url
    ensure_built()
    with running_server(url, "--ai-sdk", "7") as ledger, app_server(ledger) as app:
        report = run_node(NODE_STOP, APP_BASE=app, LEDGER_BASE=ledger)
    assert (report["status"], report["error"]) == ("ready", None), report
    assert report["stopped"]["status"] == "ready"
    assert report["ledgerAfterStop"] == "streaming"
    with ConversationStore.open(url, tenant="node-tenant") as store:
        stored = store.messages("stop-chat")
        assert report["messages"] == stored
        assert _texts(stored[-1]) == ["You said: tell me a story [gate] "]
        assert _texts(report["stopped"]["messages"][-1]) != _texts(stored[-1])
        assert store.status("stop-chat").last_outcome == "finished"


def test_a_stop_in_chatledger_stops_the_model(durable_backend: Backend) -> None:
    """``ledger.stop`` (the app's stop route): the answer closes ``aborted`` with who stopped
    it; the model, which talks on until it is aborted, is aborted by the package once
    chatledger refuses its next chunk; a reloaded page shows what was stored."""
    url = durable_backend.url
    ensure_built()
    with running_server(url, "--ai-sdk", "7") as ledger, app_server(ledger) as app:
        report = run_node(NODE_HALT, APP_BASE=app, LEDGER_BASE=ledger)
    assert report["stop"]["stopped"] is True, report
    assert report["ledgerStatus"] == "idle"
    with ConversationStore.open(url, tenant="node-tenant") as store:
        stored = store.messages("halt-chat")
        status = store.status("halt-chat")
        assert (status.last_outcome, status.last_reason) == (
            "aborted",
            f"stopped by {ACTOR}: stopped from the page",
        )
        assert _texts(stored[-1]) == ["Let me "]
        assert not any(p.get("toolCallId") for p in stored[-1]["parts"])
        assert report["reloaded"] == {"status": "ready", "messages": stored}
        # The page got the words sent after the stop (chatledger refused them), then the end.
        [shown] = _texts(report["messages"][-1])
        assert shown.startswith("Let me and on ")
        assert not any(p.get("toolCallId") for p in report["messages"][-1]["parts"])
        (closed,) = store.history("halt-chat", kinds=["stream-closed"])
        assert closed.actor == ACTOR


def test_an_approval_given_elsewhere_is_continued_by_the_node_server(
    durable_backend: Backend,
) -> None:
    """Approved with the library (as the CLI and the inbox page do): the request is the Node
    server's (its owner), which claims it and streams the continuation; serve never answers."""
    url = durable_backend.url
    ensure_built()
    with running_server(url, "--ai-sdk", "7") as ledger, app_server(ledger) as app:
        report = run_node(NODE_PAUSE, APP_BASE=app, LEDGER_BASE=ledger, CHAT="claimed")
        assert (report["status"], report["error"]) == ("ready", None), report
        with ConversationStore.open(url, tenant="node-tenant") as store:
            assert report["messages"] == store.messages("claimed")
            store.respond_to_approval(
                "claimed", tool_call_id="call-weather-1", approved=True, actor="user:ops"
            )
            # The request is the Node server's (owner): its claim loop may take it at once.
            [requested] = store.history("claimed", kinds=["continuation-requested"])
            assert requested.details["owner"] == OWNER
            deadline = time.monotonic() + 60
            while store.status("claimed").status != "idle" or not any(
                "sunny" in t for t in _texts(store.messages("claimed")[-1])
            ):
                assert time.monotonic() < deadline, store.status("claimed")
                time.sleep(0.05)
            stored = store.messages("claimed")
            assert _tool_part(stored[-1])["state"] == "output-available"
            assert _texts(stored[-1]) == ["Let me check.", "It is sunny in Paris."]
            assert store.pending_continuations() == []
            opened = store.history("claimed", kinds=["stream-opened"])
            assert [e.actor for e in opened] == [ACTOR, ACTOR]
            assert requested.details["requestId"] is not None
            assert opened[-1].details["requestId"] == requested.details["requestId"]
            [claimed] = store.history("claimed", kinds=["continuation-claimed"])
            assert claimed.actor is not None and claimed.actor.startswith(OWNER)


def test_the_package_unit_tests_and_type_check_pass() -> None:
    """``npm test`` (node:test: SSE framing, persist, receive, resume, claims) and ``npm run
    typecheck`` (the README's route handlers against the real ``ai@7`` types)."""
    ensure_built()
    for command in (
        [str(NODE), "--test", "test/client.test.mjs"],
        [str(NODE), "node_modules/typescript/bin/tsc", "-p", "test/tsconfig.json"],
    ):
        result = subprocess.run(
            command, cwd=PACKAGE, capture_output=True, text=True, timeout=120, check=False
        )
        assert result.returncode == 0, result.stdout + result.stderr
