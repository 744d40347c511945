"""``ChatLedgerConversationStore`` with the real Pydantic AI (``pydantic-ai-slim``) and an offline model.

The model is Pydantic AI's own ``FunctionModel`` (no network): it answers
from the messages it is sent and remembers them, so the tests can check what
the model saw. A real ``pydantic_ai.Agent`` runs conversations loaded from and
saved to chatledger through the ``ConversationStore`` contract: two-run
chats, a tool that needs approval denied with ``ToolDenied`` and approved,
both resumed by a new store on the same database, branches, forks, listing
and deletion. Every test runs on memory, SQLite and PostgreSQL.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import Agent, DeferredToolRequests, DeferredToolResults, ModelRetry, ToolDenied
from pydantic_ai.conversation import Conversation
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from chatledger import ConversationStore
from chatledger.adapters.frameworks.pydantic_ai import ChatLedgerConversationStore
from tests.integration.conftest import Backend

ROOT = Path(__file__).resolve().parents[2]
ACTOR = "agent:pydantic-ai"


class ScriptedModel:
    """A ``FunctionModel`` function: answers tool returns, calls ``delete_file`` when asked to clean."""

    def __init__(self) -> None:
        self.seen: list[list[ModelMessage]] = []

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.seen.append(list(messages))
        last = messages[-1]
        returns = [p for p in last.parts if isinstance(p, ToolReturnPart)]
        if returns:
            said = "; ".join(f"{r.outcome}: {r.content}" for r in returns)
            return ModelResponse(parts=[TextPart(f"tool said {said}")])
        prompt = next(p.content for p in last.parts if isinstance(p, UserPromptPart))
        if isinstance(prompt, str) and prompt.startswith("clean"):
            call = ToolCallPart("delete_file", {"path": "/tmp/x"}, tool_call_id="call_1")
            return ModelResponse(parts=[call])
        turns = sum(1 for m in messages if isinstance(m, ModelRequest))
        return ModelResponse(parts=[TextPart(f"answer {turns} to {prompt}")])


DELETED: list[str] = []


def make_agent(model: ScriptedModel) -> Agent[None, str | DeferredToolRequests]:
    """An agent whose ``delete_file`` tool needs a human's approval."""
    agent: Agent[None, str | DeferredToolRequests] = Agent(
        FunctionModel(model), output_type=[str, DeferredToolRequests]
    )

    @agent.tool_plain(requires_approval=True)
    def delete_file(path: str) -> str:
        """Delete a file (needs approval)."""
        DELETED.append(path)
        return f"deleted {path}"

    return agent


def run(coroutine: Any) -> Any:
    """Run a coroutine to completion (the tests are synchronous)."""
    return asyncio.run(coroutine)


@pytest.fixture(autouse=True)
def _forget_deletions() -> None:
    DELETED.clear()


def _parts(messages: list[dict[str, Any]]) -> list[tuple[str, str, str | None]]:
    return [
        (message["role"], part["type"], part.get("state"))
        for message in messages
        for part in message["parts"]
    ]


def test_two_runs_with_history_loaded_from_the_store(backend: Backend) -> None:
    model = ScriptedModel()
    agent = make_agent(model)
    pai = ChatLedgerConversationStore(backend.open())

    first = run(agent.run("hello", conversation=Conversation(conversation_id="chat-1")))
    assert first.output == "answer 1 to hello"
    assert run(pai.save(first))  # entries stored

    # A new store on the same database: the contract's way (conversation=) ...
    other = ChatLedgerConversationStore(backend.other_store(pai.store))
    loaded = run(other.load("chat-1"))
    assert loaded is not None
    assert loaded.messages == first.all_messages()
    second = run(agent.run("and then?", conversation=loaded))
    assert second.output == "answer 2 to and then?"
    assert model.seen[-1][:2] == first.all_messages()  # the model saw the stored history
    run(other.save(second))

    # ... and plain message_history= with the loaded messages.
    loaded = run(other.load("chat-1"))
    assert loaded is not None
    assert loaded.messages == second.all_messages()
    third = run(agent.run("more", message_history=loaded.messages))
    assert third.output == "answer 3 to more"
    assert model.seen[-1][:4] == second.all_messages()
    saved = Conversation(
        messages=third.all_messages(), conversation_id="chat-1", revision=loaded.revision
    )
    assert len(run(other.save(saved))) == 2  # only the new request and response

    final = run(ChatLedgerConversationStore(pai.store).load("chat-1"))
    assert final is not None and final.messages == third.all_messages()
    view = pai.store.messages("chat-1")
    texts = [(m["role"], m["parts"][0].get("text")) for m in view]
    assert texts == [
        ("user", "hello"),
        ("assistant", "answer 1 to hello"),
        ("user", "and then?"),
        ("assistant", "answer 2 to and then?"),
        ("user", "more"),
        ("assistant", "answer 3 to more"),
        ("system", None),  # the record marker
    ]
    assert [m["id"] for m in view[:-1]] == [entry.id for entry in run(other.load_entries("chat-1"))]
    assert {entry.actor for entry in pai.store.history("chat-1")} == {ACTOR}


