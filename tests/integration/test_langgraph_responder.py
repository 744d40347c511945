"""The LangGraph responder: a real LangGraph agent (on a fake chat model) answering chatledger.

On a SQLite file and on PostgreSQL, with LangGraph's own durable checkpointers
(``checkpointer_for``): a turn is served by ``chatledger serve`` in one
process and pauses on the tool's ``interrupt()``, which waits in the inbox; a
human approves it with ``chatledger approve`` (another process), and
``chatledger worker`` (a third) claims the continuation and resumes the graph
with ``Command(resume=...)``: the tool runs once, in the worker, and its result
and the model's answer continue the same assistant message. A denial resumes
the graph too: the tool does not run, the part stays denied, the model reads
the reason. No chunk the responder streams is refused by the store.
"""

from __future__ import annotations

import asyncio
import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from langgraph.checkpoint.memory import InMemorySaver

from chatledger import ConversationStore
from chatledger.adapters.cli.commands import main
from chatledger.adapters.cli.common import CommandError, load_responder
from chatledger.adapters.cli.worker import run_worker
from chatledger.adapters.http.app import create_app
from chatledger.adapters.langgraph import (
    LangGraphResponder,
    NothingToResumeError,
    checkpointer_for,
)
from chatledger.adapters.store.turns.responder import ResponderRequest
from tests.integration.conftest import Backend
from tests.integration.http_support import client_of, send_body, server_process, sse_events
from tests.support import langgraph_agent
from tests.support.langgraph_agent import CALL_ID, build_graph

RESPONDER = "tests.support.langgraph_agent:responder"
PATH = "/var/log/ci/archive"
QUESTION: dict[str, Any] = {
    "id": "msg-user-1",
    "role": "user",
    "parts": [{"type": "text", "text": f"The disk is full. Please delete {PATH}."}],
}
PAUSED = [
    "start",
    "start-step",
    "tool-input-start",
    "tool-input-delta",
    "tool-input-delta",
    "tool-input-available",
    "tool-approval-request",
    "finish-step",
    "finish",
]


