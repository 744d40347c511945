"""AI SDK UIMessages (v6, v7) and the chatledger bundle: import, export, round trips, loss reports."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chatledger import ConversationStore
from chatledger.adapters.formats import export_conversation, import_conversation, read_format
from chatledger.adapters.responders.demo import record_demo
from chatledger.domain.errors import InvalidInputError
from chatledger.domain.seal import SealKey

KEY = SealKey.from_text("11" * 32)

V7_ONLY = [
    {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Plot it"}]},
    {
        "id": "a1",
        "role": "assistant",
        "parts": [
            {"type": "step-start"},
            {"type": "reasoning", "text": "Use the plot tool.", "state": "done"},
            {
                "type": "reasoning-file",
                "mediaType": "image/png",
                "url": "data:image/png;base64,AA==",
            },
            {"type": "custom", "kind": "openai.compaction"},
            {"type": "steering-message", "id": "s1", "parts": [{"type": "text", "text": "in red"}]},
            {
                "type": "dynamic-tool",
                "toolName": "plot",
                "toolCallId": "call_1",
                "state": "output-available",
                "input": {"color": "red"},
                "output": {"ok": True},
                "approval": {"id": "ap1", "approved": True, "isAutomatic": True},
            },
            {"type": "text", "text": "Done.", "state": "done"},
        ],
    },
]


def _demo(store: ConversationStore, chat: str = "demo") -> list[dict[str, Any]]:
    record_demo(store, chat)
    return store.messages(chat)


def test_ai_sdk_messages_round_trip_exactly(store: ConversationStore) -> None:
    messages = _demo(store)
    major = store.ai_sdk_of("demo")
    exported = export_conversation(store, "demo", f"ai-sdk-{major}")
    assert exported.value == messages and exported.report.lossless
    result = import_conversation(store, "copy", exported.value, f"ai-sdk-{major}", actor="user:bo")
    assert result.created and result.report.lossless and result.report.messages == len(messages)
    assert store.messages("copy") == messages
    assert store.ai_sdk_of("copy") == major
    assert store.history("copy", kinds=["message-appended"])[0].actor == "user:bo"


def test_v6_messages_import_into_a_v6_conversation_and_export_to_v7_unchanged(
    backend: Any,
) -> None:
    store = backend.open(ai_sdk=6)
    messages = _demo(store, "six")
    assert store.ai_sdk_of("six") == 6
    exported = export_conversation(store, "six", "ai-sdk-6")
    import_conversation(store, "six-copy", exported.value, "ai-sdk-6")
    assert store.ai_sdk_of("six-copy") == 6 and store.messages("six-copy") == messages
    to_seven = export_conversation(store, "six", "ai-sdk-7")
    assert to_seven.value == messages and to_seven.report.lossless


def test_v7_to_v6_names_every_part_it_drops(store: ConversationStore) -> None:
    import_conversation(store, "seven", V7_ONLY, "ai-sdk-7")
    exported = export_conversation(store, "seven", "ai-sdk-6")
    dropped = {(loss.message_id, loss.part, loss.what) for loss in exported.report.losses}
    assert dropped == {
        ("a1", 2, "reasoning-file"),
        ("a1", 3, "custom"),
        ("a1", 4, "steering-message"),
        ("a1", 5, "approval.isAutomatic"),
    }
    kept = exported.value[1]["parts"]
    assert [p["type"] for p in kept] == ["step-start", "reasoning", "dynamic-tool", "text"]
    assert kept[2]["approval"] == {"id": "ap1", "approved": True}
    # and the v6 export imports into a v6 conversation as it is
    import_conversation(store, "as-six", exported.value, "ai-sdk-6")
    assert store.messages("as-six") == exported.value
    assert "reasoning-file dropped" in str(exported.report)


def test_a_bad_message_is_refused_by_index_and_nothing_is_recorded(
    store: ConversationStore,
) -> None:
    bad = [*copy.deepcopy(V7_ONLY), {"id": "x", "role": "robot", "parts": []}]
    with pytest.raises(InvalidInputError, match="ai-sdk-7 message 2"):
        import_conversation(store, "bad", bad, "ai-sdk-7")
    # v7-only parts are refused by v6 reading
    with pytest.raises(InvalidInputError, match="ai-sdk-6 message 1"):
        import_conversation(store, "bad6", V7_ONLY, "ai-sdk-6")
    with pytest.raises(InvalidInputError, match="unknown format 'yaml'"):
        import_conversation(store, "bad", V7_ONLY, "yaml")


def test_an_import_is_one_commit(store: ConversationStore) -> None:
    """A message clashing with one already there refuses the whole import."""
    import_conversation(store, "c", V7_ONLY[:1], "ai-sdk-7")
    version = store.version("c")
    with pytest.raises(InvalidInputError, match="already in the conversation"):
        import_conversation(store, "c", V7_ONLY, "ai-sdk-7")
    assert store.version("c") == version and len(store.messages("c")) == 1
    with pytest.raises(InvalidInputError, match="speaks AI SDK 7"):
        import_conversation(store, "c", [], "ai-sdk-6")


def test_the_bundle_round_trips_its_messages(durable_backend: Any) -> None:
    store = durable_backend.open()
    messages = _demo(store)
    store.operations.seal(KEY)
    exported = export_conversation(store, "demo", "chatledger")
    assert (
        '"format":"chatledger-export/1"' in exported.value.splitlines()[0]
        and exported.report.lossless
    )
    result = import_conversation(store, "moved", exported.value, "chatledger", seal_key=KEY)
    assert store.messages("moved") == messages
    assert store.ai_sdk_of("moved") == store.ai_sdk_of("demo")
    assert [loss.what for loss in result.report.losses] == ["history"]
    tampered = exported.value.replace("delete_file", "delete_fila", 1)
    with pytest.raises(InvalidInputError, match="does not verify"):
        import_conversation(store, "forged", tampered, "chatledger", seal_key=KEY)
    with pytest.raises(InvalidInputError, match="not a chatledger bundle"):
        read_format("{}\n", "chatledger")


# -- properties: any stored conversation survives the move ------------------------------

_texts = st.text(
    st.characters(codec="utf-8", exclude_categories=["Cs"], exclude_characters="\x00"), max_size=12
)
_json = st.recursive(
    st.none() | st.booleans() | st.integers(-1000, 1000) | _texts,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_texts, inner, max_size=3),
    max_leaves=6,
)


@st.composite
def _tool_part(draw: st.DrawFn, call: str) -> dict[str, Any]:
    state = draw(st.sampled_from(["input-available", "output-available", "output-error"]))
    part: dict[str, Any] = {
        "type": draw(st.sampled_from(["dynamic-tool", "tool-search"])),
        "toolCallId": call,
        "state": state,
        "input": draw(st.dictionaries(_texts, _json, max_size=2)),
    }
    if part["type"] == "dynamic-tool":
        part["toolName"] = draw(st.sampled_from(["search", "delete_file"]))
    if state == "output-available":
        part["output"] = draw(_json)
    if state == "output-error":
        part["errorText"] = draw(_texts)
    return part


@st.composite
def conversations(draw: st.DrawFn, major: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    for index in range(draw(st.integers(0, 4))):
        role = draw(st.sampled_from(["user", "assistant", "system"]))
        parts: list[dict[str, Any]] = []
        for number in range(draw(st.integers(1, 4))):
            kind = draw(st.sampled_from(["text", "reasoning", "tool", "data", "file", "v7"]))
            if kind == "text":
                parts.append({"type": "text", "text": draw(_texts)})
            elif kind == "reasoning" and role == "assistant":
                parts.append({"type": "reasoning", "text": draw(_texts), "state": "done"})
            elif kind == "tool" and role == "assistant":
                parts.append(draw(_tool_part(f"call_{index}_{number}")))
            elif kind == "data":
                parts.append({"type": "data-note", "data": draw(_json)})
            elif kind == "file":
                parts.append({"type": "file", "mediaType": "text/plain", "url": "data:,hi"})
            elif kind == "v7" and major == 7:
                parts.append({"type": "custom", "kind": "acme.note"})
            else:
                parts.append({"type": "text", "text": "x"})
        messages.append({"id": f"m{index}", "role": role, "parts": parts})
    return messages


@pytest.mark.parametrize("major", [6, 7])
@given(data=st.data())
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_any_conversation_round_trips_through_its_major(major: int, data: st.DataObject) -> None:
    messages = data.draw(conversations(major))
    with ConversationStore.open("memory://") as store:
        import_conversation(store, "a", messages, f"ai-sdk-{major}")
        exported = export_conversation(store, "a", f"ai-sdk-{major}")
        assert exported.report.lossless and exported.value == store.messages("a")
        import_conversation(store, "b", exported.value, f"ai-sdk-{major}")
        assert store.messages("b") == store.messages("a")
        if major == 7:  # what v6 drops is named, part by part, and nothing else is missing
            six = export_conversation(store, "a", "ai-sdk-6")
            for before, after in zip(store.messages("a"), six.value, strict=True):
                dropped = {
                    loss.part
                    for loss in six.report.losses
                    if loss.message_id == before["id"] and loss.what == "custom"
                }
                assert [p for i, p in enumerate(before["parts"]) if i not in dropped] == after[
                    "parts"
                ]
