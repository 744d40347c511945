"""``chatledger mcp --http``: streamable HTTP behind ``serve``'s tokens, driven by the MCP SDK's own client.

A real ``chatledger mcp --http`` process on a SQLite file and on PostgreSQL,
with the tokens ``serve`` reads (``$CHATLEDGER_TOKENS``): no token is a 401,
an operator token a 403, both as ``serve`` answers them; each token sees its
own tenant only; a decision is recorded under the token's user, or the
configured ``--actor`` for a token without one; a tenant's token may not
verify the whole store.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from chatledger import ConversationStore
from chatledger.adapters.responders import demo
from tests.integration.conftest import Backend

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]
TOKENS = "tok-ann=acme:user:ann,tok-bot=acme,tok-globex=globex,tok-op=*:root"
ACTOR = "agent:mcp-reviewer"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def paused(url: str, tenant: str, chat: str) -> None:
    """The demo's first turn in ``tenant``, awaiting approval."""
    with ConversationStore.open(url, tenant=tenant) as store:
        store.start_conversation(chat)
        store.append_message(chat, demo.USER_MESSAGE)
        store.ingest(chat, demo.first_turn_chunks(), actor="agent:ops-assistant")


@pytest.fixture
def server(durable_backend: Backend) -> Iterator[str]:
    """``chatledger mcp --http --allow-decisions`` on a free port; its MCP endpoint's URL."""
    url = durable_backend.url
    paused(url, "acme", "a1")
    paused(url, "acme", "a2")
    paused(url, "globex", "g1")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [sys.executable, "-m", "chatledger", "mcp", "--http", "--port", str(port)]
    command += ["--url", url, "--allow-decisions", "--actor", ACTOR]
    env = {k: v for k, v in os.environ.items() if k != "CHATLEDGER_TOKEN_FILE"}
    env["CHATLEDGER_TOKENS"] = TOKENS
    process = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    endpoint = f"http://127.0.0.1:{port}/mcp"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.get(endpoint, timeout=1)
                break
            except httpx.TransportError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"chatledger mcp --http did not start:\n{process.stdout}")
            time.sleep(0.05)
        yield endpoint
    finally:
        process.terminate()
        process.wait(timeout=15)


@asynccontextmanager
async def client_for(endpoint: str, token: str) -> AsyncIterator[Client]:
    http = create_mcp_http_client(headers={"authorization": f"Bearer {token}"})
    async with Client(streamable_http_client(endpoint, http_client=http)) as client:
        yield client


async def call(client: Client, tool: str, **arguments: Any) -> Any:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    return json.loads(result.content[0].text)


@pytest.mark.timeout(120)
async def test_tokens_decide_who_may_call_and_in_which_tenant(
    server: str, durable_backend: Backend
) -> None:
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    headers = {"accept": "application/json, text/event-stream"}
    anonymous = httpx.post(server, json=initialize, headers=headers, timeout=10)
    assert anonymous.status_code == 401
    assert anonymous.json()["error"]["type"] == "UnauthorizedError"
    wrong = httpx.post(
        server, json=initialize, headers={**headers, "authorization": "Bearer nope"}, timeout=10
    )
    assert wrong.status_code == 401
    operator = httpx.post(
        server, json=initialize, headers={**headers, "authorization": "Bearer tok-op"}, timeout=10
    )
    assert operator.status_code == 403

    async with client_for(server, "tok-ann") as ann:
        listed = await call(ann, "list_conversations")
        assert {c["id"] for c in listed["conversations"]} == {"a1", "a2"}
        approvals = (await call(ann, "list_pending_approvals"))["approvals"]
        assert {a["chatId"] for a in approvals} == {"a1", "a2"}
        decided = await call(ann, "approve", chat_id="a1", tool_call_id=demo.TOOL_CALL_ID)
        assert decided["actor"] == "user:ann" and decided["continuationRequested"] is True
        whole = await ann.call_tool("verify", {})
        assert whole.is_error and "name the conversation" in whole.content[0].text
        assert (await call(ann, "verify", chat_id="a1"))["ok"] is True
        other = await ann.call_tool("read_transcript", {"chat_id": "g1"})
        assert other.is_error  # another tenant's conversation is not there for this token

    async with client_for(server, "tok-bot") as bot:
        denied = await call(
            bot, "deny", chat_id="a2", tool_call_id=demo.TOOL_CALL_ID, reason="not today"
        )
        assert denied["actor"] == ACTOR and denied["state"] == "output-denied"

    async with client_for(server, "tok-globex") as globex:
        listed = await call(globex, "list_conversations")
        assert [c["id"] for c in listed["conversations"]] == ["g1"]

    url = durable_backend.url
    with ConversationStore.open(url, tenant="acme") as store:
        (approved,) = store.history("a1", kinds=["approval-responded"])
        assert approved.actor == "user:ann"
        (denial,) = store.history("a2", kinds=["approval-responded"])
        assert denial.actor == ACTOR
    with ConversationStore.open(url, tenant="globex") as store:
        assert len(store.pending_approvals()) == 1