@pytest.fixture
def agent_env(
    durable_backend: Backend, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    """Where the tool logs its deletions; every process checkpoints beside the store."""
    log = tmp_path / "deleted.log"
    monkeypatch.setenv(langgraph_agent.TOOL_LOG_ENV, str(log))
    monkeypatch.setenv(langgraph_agent.CHECKPOINTS_ENV, durable_backend.url)
    yield log


@pytest.fixture(autouse=True)
def no_refused_chunks(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    """Every chunk the responder streams is one the store accepts (a refusal is logged)."""
    caplog.set_level(logging.WARNING, logger="chatledger.turns")
    yield
    refused = [r.getMessage() for r in caplog.records if "refused" in r.getMessage()]
    assert refused == []


def _worker(url: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "chatledger", "worker", "--once", "--grace-seconds", "0"]
    command += ["--responder", RESPONDER, "--url", url]
    return subprocess.run(command, capture_output=True, text=True, timeout=90, check=False)


def _tool_part(message: dict[str, Any]) -> dict[str, Any]:
    (part,) = [p for p in message["parts"] if p["type"] == "tool-delete_file"]
    return part


def _text(message: dict[str, Any]) -> str:
    return "".join(p["text"] for p in message["parts"] if p["type"] == "text")


@pytest.mark.timeout(180)
def test_a_paused_graph_resumes_in_another_process_after_a_cli_approval(
    durable_backend: Backend, agent_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = durable_backend.url
    options = ("--responder", RESPONDER, "--no-continuations", "--no-auth")
    with server_process(url, *options, tokens=None) as (server, base):
        answer = httpx.post(f"{base}/api/chat", json=send_body("ops", [QUESTION]), timeout=60)
        chunks = sse_events(answer)
        server_pid = server.pid
    assert [c["type"] for c in chunks] == PAUSED
    request = chunks[PAUSED.index("tool-approval-request")]
    assert request["toolCallId"] == CALL_ID
    assert not agent_env.exists()  # nothing ran before the human said so

    with ConversationStore.open(url) as store:
        (waiting,) = store.pending_approvals()
        assert (waiting.chat_id, waiting.tool_call_id) == ("ops", CALL_ID)
        assert waiting.approval_id == request["approvalId"]
        assert _tool_part(store.messages("ops")[-1])["input"] == {"path": PATH}

    approve = ["approve", "ops", CALL_ID, "--actor", "user:ann", "--reason", "disk is full"]
    assert main([*approve, "--url", url]) == 0
    capsys.readouterr()
    worker = _worker(url)  # the server is gone: another process resumes the graph
    assert worker.returncode == 0, worker.stderr
    assert "1 continuation(s) run" in worker.stdout

    deletions = agent_env.read_text().splitlines()
    assert len(deletions) == 1  # the tool ran once, in the worker
    pid, deleted = deletions[0].split(" ", 1)
    assert deleted == PATH and int(pid) not in (server_pid, os.getpid())
    with ConversationStore.open(url) as store:
        assert store.pending_approvals() == []
        assert store.status("ops").status == "idle"
        messages = store.messages("ops")
        assert [m["role"] for m in messages] == ["user", "assistant"]
        part = _tool_part(messages[-1])
        assert part["state"] == "output-available"
        assert part["output"] == f"deleted {PATH}"
        assert part["approval"]["approved"] is True
        assert _text(messages[-1]) == f"Done: deleted {PATH}"
        (decision,) = store.history("ops", kinds=["approval-responded"])
        assert decision.actor == "user:ann"
    # The answer ended: its LangGraph thread is gone; chatledger's log holds what it said.
    thread = {"configurable": {"thread_id": f"chatledger:default:ops:{messages[-1]['id']}"}}
    assert _checkpoint(url, thread) is None


def _checkpoint(url: str, thread: dict[str, Any]) -> Any:
    """The thread's checkpoint, read with a checkpointer closed afterwards (its pool or file)."""
    saver = checkpointer_for(url)
    try:
        return saver.get_tuple(thread)
    finally:
        saver.conn.close()


@pytest.mark.parametrize("ai_sdk", [6, 7])
def test_a_denial_resumes_the_graph_without_running_the_tool(
    durable_backend: Backend, agent_env: Path, ai_sdk: int
) -> None:
    url = durable_backend.url
    reason = "those logs are needed for the audit"

    async def turn() -> list[dict[str, Any]]:
        with ConversationStore.open(url, ai_sdk=ai_sdk) as store:
            app = create_app(store, responder=langgraph_agent.responder(), run_continuations=False)
            async with client_of(app) as client:
                return sse_events(await client.post("/api/chat", json=send_body("d", [QUESTION])))

    assert [c["type"] for c in asyncio.run(turn())] == PAUSED
    with ConversationStore.open(url) as store:
        assert store.ai_sdk_of("d") == ai_sdk
        paused_id = store.messages("d")[-1]["id"]
    thread = {"configurable": {"thread_id": f"chatledger:default:d:{paused_id}"}}
    assert _checkpoint(url, thread) is not None  # kept while it waits

    async def resume() -> int:
        with ConversationStore.open(url) as store:
            store.respond_to_approval(
                "d", tool_call_id=CALL_ID, approved=False, reason=reason, actor="user:bob"
            )
            return await run_worker(
                store, langgraph_agent.responder(), tenants=[store.tenant], grace_seconds=0,
                once=True,
            )  # fmt: skip

    assert asyncio.run(resume()) == 1
    assert not agent_env.exists()
    with ConversationStore.open(url) as store:
        message = store.messages("d")[-1]
        part = _tool_part(message)
        assert part["state"] == "output-denied"
        assert part["approval"] == {**part["approval"], "approved": False, "reason": reason}
        assert _text(message) == f"Done: not deleted ({reason})"
        assert store.status("d").status == "idle"


def test_a_plain_question_streams_word_by_word_and_later_turns_see_the_history(
    durable_backend: Backend, agent_env: Path
) -> None:
    url = durable_backend.url
    responder = langgraph_agent.responder()

    async def ask(chat: str, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        with ConversationStore.open(url) as store:
            app = create_app(store, responder=responder)
            async with client_of(app) as client:
                return sse_events(await client.post("/api/chat", json=send_body(chat, messages)))

    hello = {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "hello there"}]}
    chunks = asyncio.run(ask("p", [hello]))
    deltas = [c["delta"] for c in chunks if c["type"] == "text-delta"]
    assert deltas == ["You", " ", "said:", " ", "hello", " ", "there"]
    with ConversationStore.open(url) as store:
        first = store.messages("p")
    again = {"id": "u2", "role": "user", "parts": [{"type": "text", "text": "and again"}]}
    asyncio.run(ask("p", [*first, again]))
    seen = responder.requests[-1]
    assert [m["id"] for m in seen.messages] == ["u1", first[1]["id"], "u2"]
    with ConversationStore.open(url) as store:
        assert _text(store.messages("p")[-1]) == "You said: and again"


def test_a_continuation_without_a_durable_checkpoint_fails_saying_so() -> None:
    fresh = LangGraphResponder(build_graph(InMemorySaver()))  # another process's memory
    request = ResponderRequest("c", "default", [QUESTION], "continuation", "m1")
    with pytest.raises(NothingToResumeError, match="checkpointer must be durable"):
        list(fresh.respond(request))
    with pytest.raises(ValueError, match="compiled with a checkpointer"):
        LangGraphResponder(build_graph(None))


def test_checkpoints_of_a_sqlite_store_live_beside_it(tmp_path: Path) -> None:
    saver = checkpointer_for(f"sqlite:///{tmp_path / 'chat.db'}")
    saver.conn.close()
    assert (tmp_path / "chat.db.langgraph").exists()
    assert not (tmp_path / "chat.db").exists()


def test_responder_names_a_compiled_graph_directly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(langgraph_agent.CHECKPOINTS_ENV, f"sqlite:///{tmp_path / 'chat.db'}")
    loaded = load_responder("tests.support.langgraph_agent:graph", 0)
    assert isinstance(loaded, LangGraphResponder) and loaded.actor == "agent:langgraph"
    with pytest.raises(CommandError, match="compiled with a checkpointer"):
        load_responder("tests.support.langgraph_agent:bare_graph", 0)


def test_resume_with_gives_the_interrupt_what_the_graph_expects() -> None:
    """A graph whose tool expects a plain bool from ``interrupt()``; one process, a memory saver."""
    from langchain_core.tools import tool
    from langgraph.graph import START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode, tools_condition
    from langgraph.types import interrupt

    @tool
    def delete_file(path: str) -> str:
        """Delete a file."""
        return f"deleted {path}" if interrupt(f"delete {path}?") is True else "kept"

    model = langgraph_agent.OpsModel()
    builder = StateGraph(MessagesState)
    builder.add_node("agent", lambda state: {"messages": [model.invoke(state["messages"])]})
    builder.add_node("tools", ToolNode([delete_file]))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    responder = LangGraphResponder(
        builder.compile(checkpointer=InMemorySaver()),
        resume_with=lambda decision: decision["approved"],
    )
    first = list(responder.respond(ResponderRequest("c", "t", [QUESTION], "submit-message", "m")))
    (asked,) = [c for c in first if c["type"] == "tool-approval-request"]
    assert asked["toolCallId"] == CALL_ID  # the one waiting call: the interrupt names none
    answered = {
        "id": "m",
        "role": "assistant",
        "parts": [
            {"type": "tool-delete_file", "toolCallId": CALL_ID, "state": "approval-responded",
             "input": {"path": PATH}, "approval": {"id": asked["approvalId"], "approved": True}},
        ],
    }  # fmt: skip
    resumed = ResponderRequest("c", "t", [QUESTION, answered], "continuation", "m")
    chunks = list(responder.respond(resumed))
    outputs = [c["output"] for c in chunks if c["type"] == "tool-output-available"]
    assert outputs == [f"deleted {PATH}"]
