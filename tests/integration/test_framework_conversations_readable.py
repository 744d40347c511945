"""A framework's conversation reads as a conversation: ``chatledger show`` and the page fold its bookkeeping.

With the real OpenAI Agents and Pydantic AI packages, on SQLite and
PostgreSQL: the plug-ins keep a paused run's state (``openaiRunState``), each
item or entry's exact JSON (``openaiItem``, ``pydanticAi``) and a record
marker message (``data-pydantic-ai-record``) in the conversation. ``show``
and the conversation page give the user's text and the answer, not those,
and say in one line what they left out; ``messages()``, ``show --json`` and
the log keep everything.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import pytest
from agents import Runner
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

RUN_STATE = ("$schemaVersion", "current_turn")
"""Text of the OpenAI Agents run state's JSON."""
RECORD_MARKER = "data-pydantic-ai-record"


@pytest.fixture(autouse=True)
def _forget_deletions() -> None:
    agents_support.DELETED.clear()
    pai_support.DELETED.clear()


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


def show(capsys: pytest.CaptureFixture[str], url: str, chat: str, *flags: str) -> str:
    capsys.readouterr()
    assert main(["show", chat, *flags, "--url", url]) == 0
    return capsys.readouterr().out


def page(url: str, chat: str) -> tuple[str, str]:
    """The conversation page's messages pane (not the audit timeline) and the note above it."""

    async def fetch() -> str:
        with ConversationStore.open(url) as store:
            async with client_of(create_app(store, responder=demo_responder(delay=0))) as client:
                answer = await client.get("/ui/conversation", params={"id": chat})
                assert answer.status_code == 200, answer.text
                return answer.text

    html = str(run(fetch()))
    note = re.search(r'<p id="folded-note"[^>]*>(.*?)</p>', html)
    return html.split('<div id="messages"', 1)[1].split("</section>", 1)[0], note[1] if note else ""


def test_an_openai_agents_conversation_shows_its_messages_not_the_run_state(
    durable_backend: Backend, capsys: pytest.CaptureFixture[str]
) -> None:
    url = durable_backend.url
    with ConversationStore.open(url) as store:
        session = ChatLedgerSession(store, "r")
        model = agents_support.FakeModel(
            [agents_support.call("delete_file", {"path": "/tmp/y"}, "call_3")]
        )
        paused = run(
            Runner.run(agents_support.approval_agent(model), "Delete /tmp/y", session=session)
        )
        run(session.save_run_state(paused.to_state()))
        store.respond_to_approval(
            "r", tool_call_id="call_3", approved=True, actor="user:ann", auto_continue=False
        )
        agent = agents_support.approval_agent(
            agents_support.FakeModel([agents_support.say("Done.")])
        )
        state = run(session.load_run_state(agent))
        assert run(Runner.run(agent, state, session=session)).final_output == "Done."
        kept = json.dumps(store.messages("r"))
        assert all(text in kept for text in RUN_STATE) and '"openaiItem"' in kept

    shown = show(capsys, url, "r")
    assert "Delete /tmp/y" in shown and "Done." in shown and "tool delete_file" in shown
    assert not any(text in shown for text in RUN_STATE), shown
    assert "metadata:" not in shown
    assert "framework bookkeeping not shown: metadata openaiItem, openaiRunState" in shown
    assert all(text in show(capsys, url, "r", "--json") for text in RUN_STATE)  # --json keeps all

    html, note = page(url, "r")
    assert "Delete /tmp/y" in html and "Done." in html
    assert not any(text in html for text in RUN_STATE)
    assert "framework bookkeeping not shown: metadata openaiItem, openaiRunState" in note


def test_a_pydantic_ai_conversation_shows_its_messages_not_the_record_marker(
    durable_backend: Backend, capsys: pytest.CaptureFixture[str]
) -> None:
    url = durable_backend.url
    with ConversationStore.open(url) as store:
        pai = ChatLedgerConversationStore(store)
        agent = pai_support.make_agent(pai_support.ScriptedModel())
        result = run(agent.run("hello there", conversation=Conversation(conversation_id="c")))
        run(pai.save(result))
        messages = store.messages("c")
        assert [m["parts"][0]["type"] for m in messages if m["role"] == "system"] == [RECORD_MARKER]
        assert all("pydanticAi" in m["metadata"] for m in messages)

    shown = show(capsys, url, "c")
    assert "hello there" in shown and "answer 1 to hello there" in shown
    assert RECORD_MARKER not in shown and "pai_record_" not in shown and "[system]" not in shown
    assert "metadata:" not in shown and "part_kind" not in shown
    assert ": 2 messages" in shown
    assert "framework bookkeeping not shown: metadata pydanticAi; 1 record marker" in shown
    assert RECORD_MARKER in show(capsys, url, "c", "--json")

    html, note = page(url, "c")
    assert "hello there" in html and "answer 1 to hello there" in html
    assert RECORD_MARKER not in html and 'data-role="system"' not in html
    assert "framework bookkeeping not shown: metadata pydanticAi; 1 record marker" in note
    with ConversationStore.open(url) as store:
        assert store.messages("c") == messages  # the view folded nothing in the store
