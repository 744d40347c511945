"""LangChain / LangGraph messages and a ChatGPT data export: import, export, round trips, losses."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    messages_from_dict,
)

from chatledger import ConversationStore
from chatledger.adapters.formats import export_conversation, import_conversation, read_format
from chatledger.adapters.formats.chatgpt import pick_conversation
from chatledger.adapters.formats.format import ToolOutput
from chatledger.adapters.responders.demo import record_demo
from chatledger.domain.errors import InvalidInputError

EXPORT = json.loads(
    (Path(__file__).parents[1] / "support" / "chatgpt_conversations.json").read_text("utf-8")
)

# -- LangChain ---------------------------------------------------------------------------


def _graph_state() -> list[BaseMessage]:
    """Messages as a LangGraph agent's state holds them (ids on every message)."""
    return [
        SystemMessage("Be brief.", id="s0"),
        HumanMessage("Weather in Oslo and Rome?", id="h1"),
        AIMessage(
            [{"type": "reasoning", "reasoning": "Two cities: two calls."}, {"type": "text", "text": ""}],
            tool_calls=[
                {"name": "weather", "args": {"city": "Oslo"}, "id": "t1", "type": "tool_call"},
                {"name": "weather", "args": {"city": "Rome"}, "id": "t2", "type": "tool_call"},
            ],
            id="a1",
        ),
        ToolMessage("sunny", tool_call_id="t1", name="weather", id="m1"),
        ToolMessage("no such city", tool_call_id="t2", status="error"),
        AIMessage("Oslo is sunny; Rome failed.", id="a2", usage_metadata={
            "input_tokens": 10, "output_tokens": 5, "total_tokens": 15}),
    ]  # fmt: skip


def test_langchain_messages_round_trip_and_answer_their_calls(store: ConversationStore) -> None:
    state = _graph_state()
    result = import_conversation(store, "lg", state, "langchain")
    assert result.report.lossless
    calls = {
        p["toolCallId"]: p for m in store.messages("lg") for p in m["parts"] if "toolCallId" in p
    }
    assert (calls["t1"]["state"], calls["t1"]["output"]) == ("output-available", "sunny")
    assert (calls["t2"]["state"], calls["t2"]["errorText"]) == ("output-error", "no such city")
    reasoning = [p for m in store.messages("lg") for p in m["parts"] if p["type"] == "reasoning"]
    assert reasoning == [{"type": "reasoning", "text": "Two cities: two calls."}]
    exported = export_conversation(store, "lg", "langchain")
    assert exported.report.lossless
    assert messages_from_dict(exported.value) == state


def test_a_stored_chat_exports_as_langchain_messages(store: ConversationStore) -> None:
    record_demo(store, "demo")
    exported = export_conversation(store, "demo", "langchain")
    messages = messages_from_dict(exported.value)
    kinds = [type(m).__name__ for m in messages]
    assert kinds[0] == "HumanMessage" and "ToolMessage" in kinds and kinds[-1] == "AIMessage"
    denied = next(m for m in messages if isinstance(m, ToolMessage))
    assert denied.status == "error"
    assert all(loss.what == "tool state" for loss in exported.report.losses)
    assert exported.report.losses  # the denial's approval is named
    import_conversation(store, "again", exported.value, "langchain")
    assert export_conversation(store, "again", "langchain").value == exported.value


_texts = st.text(
    st.characters(codec="utf-8", exclude_categories=["Cs"], exclude_characters="\x00"), max_size=8
)


@st.composite
def graph_states(draw: st.DrawFn) -> list[BaseMessage]:
    messages: list[BaseMessage] = []
    for turn in range(draw(st.integers(1, 4))):
        messages.append(HumanMessage(draw(_texts), id=f"h{turn}"))
        calls = [
            {"name": "f", "args": {"q": draw(_texts)}, "id": f"t{turn}_{n}", "type": "tool_call"}
            for n in range(draw(st.integers(0, 2)))
        ]
        messages.append(AIMessage(draw(_texts), tool_calls=calls, id=f"a{turn}"))
        for call in calls:  # LangGraph's ToolNode answers in call order
            status = draw(st.sampled_from(["success", "error"]))
            kept_id = draw(st.sampled_from([None, f"m{call['id']}"]))
            messages.append(
                ToolMessage(draw(_texts), tool_call_id=call["id"], status=status, id=kept_id)
            )
    return messages


@given(state=graph_states())
@settings(max_examples=30, deadline=None)
def test_any_langchain_history_round_trips(state: list[BaseMessage]) -> None:
    with ConversationStore.open("memory://") as store:
        assert import_conversation(store, "g", state, "langchain").report.lossless
        exported = export_conversation(store, "g", "langchain")
        assert exported.report.lossless and messages_from_dict(exported.value) == state


def test_no_langchain_message_is_dropped_on_import() -> None:
    state = _graph_state()
    imported = read_format(state, "langchain")
    outputs = [s for s in imported.steps if isinstance(s, ToolOutput)]
    plain = 1  # the error result holds nothing but content, call id and status
    assert len(imported.messages) == len(state) - plain and len(outputs) == 2
    with pytest.raises(InvalidInputError, match="langchain message 0"):
        read_format([{"role": "user"}], "langchain")


# -- ChatGPT -----------------------------------------------------------------------------


