"""A paused OpenAI Agents run kept in chatledger: the inbox sees it, any process resumes it.

The real Runner pauses on a tool that needs approval; ``save_run_state``
records the pause in the conversation, so ``status()`` and
``pending_approvals()`` show the call; a human answers through chatledger
(as the inbox, the HTTP route or ``chatledger approve|deny`` do) and another
process resumes the run with ``load_run_state``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from agents import Runner

from chatledger.adapters.frameworks.openai_agents import ChatLedgerSession
from chatledger.domain.errors import InvalidInputError
from tests.integration.conftest import Backend
from tests.integration.test_openai_agents_session import (
    DELETED,
    FakeModel,
    approval_agent,
    assistant,
    call,
    output,
    run,
    say,
)

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _forget_deletions() -> None:
    DELETED.clear()


def _pause(store: object, chat: str = "r") -> tuple[ChatLedgerSession, list[object]]:
    session = ChatLedgerSession(store, chat)  # type: ignore[arg-type]
    model = FakeModel([call("delete_file", {"path": "/tmp/y"}, "call_3")])
    paused = run(Runner.run(approval_agent(model), "Delete /tmp/y", session=session))
    assert [item.call_id for item in paused.interruptions] == ["call_3"]
    before = run(session.get_items())
    run(session.save_run_state(paused.to_state()))
    return session, before


def test_a_saved_pause_shows_in_status_and_the_inbox(backend: Backend) -> None:
    store = backend.open()
    session, before = _pause(store)
    assert run(session.get_items()) == before  # the items are untouched
    status = store.status("r")
    assert status.status == "awaiting-approval"
    assert [call.tool_call_id for call in status.waiting_for] == ["call_3"]
    assert [a.tool_call_id for a in store.pending_approvals()] == ["call_3"]


def test_an_approval_in_chatledger_resumes_the_run(backend: Backend) -> None:
    store = backend.open()
    _pause(store)
    store.respond_to_approval(
        "r", tool_call_id="call_3", approved=True, actor="user:ann", auto_continue=False
    )
    session = ChatLedgerSession(backend.other_store(store), "r")
    agent = approval_agent(FakeModel([say("Done.")]))
    state = run(session.load_run_state(agent))
    assert state is not None
    done = run(Runner.run(agent, state, session=session))
    assert done.final_output == "Done." and DELETED == ["/tmp/y"]
    items = run(session.get_items())
    assert items[-2:] == [output("call_3", "deleted /tmp/y"), assistant("Done.")]
    assert store.status("r").status == "idle"
    assert run(session.load_run_state(agent)) is None  # resumed: nothing waits any more


def test_a_denial_in_chatledger_rejects_with_its_reason(backend: Backend) -> None:
    store = backend.open()
    _pause(store)
    store.respond_to_approval(
        "r",
        tool_call_id="call_3",
        approved=False,
        reason="not on Fridays",
        actor="user:ann",
        auto_continue=False,
    )
    session = ChatLedgerSession(store, "r")
    model = FakeModel([say("OK, I won't.")])
    agent = approval_agent(model)
    state = run(session.load_run_state(agent))
    assert state is not None
    done = run(Runner.run(agent, state, session=session))
    assert done.final_output == "OK, I won't." and DELETED == []
    told = [i for i in model.inputs[-1] if i.get("type") == "function_call_output"]
    assert told and told[-1]["output"] == "not on Fridays"
    assert run(session.load_run_state(agent)) is None


def test_saving_a_state_whose_calls_the_session_lacks_is_refused(backend: Backend) -> None:
    store = backend.open()
    session, _ = _pause(store)
    other = ChatLedgerSession(store, "empty")
    run(other.add_items([{"role": "user", "content": "hi"}]))
    state = run(session.load_run_state(approval_agent(FakeModel())))
    with pytest.raises(InvalidInputError, match="none of the paused calls"):
        run(other.save_run_state(state))


RESUME = """
import asyncio, json, sys
from agents import Runner, set_tracing_disabled
from chatledger import ConversationStore
from chatledger.adapters.frameworks.openai_agents import ChatLedgerSession
from tests.integration.test_openai_agents_session import DELETED, FakeModel, approval_agent, say

set_tracing_disabled(True)

async def main():
    store = ConversationStore.open(sys.argv[1])
    session = ChatLedgerSession(store, "r")
    agent = approval_agent(FakeModel([say("Done elsewhere.")]))
    state = await session.load_run_state(agent)
    done = await Runner.run(agent, state, session=session)
    print(json.dumps({"final": done.final_output, "deleted": DELETED}))
    store.close()

asyncio.run(main())
"""


def test_a_paused_run_is_approved_from_the_cli_and_resumed_in_another_process(
    tmp_path: Path,
) -> None:
    from chatledger import ConversationStore
    from chatledger.adapters.cli.commands import main

    url = f"sqlite:///{tmp_path / 'runs.db'}"
    with ConversationStore.open(url) as store:
        _pause(store)
    assert (
        main(["approve", "r", "call_3", "--actor", "user:ann", "--no-continue", "--url", url]) == 0
    )
    child = subprocess.run(
        [sys.executable, "-c", RESUME, url],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    assert child.returncode == 0, child.stderr
    report = json.loads(child.stdout.strip().splitlines()[-1])
    assert report == {"final": "Done elsewhere.", "deleted": ["/tmp/y"]}
    with ConversationStore.open(url) as store:
        assert store.status("r").status == "idle"
        assert store.history("r", kinds=["approval-responded"])[-1].actor == "user:ann"
