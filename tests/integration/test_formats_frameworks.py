"""OpenAI Agents session items and Pydantic AI ModelMessages: import, export, round trips, losses.

Items and messages come from the real frameworks (a Runner over the SDK's
own ``SQLiteSession``, a Pydantic AI agent over ``FunctionModel``); the
round trips are property-tested over generated histories.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from agents import Agent, Runner, SQLiteSession
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic_ai import Agent as PydanticAgent
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from chatledger import ConversationStore
from chatledger.adapters.formats import export_conversation, import_conversation, read_format
from chatledger.adapters.formats.format import ToolOutput
from chatledger.adapters.frameworks.openai_agents import ChatLedgerSession
from chatledger.adapters.responders.demo import record_demo
from tests.integration.test_openai_agents_session import FakeModel, call, get_weather, run, say

# -- OpenAI Agents -----------------------------------------------------------------------


def _agents_items() -> list[dict[str, Any]]:
    """A real run's session items: two parallel calls, their outputs, the answer."""
    model = FakeModel(
        [call("get_weather", {"city": "Oslo"}, "c1"), call("get_weather", {"city": "Rome"}, "c2")],
        [say("Oslo and Rome are sunny.")],
    )
    agent = Agent(name="w", model=model, tools=[get_weather])
    session = SQLiteSession("s1")
    run(Runner.run(agent, "Weather in Oslo and Rome?", session=session))
    items: list[dict[str, Any]] = json.loads(json.dumps(run(session.get_items())))
    return items


def test_agents_items_round_trip_and_the_runner_continues_on_them(store: ConversationStore) -> None:
    items = _agents_items()
    kinds = [item.get("type", "message") for item in items]
    assert kinds.count("function_call_output") == 2  # the parallel calls, answered after both
    result = import_conversation(store, "w", items, "openai-agents", actor="user:bo")
    assert result.report.lossless and result.report.messages == len(items) - 2
    calls = [p for m in store.messages("w") for p in m["parts"] if p["type"] == "dynamic-tool"]
    assert [(p["toolCallId"], p["state"], p["output"]) for p in calls] == [
        ("c1", "output-available", "sunny in Oslo"),
        ("c2", "output-available", "sunny in Rome"),
    ]
    exported = export_conversation(store, "w", "openai-agents")
    assert exported.value == items and exported.report.lossless
    # the imported chat is a session the Runner reads exactly as it stored it
    model = FakeModel([say("Still sunny.", "msg_2")])
    agent = Agent(name="w", model=model, tools=[get_weather])
    run(Runner.run(agent, "And now?", session=ChatLedgerSession(store, "w")))
    assert model.inputs[0][: len(items)] == items


def test_agents_export_of_a_stored_chat_names_what_items_cannot_carry(
    store: ConversationStore,
) -> None:
    record_demo(store, "demo")  # a denied delete_file call, reasoning-free, in a v7 chat
    store.append_message(
        "demo",
        {
            "id": "a9",
            "role": "assistant",
            "metadata": {"model": "m"},
            "parts": [
                {"type": "reasoning", "text": "think"},
                {"type": "data-note", "data": {"x": 1}},
                {"type": "text", "text": "ok"},
            ],
        },
    )
    exported = export_conversation(store, "demo", "openai-agents")
    dropped = {(loss.message_id, loss.part, loss.what) for loss in exported.report.losses}
    assert {("a9", 0, "reasoning"), ("a9", 1, "data-note"), ("a9", None, "metadata")} <= dropped
    assert any(
        loss.what == "tool state" and "denial" in loss.why for loss in exported.report.losses
    )
    assert {"type": "message", "role": "assistant", "content": "ok"} in exported.value


_texts = st.text(
    st.characters(codec="utf-8", exclude_categories=["Cs"], exclude_characters="\x00"), max_size=8
)


