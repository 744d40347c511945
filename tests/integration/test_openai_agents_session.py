"""``ChatLedgerSession`` with the real OpenAI Agents SDK (``openai-agents``) and a scripted model.

The model is offline: ``FakeModel`` returns scripted ``ModelResponse``s (no
network, tracing off). The Runner drives real sessions: two-turn chats, a
function tool, an approval-needing tool approved and rejected, and runs
resumed from a new store and from a new process on the same database.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from agents import (
    Agent,
    Runner,
    RunState,
    Session,
    SessionSettings,
    Usage,
    function_tool,
    set_tracing_disabled,
)
from agents.items import ModelResponse
from agents.models.interface import Model
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

from chatledger import ConversationStore
from chatledger.adapters.frameworks.openai_agents import ChatLedgerSession
from tests.integration.conftest import Backend

set_tracing_disabled(True)  # offline: no trace export

ROOT = Path(__file__).resolve().parents[2]
ACTOR = "agent:openai-agents"


# -- the scripted model ---------------------------------------------------------


def say(text: str, item_id: str = "msg_1") -> ResponseOutputMessage:
    """An assistant message output."""
    content = [ResponseOutputText(type="output_text", text=text, annotations=[])]
    return ResponseOutputMessage(
        id=item_id, type="message", role="assistant", status="completed", content=content
    )


def call(name: str, arguments: dict[str, Any], call_id: str) -> ResponseFunctionToolCall:
    """A function call output."""
    return ResponseFunctionToolCall(
        id=f"fc_{call_id}",
        type="function_call",
        call_id=call_id,
        name=name,
        arguments=json.dumps(arguments),
        status="completed",
    )


class FakeModel(Model):
    """Returns the scripted outputs in order and remembers every input it was given."""

    def __init__(self, *outputs: list[Any]) -> None:
        self.outputs = list(outputs)
        self.inputs: list[Any] = []

    async def get_response(
        self,
        system_instructions: str | None,
        input: Any,
        model_settings: Any,
        tools: Any,
        output_schema: Any,
        handoffs: Any,
        tracing: Any,
        *,
        previous_response_id: str | None,
        conversation_id: str | None,
        prompt: Any,
    ) -> ModelResponse:
        self.inputs.append(json.loads(json.dumps(input)))
        if not self.outputs:
            raise AssertionError("the model was called more often than scripted")
        return ModelResponse(output=self.outputs.pop(0), usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("the tests do not stream")


DELETED: list[str] = []


@function_tool(needs_approval=True)
def delete_file(path: str) -> str:
    """Delete a file (needs a human's approval)."""
    DELETED.append(path)
    return f"deleted {path}"


@function_tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


def approval_agent(model: Model) -> Agent[Any]:
    """An agent with the approval-needing tool."""
    return Agent(name="ops", model=model, tools=[delete_file])


def run(coroutine: Any) -> Any:
    """Run a coroutine to completion (the tests are synchronous)."""
    return asyncio.run(coroutine)


def user(text: str) -> dict[str, Any]:
    return {"content": text, "role": "user"}


def assistant(text: str, item_id: str = "msg_1") -> dict[str, Any]:
    return say(text, item_id).model_dump(exclude_unset=True)


def function_call(name: str, arguments: dict[str, Any], call_id: str) -> dict[str, Any]:
    return call(name, arguments, call_id).model_dump(exclude_unset=True)


def output(call_id: str, text: str) -> dict[str, Any]:
    return {"call_id": call_id, "output": text, "type": "function_call_output"}


@pytest.fixture(autouse=True)
def _forget_deletions() -> None:
    DELETED.clear()


# -- the Runner with a ChatLedgerSession -----------------------------------------


def test_it_is_a_session() -> None:
    store = ConversationStore.open("memory://")
    try:
        assert isinstance(ChatLedgerSession(store, "chat"), Session)
    finally:
        store.close()


def test_a_two_turn_chat_is_kept_and_given_back_to_the_model(backend: Backend) -> None:
    store = backend.open()
    model = FakeModel([say("Hi Ada!")], [say("You are Ada.", "msg_2")])
    agent = Agent(name="assistant", model=model)
    session = ChatLedgerSession(store, "chat-1")

    first = run(Runner.run(agent, "Hello, I am Ada", session=session))
    second = run(Runner.run(agent, "Who am I?", session=session))

    assert (first.final_output, second.final_output) == ("Hi Ada!", "You are Ada.")
    expected = [
        user("Hello, I am Ada"),
        assistant("Hi Ada!"),
        user("Who am I?"),
        assistant("You are Ada.", "msg_2"),
    ]
    assert run(session.get_items()) == expected
    assert model.inputs[1] == expected[:3]  # the second turn saw the first
    messages = store.messages("chat-1")
    assert [(m["role"], m["parts"][0]["text"]) for m in messages] == [
        ("user", "Hello, I am Ada"),
        ("assistant", "Hi Ada!"),
        ("user", "Who am I?"),
        ("assistant", "You are Ada."),
    ]
    appended = store.history("chat-1", kinds=["message-appended"])
    assert [entry.actor for entry in appended] == [ACTOR] * 4
    assert all(entry.time.tzinfo is not None for entry in appended)
    other = backend.other_store(store)
    assert run(ChatLedgerSession(other, "chat-1").get_items()) == expected


def test_a_function_tool_call_and_its_output_land_on_one_tool_part(backend: Backend) -> None:
    store = backend.open()
    model = FakeModel([call("get_weather", {"city": "Oslo"}, "call_w")], [say("Sunny.")])
    agent = Agent(name="weather", model=model, tools=[get_weather])
    session = ChatLedgerSession(store, "chat-w", actor="agent:weather-bot")

    result = run(Runner.run(agent, "Weather in Oslo?", session=session))

    assert result.final_output == "Sunny."
    expected = [
        user("Weather in Oslo?"),
        function_call("get_weather", {"city": "Oslo"}, "call_w"),
        output("call_w", "sunny in Oslo"),
        assistant("Sunny."),
    ]
    assert run(session.get_items()) == expected
    assert model.inputs[1] == expected[:3]
    tool_message = store.messages("chat-w")[1]
    (part,) = tool_message["parts"]
    assert {
        key: part.get(key) for key in ("toolName", "toolCallId", "state", "input", "output")
    } == {
        "toolName": "get_weather",
        "toolCallId": "call_w",
        "state": "output-available",
        "input": {"city": "Oslo"},
        "output": "sunny in Oslo",
    }
    assert part["type"] == "dynamic-tool" and tool_message["role"] == "assistant"
    outputs = store.history("chat-w", kinds=["tool-output-added"])
    assert [(entry.actor, entry.details["toolCallId"]) for entry in outputs] == [
        ("agent:weather-bot", "call_w")
    ]
    assert "sunny in Oslo" in outputs[0].summary
    assert store.history("chat-w", kinds=["continuation-requested"]) == []  # the Runner drives
    assert store.model_messages("chat-w", "openai-responses")[1:3] == [
        {
            "type": "function_call",
            "call_id": "call_w",
            "name": "get_weather",
            "arguments": '{"city":"Oslo"}',
        },
        {"type": "function_call_output", "call_id": "call_w", "output": "sunny in Oslo"},
    ]


def test_parallel_calls_keep_the_order_the_runner_gave(backend: Backend) -> None:
    store = backend.open()
    calls = [call("get_weather", {"city": c}, f"call_{c}") for c in ("Oslo", "Rome")]
    model = FakeModel(calls, [say("Both sunny.")], [say("Yes.", "msg_2")])
    agent = Agent(name="weather", model=model, tools=[get_weather])
    session = ChatLedgerSession(store, "chat-p")

    run(Runner.run(agent, "Oslo and Rome?", session=session))
    run(Runner.run(agent, "Sure?", session=session))

    items = run(session.get_items())
    assert [(item.get("type"), item.get("call_id")) for item in items] == [
        (None, None),
        ("function_call", "call_Oslo"),
        ("function_call", "call_Rome"),
        ("function_call_output", "call_Oslo"),
        ("function_call_output", "call_Rome"),
        ("message", None),
        (None, None),
        ("message", None),
    ]
    assert model.inputs[2] == items[:7]
    assert [m["parts"][0].get("state") for m in store.messages("chat-p")[1:3]] == [
        "output-available",
        "output-available",
    ]


def test_an_approved_tool_runs_and_its_output_is_audited(backend: Backend) -> None:
    store = backend.open()
    model = FakeModel([call("delete_file", {"path": "/tmp/x"}, "call_1")], [say("Deleted.")])
    agent = approval_agent(model)
    session = ChatLedgerSession(store, "chat-a")

    paused = run(Runner.run(agent, "Delete /tmp/x", session=session))
    assert [item.raw_item.call_id for item in paused.interruptions] == ["call_1"]
    assert DELETED == []
    pending_call = function_call("delete_file", {"path": "/tmp/x"}, "call_1")
    assert run(session.get_items()) == [user("Delete /tmp/x"), pending_call]
    assert store.status("chat-a").status == "awaiting-tool-output"

    state = paused.to_state()
    state.approve(paused.interruptions[0])
    done = run(Runner.run(agent, state, session=session))

    assert done.final_output == "Deleted."
    assert DELETED == ["/tmp/x"]
    assert run(session.get_items()) == [
        user("Delete /tmp/x"),
        pending_call,
        output("call_1", "deleted /tmp/x"),
        assistant("Deleted."),
    ]
    (entry,) = store.history("chat-a", kinds=["tool-output-added"], actor=ACTOR)
    assert entry.details["output"] == "deleted /tmp/x"
    assert "delete_file" in entry.summary


def test_a_rejected_tool_gives_the_model_the_rejection_message(backend: Backend) -> None:
    store = backend.open()
    model = FakeModel([call("delete_file", {"path": "/etc"}, "call_2")], [say("I did not.")])
    agent = approval_agent(model)
    session = ChatLedgerSession(store, "chat-r", actor="user:alice")

    paused = run(Runner.run(agent, "Delete /etc", session=session))
    state = paused.to_state()
    state.reject(paused.interruptions[0], rejection_message="not /etc, ever")
    done = run(Runner.run(agent, state, session=session))

    assert done.final_output == "I did not."
    assert DELETED == []
    rejection = output("call_2", "not /etc, ever")
    assert run(session.get_items()) == [
        user("Delete /etc"),
        function_call("delete_file", {"path": "/etc"}, "call_2"),
        rejection,
        assistant("I did not."),
    ]
    assert model.inputs[-1][-1] == rejection
    (entry,) = store.history("chat-r", kinds=["tool-output-added"])
    assert (entry.actor, entry.details["output"]) == ("user:alice", "not /etc, ever")


def test_the_human_decisions_are_audited_with_their_actors(backend: Backend) -> None:
    store = backend.open()
    model = FakeModel(
        [call("delete_file", {"path": "/tmp/z"}, "call_ok")],
        [say("Deleted.")],
        [call("delete_file", {"path": "/etc"}, "call_no")],
        [say("I did not.", "msg_2")],
    )
    agent = approval_agent(model)
    session = ChatLedgerSession(store, "chat-h")

    paused = run(Runner.run(agent, "Delete /tmp/z", session=session))
    (asked,) = paused.interruptions
    approved = run(
        session.respond_to_approval(asked.raw_item.call_id, approved=True, actor="user:alice")
    )
    assert (approved.changed, approved.state) == (True, "approval-responded")
    state = paused.to_state()
    state.approve(asked)
    run(Runner.run(agent, state, session=session))

    paused = run(Runner.run(agent, "Delete /etc", session=session))
    (asked,) = paused.interruptions
    run(session.respond_to_approval("call_no", approved=False, reason="not /etc", actor="user:bob"))
    state = paused.to_state()
    state.reject(asked, rejection_message="Rejected by bob: not /etc")
    done = run(Runner.run(agent, state, session=session))

    assert done.final_output == "I did not."
    assert DELETED == ["/tmp/z"]
    assert run(session.get_items()) == [
        user("Delete /tmp/z"),
        function_call("delete_file", {"path": "/tmp/z"}, "call_ok"),
        output("call_ok", "deleted /tmp/z"),
        assistant("Deleted."),
        user("Delete /etc"),
        function_call("delete_file", {"path": "/etc"}, "call_no"),
        output("call_no", "Rejected by bob: not /etc"),
        assistant("I did not.", "msg_2"),
    ]
    decisions = store.history("chat-h", kinds=["approval-responded"])
    assert [(e.actor, e.details["toolCallId"], e.details["approved"]) for e in decisions] == [
        ("user:alice", "call_ok", True),
        ("user:bob", "call_no", False),
    ]
    assert decisions[1].marks == ("denied",) and "not /etc" in decisions[1].summary
    parts = [(m["parts"][0]["type"], m["parts"][0].get("state")) for m in store.messages("chat-h")]
    assert parts == [
        ("text", None),
        ("dynamic-tool", "output-available"),
        ("text", None),
        ("text", None),
        ("dynamic-tool", "output-denied"),
        ("data-openai-item", None),  # the Runner's rejection output, kept exactly
        ("text", None),
    ]
    converted = store.model_messages("chat-h", "openai-responses")
    denial = next(i for i in converted if i.get("call_id") == "call_no" and "output" in i)
    assert denial["output"] == "not /etc"


def test_a_paused_run_resumes_from_a_new_store(durable_backend: Backend) -> None:
    first_store = durable_backend.open()
    model = FakeModel([call("delete_file", {"path": "/tmp/y"}, "call_3")], [say("Done.")])
    agent = approval_agent(model)
    paused = run(Runner.run(agent, "Delete /tmp/y", session=ChatLedgerSession(first_store, "c")))
    saved_state = paused.to_state().to_string()
    before = run(ChatLedgerSession(first_store, "c").get_items())
    first_store.close()

    store = durable_backend.open()
    session = ChatLedgerSession(store, "c")
    assert run(session.get_items()) == before
    state = run(RunState.from_string(agent, saved_state))
    state.approve(state.get_interruptions()[0])
    done = run(Runner.run(agent, state, session=session))

    assert done.final_output == "Done."
    expected = [*before, output("call_3", "deleted /tmp/y"), assistant("Done.")]
    assert run(session.get_items()) == expected
    assert run(ChatLedgerSession(durable_backend.open(), "c").get_items()) == expected


RESUME_SCRIPT = """
import asyncio, json, sys
from agents import Runner, RunState, set_tracing_disabled
from chatledger import ConversationStore
from chatledger.adapters.frameworks.openai_agents import ChatLedgerSession
from tests.integration.test_openai_agents_session import FakeModel, approval_agent, call, say

set_tracing_disabled(True)
url, state_text = sys.argv[1], sys.stdin.read()
model = FakeModel([call("delete_file", {"path": "/b"}, "call_5")], [say("All done.", "msg_9")])
agent = approval_agent(model)

async def main():
    store = ConversationStore.open(url)
    session = ChatLedgerSession(store, "proc")
    before = await session.get_items()
    state = await RunState.from_string(agent, state_text)
    state.approve(state.get_interruptions()[0])
    paused = await Runner.run(agent, state, session=session)
    state = paused.to_state()
    state.approve(paused.interruptions[0])
    done = await Runner.run(agent, state, session=session)
    print(json.dumps({"before": before, "final": done.final_output, "model_input": model.inputs}))
    store.close()

asyncio.run(main())
"""


def test_a_paused_run_resumes_in_a_new_process(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'agents.db'}"
    store = ConversationStore.open(url)
    model = FakeModel([call("delete_file", {"path": "/a"}, "call_4")])
    agent = approval_agent(model)
    session = ChatLedgerSession(store, "proc")
    paused = run(Runner.run(agent, "Delete /a then /b", session=session))
    here = run(session.get_items())

    child = subprocess.run(
        [sys.executable, "-c", RESUME_SCRIPT, url],
        input=paused.to_state().to_string(),
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "OPENAI_AGENTS_DISABLE_TRACING": "1"},
        timeout=120,
        check=False,
    )

    assert child.returncode == 0, child.stderr
    report = json.loads(child.stdout.strip().splitlines()[-1])
    assert report["before"] == here
    assert report["final"] == "All done."
    expected = [
        user("Delete /a then /b"),
        function_call("delete_file", {"path": "/a"}, "call_4"),
        output("call_4", "deleted /a"),
        function_call("delete_file", {"path": "/b"}, "call_5"),
        output("call_5", "deleted /b"),
        assistant("All done.", "msg_9"),
    ]
    assert run(session.get_items()) == expected  # the first store sees the other process's writes
    assert report["model_input"][-1] == expected[:5]
    outputs = store.history("proc", kinds=["tool-output-added"])
    assert [(e.actor, e.details["toolCallId"]) for e in outputs] == [
        (ACTOR, "call_4"),
        (ACTOR, "call_5"),
    ]
    store.close()