def _pause(backend: Backend) -> tuple[ScriptedModel, ChatLedgerConversationStore]:
    """Run until the agent asks to delete a file; the run ends with DeferredToolRequests."""
    model = ScriptedModel()
    pai = ChatLedgerConversationStore(backend.open())
    result = run(
        make_agent(model).run("clean /tmp", conversation=Conversation(conversation_id="c"))
    )
    assert isinstance(result.output, DeferredToolRequests)
    assert [call.tool_call_id for call in result.output.approvals] == ["call_1"]
    run(pai.save(result))
    status = pai.store.status("c")
    assert status.status == "awaiting-approval"
    assert [call.tool_call_id for call in status.waiting_for] == ["call_1"]
    assert [a.tool_call_id for a in pai.store.pending_approvals()] == ["call_1"]
    return model, pai


def test_denial_with_a_message_resumed_from_storage(backend: Backend) -> None:
    _, first = _pause(backend)
    store = backend.other_store(first.store)
    del first  # the process state is dropped: a new store reads everything back

    pai = ChatLedgerConversationStore(store)
    model = ScriptedModel()
    loaded = run(pai.load("c"))
    assert loaded is not None and loaded.deferred_tool_requests is not None
    call = loaded.deferred_tool_requests.approvals[0]
    assert (call.tool_name, call.args, call.tool_call_id) == (
        "delete_file",
        {"path": "/tmp/x"},
        "call_1",
    )

    # The human's decision, audited with the human as the actor ...
    run(
        pai.respond_to_approval(
            "c", "call_1", approved=False, actor="user:alice", reason="not in production"
        )
    )
    # ... and given to the run.
    results = DeferredToolResults(approvals={"call_1": ToolDenied("not in production")})
    resumed = run(make_agent(model).run(conversation=loaded, deferred_tool_results=results))
    assert resumed.output == "tool said denied: not in production"
    assert DELETED == []
    denial = model.seen[-1][-1].parts[0]
    assert isinstance(denial, ToolReturnPart)
    assert (denial.tool_call_id, denial.outcome, denial.content) == (
        "call_1",
        "denied",
        "not in production",
    )
    run(pai.save(resumed))

    again = run(ChatLedgerConversationStore(store).load("c"))
    assert again is not None
    assert again.messages == resumed.all_messages()
    assert again.deferred_tool_requests is None
    part = store.messages("c")[1]["parts"][0]
    assert part["state"] == "output-denied"
    assert part["approval"]["approved"] is False
    assert part["approval"]["reason"] == "not in production"
    assert store.status("c").status != "awaiting-approval"

    decisions = store.history("c", kinds=["approval-responded"])
    assert [(d.actor, d.details["approved"], d.details["reason"]) for d in decisions] == [
        ("user:alice", False, "not in production")
    ]
    assert decisions[0].time is not None
    kinds = [(entry.kind, entry.actor) for entry in store.history("c")]
    assert ("approval-responded", "user:alice") in kinds
    assert kinds.count(("message-appended", ACTOR)) >= 6  # 4 entries and 2 record markers


def test_approval_resumed_from_storage_runs_the_tool(backend: Backend) -> None:
    _, first = _pause(backend)
    store = backend.other_store(first.store)
    pai = ChatLedgerConversationStore(store)
    model = ScriptedModel()
    loaded = run(pai.load("c"))
    assert loaded is not None

    results = DeferredToolResults(approvals={"call_1": True})
    resumed = run(make_agent(model).run(conversation=loaded, deferred_tool_results=results))
    assert DELETED == ["/tmp/x"]
    assert resumed.output == "tool said success: deleted /tmp/x"
    run(pai.save(resumed))

    part = store.messages("c")[1]["parts"][0]
    assert (part["state"], part["output"]) == ("output-available", "deleted /tmp/x")
    audit = store.history("c", kinds=["approval-responded", "tool-output-added"])
    assert [(e.kind, e.actor) for e in audit] == [
        ("approval-responded", ACTOR),
        ("tool-output-added", ACTOR),
    ]
    assert audit[0].position < audit[1].position and audit[0].time <= audit[1].time
    reloaded = run(ChatLedgerConversationStore(store).load("c"))
    assert reloaded is not None and reloaded.messages == resumed.all_messages()


