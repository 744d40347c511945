"""Only a conversation's owner continues it: a framework's conversation is never answered by a stranger.

The issue's repro, with the real OpenAI Agents and Pydantic AI packages, on
SQLite and PostgreSQL: a run pauses on a tool needing approval; a human
approves through chatledger (``chatledger approve``, the HTTP approvals route,
the inbox page), which queues a continuation request; the framework resumes
its run; then ``chatledger worker --once --grace-seconds 0`` and serve's
sweep run. The worker's demo responder must not write into the agent's
conversation, and no request is left pending.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest
from agents import Runner
from pydantic_ai import DeferredToolResults
from pydantic_ai.conversation import Conversation

from chatledger import ConversationStore
from chatledger.adapters.cli.commands import main
from chatledger.adapters.frameworks.openai_agents import ChatLedgerSession
from chatledger.adapters.frameworks.pydantic_ai import ChatLedgerConversationStore
from chatledger.adapters.http.app import create_app
from chatledger.adapters.responders.scripted import demo_responder
from tests.integration import test_openai_agents_session as agents_support
from tests.integration import test_pydantic_ai_store as pai_support
from tests.integration.conftest import Backend
from tests.integration.http_support import client_of

ENTRY_POINTS = ("cli", "http", "page")


@pytest.fixture(autouse=True)
def _forget_deletions() -> None:
    agents_support.DELETED.clear()
    pai_support.DELETED.clear()


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


def approve(entry: str, url: str, chat: str, call: str, owner: str) -> None:
    """Approve ``call`` as a person would through ``entry``; the continuation is queued."""
    if entry == "cli":
        assert main(["approve", chat, call, "--actor", "user:ann", "--url", url]) == 0
        return
    run(_approve_over_http(url, chat, call, owner, page=entry == "page"))


async def _approve_over_http(url: str, chat: str, call: str, owner: str, *, page: bool) -> None:
    with ConversationStore.open(url) as store:
        app = create_app(store, responder=demo_responder(delay=0))
        async with client_of(app) as client:
            body: dict[str, Any] = {"toolCallId": call, "approved": True}
            if page:  # what pages.js posts for the inbox page's form
                inbox = (await client.get("/ui/approvals")).text
                form = re.search(r'<form class="answer" data-chat-id="([^"]+)" '
                                 r'data-tool-call-id="([^"]+)"', inbox)  # fmt: skip
                assert form is not None, inbox
                assert form.groups() == (chat, call)
            answered = await client.post(f"/api/chats/{chat}/approvals", json=body)
            assert answered.status_code == 200, answered.text
            assert answered.json()["continuationRequested"] is True
            status = (await client.get(f"/api/chats/{chat}/status")).json()
            assert (status["status"], status["owner"]) == ("ready-to-continue", owner)
            assert status["continuationRequest"] and status["continuationRequestedAt"]
            if (
                page
            ):  # the inbox page shows the request waiting for its owner, and the page the owner
                inbox = (await client.get("/ui/approvals")).text
                assert "queued-request" in inbox and owner in inbox
                page_html = (await client.get("/ui/conversation", params={"id": chat})).text
                assert f'id="chat-owner">{owner}<' in page_html


def sweep_everything(url: str) -> None:
    """What a stranger runs: ``chatledger worker --once --grace-seconds 0``, and serve's sweep."""
    assert main(["worker", "--once", "--grace-seconds", "0", "--delay", "0", "--url", url]) == 0

    async def serve_sweep() -> int:
        with ConversationStore.open(url) as store:
            app = create_app(store, responder=demo_responder(delay=0), continuation_grace_seconds=0)
            continuations = app.state.chatledger.continuations
            return int(await continuations.sweep_once())

    assert run(serve_sweep()) == 0