# -- the Session protocol's own behaviours -------------------------------------------

REASONING = {
    "type": "reasoning",
    "id": "rs_1",
    "summary": [{"type": "summary_text", "text": "thinking"}],
    "encrypted_content": "opaque",
}
ITEMS: list[dict[str, Any]] = [
    {"role": "developer", "content": "Be brief."},
    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Hi"}]},
    REASONING,
    function_call("a", {"x": 1}, "c_a"),
    function_call("b", {"y": 2}, "c_b"),
    output("c_a", "A"),
    output("c_b", "B"),
    assistant("Both done."),
]


def test_items_come_back_exactly_in_order_with_limits(backend: Backend) -> None:
    store = backend.open()
    session = ChatLedgerSession(store, "s")
    assert run(session.get_items()) == []
    run(session.add_items(ITEMS[:4]))
    run(session.add_items(ITEMS[4:]))

    assert run(session.get_items()) == ITEMS
    assert run(session.get_items(limit=3)) == ITEMS[-3:]
    assert run(session.get_items(limit=100)) == ITEMS
    assert run(session.get_items(limit=0)) == []
    limited = ChatLedgerSession(store, "s", session_settings=SessionSettings(limit=2))
    assert run(limited.get_items()) == ITEMS[-2:]
    kinds = [m["parts"][0]["type"] for m in store.messages("s")]
    assert kinds == ["text", "text", "data-openai-item", "dynamic-tool", "dynamic-tool", "text"]
    assert store.messages("s")[0]["role"] == "system"