def test_branch_fork_list_and_delete(backend: Backend) -> None:
    model = ScriptedModel()
    agent = make_agent(model)
    pai = ChatLedgerConversationStore(backend.open())
    result = run(agent.run("one", conversation=Conversation(conversation_id="b")))
    run(pai.save(result))
    result = run(agent.run("two", conversation=result.conversation))
    run(pai.save(result))
    old_head = run(pai.load_entries("b"))[-1].id

    # Regenerate the second turn: the history it leaves stays stored, as a branch.
    branched = run(pai.branch("b", at=2, expected_revision=result.conversation.revision))
    other = run(agent.run("deux", conversation=branched))
    run(pai.save(other))
    fresh = ChatLedgerConversationStore(backend.other_store(pai.store))
    loaded = run(fresh.load("b"))
    assert loaded is not None and loaded.messages == other.all_messages()
    assert [m["parts"][0].get("text") for m in pai.store.messages("b")[:4]] == [
        "one",
        "answer 1 to one",
        "deux",
        "answer 2 to deux",
    ]
    assert pai.store.history("b", kinds=["messages-cut"])  # the cut branch stays in the log

    # Back to the old branch, from a store that never saw it (re-read from the log).
    back = run(fresh.branch("b", from_entry=old_head, expected_revision=loaded.revision))
    assert back.messages == result.all_messages()
    reloaded = run(ChatLedgerConversationStore(pai.store).load("b"))
    assert reloaded is not None and reloaded.messages == result.all_messages()

    fork = run(fresh.fork("b", at=2, new_conversation_id="b-fork"))
    assert run(fresh.load("b-fork")).messages == result.all_messages()[:2]
    listed = [record.conversation_id for record in run(fresh.list_conversations())]
    assert sorted(listed) == ["b", "b-fork"]
    assert fork.conversation_id == "b-fork"

    run(fresh.delete("b"))
    assert run(fresh.load("b")) is None
    assert pai.store.messages("b") == []
    assert len(pai.store.history("b", kinds=["message-appended"])) > 4  # the log keeps them
    assert [r.conversation_id for r in run(fresh.list_conversations())] == ["b-fork"]


def test_a_stale_revision_is_refused(backend: Backend) -> None:
    from pydantic_ai.conversation_store import ConversationConflict

    agent = make_agent(ScriptedModel())
    pai = ChatLedgerConversationStore(backend.open())
    result = run(agent.run("one", conversation=Conversation(conversation_id="s")))
    run(pai.save(result))
    loaded = run(pai.load("s"))
    assert loaded is not None
    run(pai.save(run(agent.run("two", conversation=loaded))))
    stale = run(agent.run("also two", conversation=loaded))
    with pytest.raises(ConversationConflict):
        run(pai.save(stale))


RESUME_SCRIPT = """
import asyncio, json, sys
from pydantic_ai import DeferredToolResults, ToolDenied
from chatledger import ConversationStore
from chatledger.adapters.frameworks.pydantic_ai import ChatLedgerConversationStore
from tests.integration.test_pydantic_ai_store import DELETED, ScriptedModel, make_agent

async def main() -> None:
    pai = ChatLedgerConversationStore(ConversationStore.open(sys.argv[1]))
    loaded = await pai.load("c")
    waiting = [call.tool_call_id for call in loaded.deferred_tool_requests.approvals]
    await pai.respond_to_approval(
        "c", "call_1", approved=False, actor="user:bob", reason="not in production"
    )
    results = DeferredToolResults(approvals={"call_1": ToolDenied("not in production")})
    model = ScriptedModel()
    result = await make_agent(model).run(conversation=loaded, deferred_tool_results=results)
    await pai.save(result)
    seen = model.seen[-1][-1].parts[0]
    print(json.dumps({"waiting": waiting, "output": result.output, "deleted": DELETED,
                      "seen": [seen.outcome, seen.content]}))

asyncio.run(main())
"""


def test_a_paused_run_is_denied_and_resumed_in_a_new_process(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'pydantic-ai.db'}"
    store = ConversationStore.open(url)
    pai = ChatLedgerConversationStore(store)
    paused = run(
        make_agent(ScriptedModel()).run(
            "clean /tmp", conversation=Conversation(conversation_id="c")
        )
    )
    run(pai.save(paused))

    child = subprocess.run(
        [sys.executable, "-c", RESUME_SCRIPT, url],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )

    assert child.returncode == 0, child.stderr
    report = json.loads(child.stdout.strip().splitlines()[-1])
    assert report == {
        "waiting": ["call_1"],
        "output": "tool said denied: not in production",
        "deleted": [],
        "seen": ["denied", "not in production"],
    }
    loaded = run(pai.load("c"))  # the first store sees the other process's writes
    assert loaded is not None and len(loaded.messages) == 4
    assert loaded.messages[:2] == paused.all_messages()
    decisions = store.history("c", kinds=["approval-responded"])
    assert [(d.actor, d.details["reason"]) for d in decisions] == [
        ("user:bob", "not in production")
    ]
    store.close()