@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_an_openai_agents_conversation_is_continued_by_the_agent_only(
    durable_backend: Backend, entry: str
) -> None:
    url = durable_backend.url
    with ConversationStore.open(url) as store:
        session = ChatLedgerSession(store, "r")
        model = agents_support.FakeModel(
            [agents_support.call("delete_file", {"path": "/tmp/y"}, "call_3")]
        )
        agent = agents_support.approval_agent(model)
        paused = run(Runner.run(agent, "Delete /tmp/y", session=session))
        run(session.save_run_state(paused.to_state()))
        assert store.status("r").owner == "openai-agents"

    approve(entry, url, "r", "call_3", "openai-agents")
    sweep_everything(url)  # the request waits for its owner: nobody else takes it
    with ConversationStore.open(url) as store:
        status = store.status("r")
        assert (status.status, status.owner) == ("ready-to-continue", "openai-agents")
        (waiting,) = store.pending_continuations()
        assert (waiting.owner, waiting.claimed_by) == ("openai-agents", None)

        session = ChatLedgerSession(store, "r")
        agent = agents_support.approval_agent(
            agents_support.FakeModel([agents_support.say("Done.")])
        )
        state = run(session.load_run_state(agent))
        assert state is not None
        done = run(Runner.run(agent, state, session=session))
        assert done.final_output == "Done." and agents_support.DELETED == ["/tmp/y"]
        items = run(session.get_items())
        messages = store.messages("r")

    sweep_everything(url)
    with ConversationStore.open(url) as store:
        assert store.messages("r") == messages  # untouched by the worker and the sweep
        assert run(ChatLedgerSession(store, "r").get_items()) == items
        assert store.status("r").status == "idle"
        assert store.pending_continuations() == []
        kinds = [entry.kind for entry in store.history("r")]
        assert "continuation-requested" in kinds and "continuation-retired" in kinds
        assert "continuation-claimed" not in kinds and "stream-opened" not in kinds
        (retired,) = store.history("r", kinds=["continuation-retired"])
        assert retired.actor == "agent:openai-agents"


@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_a_pydantic_ai_conversation_is_continued_by_the_agent_only(
    durable_backend: Backend, entry: str
) -> None:
    url = durable_backend.url
    with ConversationStore.open(url) as store:
        pai = ChatLedgerConversationStore(store)
        result = run(
            pai_support.make_agent(pai_support.ScriptedModel()).run(
                "clean /tmp", conversation=Conversation(conversation_id="c")
            )
        )
        run(pai.save(result))
        assert store.status("c").owner == "pydantic-ai"

    approve(entry, url, "c", "call_1", "pydantic-ai")
    sweep_everything(url)
    with ConversationStore.open(url) as store:
        status = store.status("c")
        assert (status.status, status.owner) == ("ready-to-continue", "pydantic-ai")
        pai = ChatLedgerConversationStore(store)
        loaded = run(pai.load("c"))
        assert loaded is not None
        results = run(pai.deferred_tool_results("c"))  # what the person decided, in chatledger
        assert results == DeferredToolResults(approvals={"call_1": True})
        agent = pai_support.make_agent(pai_support.ScriptedModel())
        resumed = run(agent.run(conversation=loaded, deferred_tool_results=results))
        assert resumed.output == "tool said success: deleted /tmp/x"
        run(pai.save(resumed))
        messages = store.messages("c")

    sweep_everything(url)
    with ConversationStore.open(url) as store:
        assert store.messages("c") == messages
        assert store.pending_continuations() == []
        assert store.status("c").status != "ready-to-continue"
        kinds = [entry.kind for entry in store.history("c")]
        assert "continuation-retired" in kinds and "continuation-claimed" not in kinds
        assert pai_support.DELETED == ["/tmp/x"]


def test_a_pydantic_ai_run_resumes_from_a_denial_recorded_in_chatledger(
    durable_backend: Backend,
) -> None:
    url = durable_backend.url
    model = pai_support.ScriptedModel()
    with ConversationStore.open(url) as store:
        pai = ChatLedgerConversationStore(store)
        result = run(
            pai_support.make_agent(model).run(
                "clean /tmp", conversation=Conversation(conversation_id="c")
            )
        )
        run(pai.save(result))
        assert run(pai.deferred_tool_results("c")) is None  # nobody answered yet
    denial = ["deny", "c", "call_1", "--reason", "not in production", "--actor", "user:ann"]
    assert main([*denial, "--url", url]) == 0
    with ConversationStore.open(url) as store:
        pai = ChatLedgerConversationStore(store)
        loaded = run(pai.load("c"))
        results = run(pai.deferred_tool_results("c"))
        assert results is not None
        resumed = run(
            pai_support.make_agent(model).run(conversation=loaded, deferred_tool_results=results)
        )
        assert resumed.output == "tool said denied: not in production"
        assert pai_support.DELETED == []
        run(pai.save(resumed))
        assert store.pending_continuations() == []
        assert run(pai.deferred_tool_results("c")) is None  # resumed: nothing waits
