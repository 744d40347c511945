"""``chatledger.domain.redaction``: what redacted parts and chunks look like; which redactions are refused."""

from __future__ import annotations

from typing import Any

import pytest

from chatledger.domain.conversation import ConversationState
from chatledger.domain.errors import InvalidInputError, InvalidMessageError, UnknownToolCallError
from chatledger.domain.redaction import REDACTED, Masks, decide_redaction, message_fields

TOOL = {"toolCallId": "c1", "fields": ["input", "output"]}


def state_with(*messages: dict[str, Any]) -> ConversationState:
    state = ConversationState("t", "chat")
    for message in messages:
        state.append_message(message)
    return state


ASSISTANT = {
    "id": "a1",
    "role": "assistant",
    "parts": [
        {"type": "step-start"},
        {"type": "reasoning", "text": "secret thought", "providerMetadata": {"x": {"sig": "s"}}},
        {"type": "text", "text": "secret answer"},
        {"type": "file", "mediaType": "image/png", "url": "https://x/secret.png", "filename": "s"},
        {"type": "data-weather", "id": "d1", "data": {"city": "secret"}},
        {
            "type": "tool-lookup",
            "toolCallId": "c1",
            "state": "output-available",
            "input": {"q": "secret"},
            "output": {"r": "secret"},
        },
    ],
}


def test_no_redactions_give_back_the_very_same_objects() -> None:
    masks = Masks()
    messages = [ASSISTANT]
    assert not masks and masks.message_list(messages) is messages
    chunk = {"type": "text-delta", "id": "t", "delta": "x"}
    assert masks.chunk(chunk, "a1", set()) is chunk


def test_a_message_s_parts_are_replaced_by_kind_and_the_rest_kept() -> None:
    masks = Masks([{"messageId": "a1", "fields": ["reasoning", "file", "data-weather"]}])
    parts = masks.message(ASSISTANT)["parts"]
    assert parts[1] == {"type": "reasoning", "text": REDACTED}  # its signature goes too
    assert parts[2] == ASSISTANT["parts"][2]  # text not named: kept
    assert parts[3] == {
        "type": "file",
        "mediaType": "text/plain",
        "url": "data:text/plain,%5Bredacted%5D",
    }
    assert parts[4] == {"type": "data-weather", "id": "d1", "data": REDACTED}
    assert parts[5]["input"] == {"q": "secret"}  # a tool call is redacted by its own id
    assert ASSISTANT["parts"][1]["text"] == "secret thought"  # the input is never changed


def test_a_tool_call_s_input_and_output_are_replaced() -> None:
    part = Masks([TOOL]).message(ASSISTANT)["parts"][5]
    assert (part["input"], part["output"], part["state"]) == (
        REDACTED,
        REDACTED,
        "output-available",
    )
    only_input = Masks([{"toolCallId": "c1", "fields": ["input"]}]).message(ASSISTANT)["parts"][5]
    assert only_input["output"] == {"r": "secret"}


def test_streamed_chunks_show_redacted_once_per_part() -> None:
    masks = Masks([TOOL, {"messageId": "a1", "fields": ["text"]}])
    seen: set[Any] = set()
    shown = [
        masks.chunk(chunk, "a1", seen)
        for chunk in (
            {"type": "text-start", "id": "t1"},
            {"type": "text-delta", "id": "t1", "delta": "sec"},
            {"type": "text-delta", "id": "t1", "delta": "ret"},
            {"type": "tool-input-delta", "toolCallId": "c1", "inputTextDelta": '{"q":'},
            {"type": "tool-input-delta", "toolCallId": "c1", "inputTextDelta": '"secret"}'},
            {"type": "tool-input-available", "toolCallId": "c1", "input": {"q": "secret"}},
            {"type": "tool-output-error", "toolCallId": "c1", "errorText": "secret"},
        )
    ]
    assert [c.get("delta", c.get("inputTextDelta")) for c in shown[1:5]] == [
        REDACTED,
        "",
        f'"{REDACTED}"',
        "",
    ]
    assert shown[5]["input"] == REDACTED and shown[6]["errorText"] == REDACTED
    other = masks.chunk({"type": "text-delta", "id": "t1", "delta": "x"}, "a2", set())
    assert other["delta"] == "x"  # another message's text is not touched


def test_refusals_name_what_is_valid() -> None:
    state = state_with(ASSISTANT)
    with pytest.raises(UnknownToolCallError):
        decide_redaction(state, tool_call_id="zz", message_id=None, fields=None)
    with pytest.raises(InvalidMessageError):
        decide_redaction(state, tool_call_id=None, message_id="zz", fields=None)
    with pytest.raises(InvalidInputError, match="fields are reasoning, text, file, data-weather"):
        decide_redaction(state, tool_call_id=None, message_id="a1", fields=["tool-lookup"])
    with pytest.raises(InvalidInputError, match="non-empty list"):
        decide_redaction(state, tool_call_id="c1", message_id=None, fields="input")
    assert message_fields(ASSISTANT) == ["reasoning", "text", "file", "data-weather"]
    decided = decide_redaction(state, tool_call_id="c1", message_id=None, fields=None)
    assert decided is not None and decided.fields == ["input", "output"]
    state.redactions.append({"toolCallId": "c1", "fields": ["input", "output"]})
    assert decide_redaction(state, tool_call_id="c1", message_id=None, fields=["input"]) is None


def test_state_json_keeps_redactions_and_old_snapshots_load() -> None:
    state = state_with(ASSISTANT)
    assert "redactions" not in state.to_json()  # snapshots of unredacted conversations unchanged
    state.redactions.append({"messageId": "a1", "fields": ["text"], "version": 3})
    again = ConversationState.from_json(state.to_json())
    assert again.redactions == state.redactions