def test_an_interrupted_write_leaves_the_last_saved_conversation(backend: Backend) -> None:
    agent = make_agent(ScriptedModel())
    pai = ChatLedgerConversationStore(backend.open())
    first = run(agent.run("one", conversation=Conversation(conversation_id="w")))
    run(pai.save(first))
    # A write that crashed after its cut: the record marker is gone from the view.
    marker = pai.store.messages("w")[-1]
    pai.store.cut("w", marker["id"], trigger="pydantic-ai-save", actor=ACTOR)

    fresh = ChatLedgerConversationStore(backend.other_store(pai.store))
    loaded = run(fresh.load("w"))
    assert loaded is not None and loaded.messages == first.all_messages()
    second = run(agent.run("two", conversation=loaded))
    run(fresh.save(second))
    again = run(ChatLedgerConversationStore(pai.store).load("w"))
    assert again is not None and again.messages == second.all_messages()
    assert [m["role"] for m in pai.store.messages("w")] == [
        "user",
        "assistant",
        "user",
        "assistant",
        "system",
    ]
    run(fresh.delete("w"))
    assert run(ChatLedgerConversationStore(pai.store).load("w")) is None


def test_tool_results_and_retries_land_on_the_call(backend: Backend) -> None:
    attempts: list[str] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        asked = sum(1 for m in messages if isinstance(m, ModelResponse))
        if asked < 2:
            return ModelResponse(parts=[ToolCallPart("lookup", {"key": "a"}, f"call_{asked}")])
        return ModelResponse(parts=[TextPart("done")])

    agent = Agent(FunctionModel(model))

    @agent.tool_plain
    def lookup(key: str) -> dict[str, Any]:
        """Look a key up (fails the first time)."""
        attempts.append(key)
        if len(attempts) == 1:
            raise ModelRetry("try again")
        return {"key": key, "value": 1}

    pai = ChatLedgerConversationStore(backend.open(), actor="agent:lookup-bot")
    result = run(agent.run("look up a", conversation=Conversation(conversation_id="t")))
    assert result.output == "done"
    run(pai.save(result))

    loaded = run(ChatLedgerConversationStore(backend.other_store(pai.store)).load("t"))
    assert loaded is not None and loaded.messages == result.all_messages()
    calls = [
        part
        for message in pai.store.messages("t")
        for part in message["parts"]
        if part["type"] == "dynamic-tool"
    ]
    assert [(c["toolCallId"], c["state"]) for c in calls] == [
        ("call_0", "output-error"),
        ("call_1", "output-available"),
    ]
    assert "try again" in calls[0]["errorText"]
    assert calls[1]["output"] == {"key": "a", "value": 1}
    outputs = pai.store.history("t", kinds=["tool-output-added"])
    assert [(e.actor, e.details["toolCallId"]) for e in outputs] == [
        ("agent:lookup-bot", "call_0"),
        ("agent:lookup-bot", "call_1"),
    ]


def test_deleting_after_a_write_interrupted_at_the_first_message(backend: Backend) -> None:
    agent = make_agent(ScriptedModel())
    pai = ChatLedgerConversationStore(backend.open())
    first = run(agent.run("one", conversation=Conversation(conversation_id="e")))
    run(pai.save(first))
    pai.store.cut("e", pai.store.messages("e")[0]["id"], trigger="pydantic-ai-save", actor=ACTOR)
    assert pai.store.messages("e") == []

    loaded = run(pai.load("e"))  # the last saved record, from the log
    assert loaded is not None and loaded.messages == first.all_messages()
    run(pai.delete("e"))
    assert run(ChatLedgerConversationStore(pai.store).load("e")) is None
    cuts = pai.store.history("e", kinds=["messages-cut"])
    assert [(c.actor, c.details["trigger"]) for c in cuts][-1] == (ACTOR, "pydantic-ai-delete")
    again = run(agent.run("anew", conversation=Conversation(conversation_id="e")))
    run(pai.save(again))  # the id can be used again
    reloaded = run(ChatLedgerConversationStore(pai.store).load("e"))
    assert reloaded is not None and reloaded.messages == again.all_messages()
