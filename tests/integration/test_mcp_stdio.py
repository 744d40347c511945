"""``chatledger mcp`` over stdio, driven by the official MCP SDK's own client against a real subprocess.

On a SQLite file and on PostgreSQL: a store holds a paused conversation (a
tool call awaiting approval) and a finished one. The client lists and
searches them, reads a transcript as UIMessages and in a model API's format,
reads the audit, lists the pending approval and verifies the log. Decisions
are offered only with ``--allow-decisions``; an approval made through MCP is
recorded under ``--actor`` and requests the turn's continuation, as any other
entry point's. A bad call gets chatledger's message as the tool's error.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from chatledger import ConversationStore
from chatledger.adapters.responders import demo
from tests.integration.conftest import Backend
from tests.integration.http_support import text_turn

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]
ACTOR = "user:ann-via-mcp"
READ_TOOLS = {
    "list_conversations",
    "search_conversations",
    "read_transcript",
    "read_audit",
    "list_pending_approvals",
    "verify",
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def seed(url: str) -> None:
    """``paused``: the demo's first turn, awaiting approval; ``weather``: a finished answer."""
    with ConversationStore.open(url) as store:
        store.start_conversation("paused")
        store.append_message("paused", demo.USER_MESSAGE)
        store.ingest("paused", demo.first_turn_chunks(), actor="agent:ops-assistant")
        question = {
            "id": "w-u1",
            "role": "user",
            "parts": [{"type": "text", "text": "What is the weather in Lisbon?"}],
        }
        store.start_conversation("weather")
        store.append_message("weather", question)
        store.ingest("weather", text_turn("w-a1", "Sunny, 24 degrees."), actor="agent:weather")


@asynccontextmanager
async def mcp_client(url: str, *options: str) -> AsyncIterator[Client]:
    """The SDK's client on ``python -m chatledger mcp --url URL OPTIONS`` (a subprocess, stdio)."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "chatledger", "mcp", "--url", url, *options],
        cwd=ROOT,
    )
    async with Client(params, read_timeout_seconds=60) as client:
        yield client


async def call(client: Client, tool: str, **arguments: Any) -> Any:
    """The tool's JSON result (the call must succeed)."""
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    return json.loads(result.content[0].text)


@pytest.mark.timeout(120)
async def test_an_mcp_client_reads_conversations_approvals_and_audit(
    durable_backend: Backend,
) -> None:
    url = durable_backend.url
    seed(url)
    async with mcp_client(url) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert set(tools) == READ_TOOLS  # read only: no approve or deny without the operator's flag
        assert "openai-responses" in (tools["read_transcript"].description or "")

        listed = await call(client, "list_conversations")
        assert {c["id"] for c in listed["conversations"]} == {"paused", "weather"}
        waiting = await call(client, "list_conversations", status="awaiting-approval")
        assert [c["id"] for c in waiting["conversations"]] == ["paused"]
        found = await call(client, "search_conversations", query="lisbon weather")
        assert [c["id"] for c in found["conversations"]] == ["weather"]

        ui = await call(client, "read_transcript", chat_id="weather")
        assert ui["format"] == "ui"
        assert [m["role"] for m in ui["messages"]] == ["user", "assistant"]
        assert ui["messages"][1]["parts"][-1]["text"] == "Sunny, 24 degrees."
        anthropic = await call(client, "read_transcript", chat_id="weather", format="anthropic")
        assert anthropic["messages"][-1] == {
            "role": "assistant",
            "content": [{"type": "text", "text": "Sunny, 24 degrees."}],
        }

        audit = await call(client, "read_audit", chat_id="paused")
        kinds = [entry["kind"] for entry in audit["entries"]]
        assert kinds[:2] == ["conversation-started", "message-appended"]
        assert "stream-opened" in kinds
        only = await call(client, "read_audit", chat_id="paused", kinds=["stream-opened"])
        assert [e["kind"] for e in only["entries"]] == ["stream-opened"]

        (approval,) = (await call(client, "list_pending_approvals"))["approvals"]
        assert (approval["chatId"], approval["toolCallId"]) == ("paused", demo.TOOL_CALL_ID)

        checked = await call(client, "verify", chat_id="paused")
        assert checked["ok"] is True and checked["problems"] == []
        everything = await call(client, "verify")  # the local operator may check the whole store
        assert everything["ok"] is True and everything["conversations"] == 2

        missing = await client.call_tool("read_transcript", {"chat_id": "nope"})
        assert missing.is_error
        assert "'nope'" in missing.content[0].text
        bad = await client.call_tool("read_transcript", {"chat_id": "weather", "format": "xml"})
        assert bad.is_error and "unknown format 'xml'" in bad.content[0].text
        refused = await client.call_tool(
            "approve", {"chat_id": "paused", "tool_call_id": demo.TOOL_CALL_ID}
        )
        assert refused.is_error
    with ConversationStore.open(url) as store:
        assert store.history("paused", kinds=["approval-responded"]) == []