def test_chatgpt_import_follows_the_active_branch_and_names_what_it_drops(
    store: ConversationStore,
) -> None:
    result = import_conversation(store, "gpt", pick_conversation(EXPORT, "Disk full"), "chatgpt")
    messages = store.messages("gpt")
    assert [m["id"] for m in messages] == ["ctx-1", "u-1", "a-th", "a-code", "a-ans"]
    assert [m["role"] for m in messages] == [
        "system",
        "user",
        "assistant",
        "assistant",
        "assistant",
    ]
    assert "a-old" not in {m["id"] for m in messages}  # the regenerated answer, off the branch
    call = messages[3]["parts"][0]
    assert (call["toolName"], call["state"]) == ("python", "output-available")
    assert call["output"] == "usage(total=500, used=498, free=2)"
    assert messages[2]["parts"][0]["type"] == "reasoning"
    assert messages[4]["metadata"] == {"chatgpt": {"createTime": 1764300014.0, "model": "o3"}}
    dropped = {(loss.message_id, loss.part, loss.what) for loss in result.report.losses}
    assert dropped == {
        (None, None, "branches"),
        ("u-1", 0, "image_asset_pointer"),
        ("a-recap", None, "reasoning_recap"),
    }
    assert store.conversation("gpt").state.title == "Disk full"


def test_chatgpt_export_imports_back_to_the_same_messages(store: ConversationStore) -> None:
    import_conversation(store, "gpt", pick_conversation(EXPORT, "Disk full"), "chatgpt")
    exported = export_conversation(store, "gpt", "chatgpt")
    assert exported.report.lossless
    (conversation,) = exported.value
    leaf = conversation["mapping"][conversation["current_node"]]["message"]
    assert leaf["content"]["parts"] == [
        "Only 2 GB are free. Run `du -sh /* | sort -h` to see the biggest folders."
    ]
    again = import_conversation(store, "gpt2", exported.value, "chatgpt")
    assert again.report.lossless
    assert store.messages("gpt2") == store.messages("gpt")


def test_chatgpt_export_of_a_stored_chat_names_its_losses(store: ConversationStore) -> None:
    record_demo(store, "demo")
    exported = export_conversation(store, "demo", "chatgpt")
    assert any(loss.what == "tool state" for loss in exported.report.losses)
    import_conversation(store, "back", exported.value, "chatgpt")
    texts = [p.get("text") for m in store.messages("back") for p in m["parts"]]
    assert any("delete" in str(t) or "tmp" in str(t) for t in texts) or store.messages("back")


def test_picking_a_conversation_of_an_export() -> None:
    with pytest.raises(InvalidInputError, match="holds 2 conversations"):
        pick_conversation(EXPORT, None)
    assert pick_conversation(EXPORT, "6760a1b2-0000-800a-9c3e-000000000002")["title"] == "Greeting"
    with pytest.raises(InvalidInputError, match="no conversation"):
        pick_conversation(EXPORT, "nope")
    with pytest.raises(InvalidInputError, match="current_node"):
        read_format({"mapping": {}}, "chatgpt")


@st.composite
def chatgpt_conversations(draw: st.DrawFn) -> dict[str, Any]:
    """Linear ChatGPT conversations: text turns, thoughts, python calls and their outputs."""
    mapping: dict[str, Any] = {
        "root": {"id": "root", "message": None, "parent": None, "children": []}
    }
    parent = "root"

    def add(node_id: str, role: str, content: dict[str, Any], **extra: Any) -> None:
        nonlocal parent
        message = {"id": node_id, "author": {"role": role, "name": extra.pop("name", None)},
                   "create_time": 1.0 + len(mapping), "content": content,
                   "recipient": extra.pop("recipient", "all"), "metadata": {}}  # fmt: skip
        mapping[parent]["children"].append(node_id)
        mapping[node_id] = {"id": node_id, "message": message, "parent": parent, "children": []}
        parent = node_id

    for turn in range(draw(st.integers(1, 3))):
        add(f"u{turn}", "user", {"content_type": "text", "parts": [draw(_texts) or "q"]})
        if draw(st.booleans()):
            add(f"th{turn}", "assistant", {"content_type": "thoughts",
                "thoughts": [{"summary": "", "content": draw(_texts) or "t"}]})  # fmt: skip
        if draw(st.booleans()):
            code = draw(_texts) or "1+1"
            add(f"c{turn}", "assistant", {"content_type": "code", "language": "python", "text": code},
                recipient="python")  # fmt: skip
            add(f"o{turn}", "tool", {"content_type": "execution_output", "text": draw(_texts)},
                name="python")  # fmt: skip
        add(f"a{turn}", "assistant", {"content_type": "text", "parts": [draw(_texts) or "a"]})
    return {"title": "t", "mapping": mapping, "current_node": parent}


@given(conversation=chatgpt_conversations())
@settings(max_examples=30, deadline=None)
def test_any_chatgpt_conversation_survives_export_and_import(conversation: dict[str, Any]) -> None:
    with ConversationStore.open("memory://") as store:
        assert import_conversation(store, "a", conversation, "chatgpt").report.lossless
        exported = export_conversation(store, "a", "chatgpt")
        assert exported.report.lossless
        import_conversation(store, "b", exported.value, "chatgpt")
        assert store.messages("b") == store.messages("a")
        nodes = [n for n in conversation["mapping"].values() if n["message"]]
        kept = [p for m in store.messages("a") for p in m["parts"]]
        outputs = sum(n["message"]["author"]["role"] == "tool" for n in nodes)
        assert len(kept) + outputs == len(nodes)  # every node became a part, or a call's result