def test_pop_item_returns_the_last_item_and_keeps_the_others_in_order(backend: Backend) -> None:
    store = backend.open()
    session = ChatLedgerSession(store, "p")
    assert run(session.pop_item()) is None
    run(session.add_items(ITEMS))

    for count in range(len(ITEMS), 0, -1):
        assert run(session.pop_item()) == ITEMS[count - 1]
        assert run(session.get_items()) == ITEMS[: count - 1]
        assert (
            run(ChatLedgerSession(backend.other_store(store), "p").get_items())
            == ITEMS[: count - 1]
        )
    assert run(session.pop_item()) is None
    cuts = store.history("p", kinds=["messages-cut"])
    assert cuts and all(entry.actor == ACTOR for entry in cuts)
    assert all(entry.details["trigger"] == "pop-item" for entry in cuts)


def test_popping_an_output_leaves_its_call_waiting_for_a_new_one(backend: Backend) -> None:
    store = backend.open()
    session = ChatLedgerSession(store, "o")
    run(session.add_items(ITEMS[:7]))
    assert run(session.pop_item()) == output("c_b", "B")
    assert run(session.pop_item()) == output("c_a", "A")
    run(session.add_items([output("c_b", "B2"), output("c_a", "A2")]))
    assert run(session.get_items()) == [*ITEMS[:5], output("c_b", "B2"), output("c_a", "A2")]
    states = [m["parts"][0].get("state") for m in store.messages("o")[3:]]
    assert states == ["output-available", "output-available"]