@pytest.mark.timeout(120)
async def test_decisions_through_mcp_are_recorded_under_the_configured_actor(
    durable_backend: Backend,
) -> None:
    url = durable_backend.url
    seed(url)
    async with mcp_client(url, "--allow-decisions", "--actor", ACTOR) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert names == READ_TOOLS | {"approve", "deny"}
        decided = await call(
            client, "approve", chat_id="paused", tool_call_id=demo.TOOL_CALL_ID, reason="ok"
        )
        assert decided == {
            "toolCallId": demo.TOOL_CALL_ID,
            "state": "approval-responded",
            "recorded": True,
            "continuationRequested": True,
            "actor": ACTOR,
        }
        assert (await call(client, "list_pending_approvals"))["approvals"] == []
        again = await client.call_tool(
            "deny", {"chat_id": "paused", "tool_call_id": demo.TOOL_CALL_ID}
        )
        assert again.is_error  # a different answer to a decided call is refused
        by_actor = await call(client, "read_audit", chat_id="paused", actor=ACTOR)
        assert [e["kind"] for e in by_actor["entries"]] == [
            "approval-responded",
            "continuation-requested",
        ]
    with ConversationStore.open(url) as store:
        (event,) = store.history("paused", kinds=["approval-responded"])
        assert event.actor == ACTOR
        (request,) = store.pending_continuations()
        assert request.chat_id == "paused"


@pytest.mark.timeout(120)
async def test_a_langgraph_turn_approved_over_mcp_resumes_in_a_worker(
    durable_backend: Backend, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The approval comes from an MCP client; the graph resumes where the continuation is claimed."""
    from chatledger.adapters.cli.worker import run_worker
    from tests.support import langgraph_agent

    url = durable_backend.url
    monkeypatch.setenv(langgraph_agent.CHECKPOINTS_ENV, url)
    monkeypatch.setenv(langgraph_agent.TOOL_LOG_ENV, str(tmp_path / "deleted.log"))
    question = {
        "id": "lg-u1",
        "role": "user",
        "parts": [{"type": "text", "text": "Please delete /tmp/build."}],
    }
    with ConversationStore.open(url) as store:
        store.start_conversation("lg")
        turn = store.turns.open(
            "lg", actor="agent:langgraph", trigger="submit-message", user_message=question
        )
        responder = langgraph_agent.responder()
        with turn.writer:
            for chunk in responder.respond(turn.request):
                turn.writer.append(chunk)
    async with mcp_client(url, "--allow-decisions", "--actor", ACTOR) as client:
        (waiting,) = (await call(client, "list_pending_approvals"))["approvals"]
        assert waiting["toolName"] == "delete_file" and waiting["input"] == {"path": "/tmp/build"}
        await call(client, "approve", chat_id="lg", tool_call_id=waiting["toolCallId"])
    with ConversationStore.open(url) as store:
        ran = await run_worker(
            store, langgraph_agent.responder(), tenants=[store.tenant], grace_seconds=0, once=True
        )
        assert ran == 1
        parts = store.messages("lg")[-1]["parts"]
        (tool,) = [p for p in parts if p["type"] == "tool-delete_file"]
        assert (tool["state"], tool["output"]) == ("output-available", "deleted /tmp/build")
        assert parts[-1] == {"type": "text", "text": "Done: deleted /tmp/build", "state": "done"}
        (decision,) = store.history("lg", kinds=["approval-responded"])
        assert decision.actor == ACTOR