@st.composite
def session_items(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Items as sessions hold them: messages, calls, their outputs later, and other items."""
    items: list[dict[str, Any]] = []
    open_calls: list[str] = []
    for index in range(draw(st.integers(0, 8))):
        kind = draw(st.sampled_from(["user", "assistant", "call", "output", "reasoning"]))
        if kind == "user":
            items.append({"role": "user", "content": draw(_texts)})
        elif kind == "assistant":
            text = {"type": "output_text", "text": draw(_texts), "annotations": []}
            items.append({"id": f"msg_{index}", "type": "message", "role": "assistant",
                          "status": "completed", "content": [text]})  # fmt: skip
        elif kind == "call":
            open_calls.append(f"call_{index}")
            arguments = json.dumps({"q": draw(_texts)})
            items.append({"type": "function_call", "call_id": f"call_{index}", "name": "f",
                          "arguments": arguments})  # fmt: skip
        elif kind == "output" and open_calls:
            answered = open_calls.pop(draw(st.integers(0, len(open_calls) - 1)))
            items.append({"type": "function_call_output", "call_id": answered,
                          "output": draw(_texts)})  # fmt: skip
        else:
            items.append({"id": f"rs_{index}", "type": "reasoning", "summary": []})
    return items


@given(items=session_items())
@settings(max_examples=30, deadline=None)
def test_any_session_items_round_trip_in_order(items: list[dict[str, Any]]) -> None:
    with ConversationStore.open("memory://") as store:
        result = import_conversation(store, "s", items, "openai-agents")
        assert result.report.lossless
        exported = export_conversation(store, "s", "openai-agents")
        assert exported.value == items and exported.report.lossless


def test_no_item_is_dropped_on_import() -> None:
    """Every item becomes a message or answers a call: the import accounts for each one."""
    items = [*_agents_items(), {"type": "function_call_output", "call_id": "nobody", "output": "x"}]
    imported = read_format(items, "openai-agents")
    outputs = [step for step in imported.steps if isinstance(step, ToolOutput)]
    assert len(imported.messages) + len(outputs) == len(items)
    stray = imported.messages[-1]  # an output nothing awaits is kept, as its item
    assert stray["metadata"]["openaiItem"]["call_id"] == "nobody"


# -- Pydantic AI -------------------------------------------------------------------------


def _pydantic_history() -> list[ModelMessage]:
    """A real agent run: a tool call that is retried once, then answered, then the reply."""
    calls = iter(
        [
            ModelResponse(
                parts=[ThinkingPart("look it up"), ToolCallPart("weather", {"city": "x"}, "p1")]
            ),
            ModelResponse(parts=[ToolCallPart("weather", {"city": "Oslo"}, "p2")]),
            ModelResponse(parts=[TextPart("Sunny in Oslo.")]),
        ]
    )

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return next(calls)

    agent = PydanticAgent(FunctionModel(respond), instructions="Be brief.")

    @agent.tool_plain
    def weather(city: str) -> str:
        from pydantic_ai import ModelRetry

        if city == "x":
            raise ModelRetry("name a real city")
        return f"sunny in {city}"

    return agent.run_sync("Weather in Oslo?").all_messages()


def _json(history: list[ModelMessage]) -> list[Any]:
    dumped: list[Any] = ModelMessagesTypeAdapter.dump_python(history, mode="json")
    return dumped


def test_pydantic_messages_round_trip_exactly(store: ConversationStore) -> None:
    history = _pydantic_history()
    result = import_conversation(store, "p", history, "pydantic-ai")
    assert result.report.lossless and result.report.messages == len(history)
    parts = {
        p["toolCallId"]: p for m in store.messages("p") for p in m["parts"] if "toolCallId" in p
    }
    assert parts["p1"]["state"] == "output-error" and "real city" in parts["p1"]["errorText"]
    assert (parts["p2"]["state"], parts["p2"]["output"]) == ("output-available", "sunny in Oslo")
    exported = export_conversation(store, "p", "pydantic-ai")
    assert exported.value == _json(history) and exported.report.lossless
    assert ModelMessagesTypeAdapter.validate_python(exported.value) == history


def test_a_stored_chat_exports_as_pydantic_messages_that_validate(store: ConversationStore) -> None:
    record_demo(store, "demo")
    exported = export_conversation(store, "demo", "pydantic-ai")
    history = ModelMessagesTypeAdapter.validate_python(exported.value)
    kinds = [type(part).__name__ for message in history for part in message.parts]
    assert "ToolCallPart" in kinds and "UserPromptPart" in kinds and "TextPart" in kinds
    denied = [p for m in history for p in m.parts if isinstance(p, ToolReturnPart)]
    assert denied and denied[0].outcome == "denied"
    # the denial's approval is named as dropped, nothing else silently
    assert [loss.what for loss in exported.report.losses] == ["tool state"] * len(
        exported.report.losses
    )
    # and the export imports again, as Pydantic AI messages
    import_conversation(store, "again", exported.value, "pydantic-ai")
    assert export_conversation(store, "again", "pydantic-ai").value == exported.value


_pai_texts = st.text(
    st.characters(codec="utf-8", exclude_categories=["Cs"], exclude_characters="\x00"),
    min_size=1,
    max_size=8,
)


@st.composite
def pydantic_histories(draw: st.DrawFn) -> list[ModelMessage]:
    history: list[ModelMessage] = []
    for index in range(draw(st.integers(1, 5))):
        history.append(ModelRequest(parts=[UserPromptPart(draw(_pai_texts))]))
        parts: list[Any] = [TextPart(draw(_pai_texts))]
        calls = [f"t{index}_{n}" for n in range(draw(st.integers(0, 2)))]
        if draw(st.booleans()):
            parts.insert(0, ThinkingPart(draw(_pai_texts)))
        parts += [ToolCallPart("f", {"a": draw(_pai_texts)}, call_id) for call_id in calls]
        history.append(ModelResponse(parts=parts))
        answers: list[Any] = []
        for call_id in calls:
            if draw(st.booleans()):
                answers.append(ToolReturnPart("f", draw(_pai_texts), call_id))
            else:
                outcome = draw(st.sampled_from(["retried", "failed"]))
                answers.append(ToolReturnPart("f", draw(_pai_texts), call_id, outcome=outcome))
        if answers:
            history.append(ModelRequest(parts=answers))
    return history


@given(history=pydantic_histories())
@settings(max_examples=40, deadline=None)
def test_any_pydantic_history_round_trips(history: list[ModelMessage]) -> None:
    with ConversationStore.open("memory://") as store:
        imported = import_conversation(store, "p", _json(history), "pydantic-ai")
        assert imported.report.lossless
        exported = export_conversation(store, "p", "pydantic-ai")
        assert exported.value == _json(history) and exported.report.lossless
        # each Pydantic AI part is a UIMessage part: none vanished on the way in
        for message, ui in zip(history, store.messages("p"), strict=True):
            assert len(ui["parts"]) == len(message.parts)


@pytest.mark.parametrize("name", ["openai-agents", "pydantic-ai"])
def test_garbage_is_refused_with_the_format_named(store: ConversationStore, name: str) -> None:
    from chatledger.domain.errors import InvalidInputError

    with pytest.raises(InvalidInputError):
        import_conversation(store, "g", {"nothing": 1}, name)
    assert store.list_conversations().conversations == [] or all(
        c.chat_id != "g" for c in store.list_conversations().conversations
    )
