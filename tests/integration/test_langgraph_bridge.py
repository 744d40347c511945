"""``LangGraphBridge``: an app's own LangGraph loop, recorded in chatledger, resumed after a CLI decision.

On a SQLite file and on PostgreSQL, with LangGraph's durable checkpointer: the
app sends a message through the bridge and forwards the chunks it yields; the
graph pauses on its tool's ``interrupt()``, an approval in the inbox. A human
approves with ``chatledger approve``; a ``chatledger worker`` leaves the
request alone (the app owns the conversation); a second bridge (a fresh
graph and checkpointer, as another process of the app would have) resumes it,
and the tool runs once.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from chatledger import ConversationStore, NothingToContinueError
from chatledger.adapters.cli.commands import main
from chatledger.adapters.cli.worker import run_worker
from chatledger.adapters.langgraph import LANGGRAPH, LangGraphBridge, checkpointer_for
from chatledger.adapters.responders.scripted import demo_responder
from tests.integration.conftest import Backend
from tests.support import langgraph_agent
from tests.support.langgraph_agent import CALL_ID, build_graph

PATH = "/srv/cache/old"


def _bridge(store: ConversationStore, url: str) -> LangGraphBridge:
    return LangGraphBridge(store, build_graph(checkpointer_for(url)))


def test_an_apps_own_loop_pauses_on_an_approval_and_resumes_after_the_cli_decision(
    durable_backend: Backend, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = durable_backend.url
    log = tmp_path / "deleted.log"
    monkeypatch.setenv(langgraph_agent.TOOL_LOG_ENV, str(log))
    with ConversationStore.open(url) as store:
        bridge = _bridge(store, url)
        chunks = list(bridge.send("app-1", f"Please delete {PATH}", actor="user:ann"))
        assert chunks[0] == {"type": "start", "messageId": chunks[0]["messageId"]}
        asked = [c for c in chunks if c["type"] == "tool-approval-request"]
        assert [c["toolCallId"] for c in asked] == [CALL_ID]
        assert store.status("app-1").status == "awaiting-approval"
        assert store.status("app-1").owner == LANGGRAPH
        with pytest.raises(NothingToContinueError, match="awaiting-approval"):
            bridge.resume("app-1")
    assert not log.exists()

    assert main(["approve", "app-1", CALL_ID, "--actor", "user:ops", "--url", url]) == 0

    async def sweep() -> int:
        with ConversationStore.open(url) as store:
            return await run_worker(
                store, demo_responder(delay=0), tenants=[store.tenant], grace_seconds=0, once=True
            )

    assert asyncio.run(sweep()) == 0  # a worker never answers the app's conversation

    with ConversationStore.open(url) as store:
        found = _bridge(store, url).resume_next()  # another process of the app
        assert found is not None
        chat_id, resumed = found
        assert chat_id == "app-1"
        resumed_chunks: list[dict[str, Any]] = list(resumed)
        outputs = [c for c in resumed_chunks if c["type"] == "tool-output-available"]
        assert [c["output"] for c in outputs] == [f"deleted {PATH}"]
        assert resumed_chunks[-1] == {"type": "finish"}
        message = store.messages("app-1")[-1]
        text = "".join(p["text"] for p in message["parts"] if p["type"] == "text")
        assert text == f"Done: deleted {PATH}"
        assert store.status("app-1").status == "idle"
        assert store.pending_continuations() == []
        (sent,) = store.history("app-1", kinds=["message-appended"])
        assert sent.actor == "user:ann"
    assert len(log.read_text().splitlines()) == 1
