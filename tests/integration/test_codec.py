"""How events and snapshots are stored: values JavaScript allows but UTF-8 cannot hold still round-trip."""

from __future__ import annotations

from tests.integration.conftest import Backend


def test_partial_tool_input_ending_inside_a_surrogate_pair_is_stored_and_reloaded(
    durable_backend: Backend,
) -> None:
    """A delta that stops between the two escapes of a surrogate pair leaves a lone surrogate in the
    partial input (as in the SDK); the snapshot still saves and the conversation reloads equal."""
    store = durable_backend.open()
    store.start_conversation("chat")
    with store.open_stream("chat") as stream:
        stream.append({"type": "tool-input-start", "toolCallId": "c1", "toolName": "say"})
        stream.append(
            {"type": "tool-input-delta", "toolCallId": "c1", "inputTextDelta": '{"emoji":"\\ud83d'}
        )
        live = stream.conversation.state.messages[-1]["parts"][0]["input"]
    assert live == {"emoji": "\ud83d"}
    reopened = durable_backend.open()
    assert reopened.messages("chat") == store.messages("chat")
    assert reopened.messages("chat")[-1]["parts"][0]["input"] == {"emoji": "\ud83d"}