def test_clear_session_empties_the_view_and_the_log_keeps_it(backend: Backend) -> None:
    store = backend.open()
    session = ChatLedgerSession(store, "c")
    run(session.clear_session())  # nothing there yet: nothing to do
    run(session.add_items(ITEMS))
    version = store.version("c")

    run(session.clear_session())

    assert run(session.get_items()) == []
    assert store.messages("c") == []
    assert len(store.messages("c", at_version=version)) == 6
    (cut,) = store.history("c", kinds=["messages-cut"])
    assert (cut.actor, cut.details["count"], cut.details["trigger"]) == (ACTOR, 6, "clear-session")
    run(session.add_items([user("again")]))
    assert run(session.get_items()) == [user("again")]


def test_items_without_a_waiting_call_are_kept_as_data(backend: Backend) -> None:
    store = backend.open()
    session = ChatLedgerSession(store, "d")
    odd = [
        output("nobody", "orphan"),
        {"type": "function_call_output", "call_id": "x", "output": "o", "id": "fco_1"},
        {"type": "custom_tool_call", "call_id": "k", "name": "grep", "input": "x"},
        {"role": "user", "content": [{"type": "input_image", "image_url": "https://x/y.png"}]},
    ]
    run(session.add_items(odd))
    assert run(session.get_items()) == odd
    parts = [m["parts"][0]["type"] for m in store.messages("d")]
    assert parts == [
        "data-openai-item",
        "data-openai-item",
        "data-openai-item",
        "data-openai-content",
    ]


def test_messages_written_by_other_means_are_given_as_responses_items(backend: Backend) -> None:
    store = backend.open()
    store.start_conversation("f", actor="user:bob")
    store.append_message(
        "f", {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Hi"}]}
    )
    session = ChatLedgerSession(store, "f")
    run(session.add_items([assistant("Hello")]))
    assert run(session.get_items()) == [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Hi"}]},
        assistant("Hello"),
    ]


def test_calls_answered_through_the_store_give_the_model_their_text(backend: Backend) -> None:
    store = backend.open()
    session = ChatLedgerSession(store, "t")
    run(session.add_items([function_call("a", {}, "c1"), function_call("b", {}, "c2")]))
    store.respond_to_approval("t", tool_call_id="c1", approved=False, reason="no", actor="user:x")
    store.add_tool_output("t", "c2", state="output-error", error_text="boom", actor="browser")
    assert run(session.get_items()) == [
        function_call("a", {}, "c1"),
        function_call("b", {}, "c2"),
        output("c1", "no"),  # where the denial was recorded
        output("c2", "boom"),
    ]
