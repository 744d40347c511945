"""Replayed tool chunks never regress state (docs/behaviour.md §3.2); outputs reach earlier messages (§3.3)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from chatledger.domain.whole_stream import fold_into_conversation, fold_stream
from tests.conformance.replays import known_calls, timeline, with_replays
from tests.conformance.strategies import (
    ConversationStream,
    continuations,
    conversation_streams,
    streams,
)
from tests.support.oracle import Oracle

Chunk = dict[str, Any]
STEP = {"type": "step-start"}


# -- the property --------------------------------------------------------------------------


@settings(max_examples=150)
@given(case=st.one_of(streams().map(lambda c: (None, c)), continuations()), data=st.data())
def test_inserting_replays_into_a_stream_changes_nothing(case: Any, data: st.DataObject) -> None:
    """Replays of known tool calls inserted anywhere leave fold_stream's result unchanged."""
    message, chunks = case
    initial = known_calls([message] if message else [])
    replayed = data.draw(with_replays(initial, chunks), label="with replays")
    assume(len(replayed) > len(chunks))
    assert fold_stream(replayed, message) == fold_stream(chunks, message)


@settings(max_examples=150)
@given(case=conversation_streams(), data=st.data())
def test_inserting_replays_into_a_conversation_stream_changes_nothing(
    case: ConversationStream, data: st.DataObject
) -> None:
    """Replays of tool calls of any message, new or continued, leave the conversation unchanged."""
    replayed = data.draw(with_replays(known_calls(case.messages), case.chunks), label="replayed")
    assume(len(replayed) > len(case.chunks))

    def fold(chunks: list[Chunk]) -> list[dict[str, Any]]:
        return fold_into_conversation(
            case.messages, chunks, continuation=case.continuation, message_id=case.message_id
        )

    assert fold(replayed) == fold(case.chunks)


@settings(max_examples=60)
@given(case=conversation_streams(continuation=False))
def test_replaying_a_whole_stream_into_a_new_message_adds_no_tool_part(
    case: ConversationStream,
) -> None:
    """A provider that re-sends every tool chunk of a stream in the next one changes no tool part.

    Calls left ``input-streaming`` are not re-sent: their deltas are no replays (§3.2
    table) and, with no ``tool-input-start`` open in the new stream, are refused.
    """
    once = fold_into_conversation(case.messages, case.chunks, message_id="m1")
    final = timeline(known_calls(case.messages), case.chunks)[-1]
    tool_chunks = [
        c
        for c in case.chunks
        if "toolCallId" in c and final[c["toolCallId"]].state != "input-streaming"
    ]
    twice = fold_into_conversation(once, tool_chunks, message_id="m2")
    assert twice[:-1] == once
    assert [p for p in twice[-1]["parts"] if "toolCallId" in p] == []


def test_tracker_follows_tool_states_like_the_fold() -> None:
    """The replay strategy's own state tracker agrees with the fold on a full lifecycle."""
    chunks = [
        _available("c1"),
        _approval("c1", "ap1"),
        {"type": "tool-output-available", "toolCallId": "c1", "output": 1, "preliminary": True},
    ]
    states = timeline({}, chunks)
    assert [s["c1"].state for s in states[1:]] == [
        _part_of(fold_stream(chunks[:n]))["state"] for n in (1, 2, 3)
    ]
    assert states[-1]["c1"].preliminary and not states[-1]["c1"].terminal


# -- one example per row of the §3.2 table --------------------------------------------------


def _message(*parts: dict[str, Any], mid: str = "a1") -> dict[str, Any]:
    return {"id": mid, "role": "assistant", "parts": [STEP, *parts]}


def _tool(state: str, call: str = "c1", **fields: Any) -> dict[str, Any]:
    return {
        "type": "tool-getWeather",
        "toolCallId": call,
        "state": state,
        "input": {"city": "Paris"},
        **fields,
    }


def _available(call: str, **extra: Any) -> Chunk:
    return {
        "type": "tool-input-available",
        "toolCallId": call,
        "toolName": "getWeather",
        "input": {"city": "Paris"},
        **extra,
    }


def _approval(call: str, approval_id: str) -> Chunk:
    return {"type": "tool-approval-request", "toolCallId": call, "approvalId": approval_id}


def _part_of(message: dict[str, Any], call: str = "c1") -> dict[str, Any]:
    [part] = [p for p in message["parts"] if p.get("toolCallId") == call]
    return part


DONE = _tool("output-available", output={"temp": 21})
START = {"type": "tool-input-start", "toolCallId": "c1", "toolName": "getWeather"}
DELTA = {"type": "tool-input-delta", "toolCallId": "c1", "inputTextDelta": '{"city": "Ro'}


def _assert_unchanged(message: dict[str, Any], *replays: Chunk) -> None:
    for replay in replays:
        assert fold_stream([replay], message) == message, replay


def test_replayed_tool_input_start_keeps_output_available_part() -> None:
    """A re-sent tool-input-start does not send an output-available part back to input-streaming."""
    _assert_unchanged(_message(DONE), START, {**START, "dynamic": True})


def test_replayed_tool_input_start_keeps_streaming_input() -> None:
    """A re-sent tool-input-start mid-stream does not restart the accumulated input text."""
    chunks = [START, {**DELTA, "inputTextDelta": '{"city": '}]
    tail = [{**DELTA, "inputTextDelta": '"Rome"}'}]
    assert fold_stream([*chunks, START, *tail]) == fold_stream([*chunks, *tail])
    assert _part_of(fold_stream([*chunks, START, *tail]))["input"] == {"city": "Rome"}


def test_replayed_tool_input_start_keeps_approval_requested_part() -> None:
    """A re-sent tool-input-start leaves a pending approval pending."""
    _assert_unchanged(_message(_tool("approval-requested", approval={"id": "ap1"})), START)


def test_replayed_tool_input_delta_keeps_input_available_part() -> None:
    """A late tool-input-delta does not reopen a part whose input is complete."""
    folded = fold_stream([START, {**DELTA, "inputTextDelta": "{}"}, _available("c1"), DELTA])
    assert _part_of(folded)["state"] == "input-available"
    assert _part_of(folded)["input"] == {"city": "Paris"}


def test_replayed_tool_input_available_keeps_output_available_part() -> None:
    """A re-sent tool-input-available keeps the output (the SDK drops it, §c.3)."""
    _assert_unchanged(_message(DONE), _available("c1"), _available("c1", input={"city": "X"}))


def test_replayed_tool_input_delta_and_available_keep_output_denied_part() -> None:
    """Input chunks for a denied call change nothing."""
    denied = _tool("output-denied", approval={"id": "ap1", "approved": False})
    _assert_unchanged(_message(denied), DELTA, _available("c1"))


def test_replayed_tool_input_error_keeps_output_available_part() -> None:
    """A tool-input-error for a call that already has its output changes nothing."""
    error = {
        "type": "tool-input-error",
        "toolCallId": "c1",
        "toolName": "getWeather",
        "input": "{",
        "errorText": "bad",
    }
    _assert_unchanged(_message(DONE), error)


def test_tool_input_error_still_applies_to_input_available_part() -> None:
    """tool-input-error on a non-terminal part is not a replay: it becomes output-error."""
    error = {
        "type": "tool-input-error",
        "toolCallId": "c1",
        "toolName": "getWeather",
        "input": {"city": 1},
        "errorText": "bad",
    }
    part = _part_of(fold_stream([error], _message(_tool("input-available"))))
    assert (part["state"], part["rawInput"]) == ("output-error", {"city": 1})


def test_replayed_approval_request_keeps_approval_responded_part() -> None:
    """An approval request re-sent after the user answered does not ask again."""
    answered = _tool("approval-responded", approval={"id": "ap1", "approved": True})
    _assert_unchanged(_message(answered), _approval("c1", "ap1"), _approval("c1", "ap2"))


def test_replayed_approval_request_keeps_terminal_parts() -> None:
    """An approval request for a finished, failed or denied call changes nothing."""
    for part in (
        DONE,
        _tool("output-error", errorText="e"),
        _tool("output-denied", approval={"id": "ap1", "approved": False}),
    ):
        _assert_unchanged(_message(part), _approval("c1", "ap1"))


def test_repeated_approval_request_with_same_id_keeps_approval() -> None:
    """The same approval request twice keeps the first one's descriptor and signature."""
    first = {**_approval("c1", "ap1"), "approvalDescriptor": "Delete?", "signature": "s1"}
    folded = fold_stream([_available("c1"), first, _approval("c1", "ap1")])
    assert _part_of(folded)["approval"] == {"id": "ap1", "descriptor": "Delete?", "signature": "s1"}


def test_approval_request_with_new_id_replaces_pending_approval() -> None:
    """A new approval id for a pending call is not a replay: the request is replaced."""
    folded = fold_stream([_available("c1"), _approval("c1", "ap1"), _approval("c1", "ap2")])
    assert _part_of(folded)["approval"] == {"id": "ap2"}


def test_replayed_output_denied_keeps_output_available_part() -> None:
    """A denial arriving after the output was recorded does not overwrite it."""
    _assert_unchanged(_message(DONE), {"type": "tool-output-denied", "toolCallId": "c1"})


def test_output_denied_for_approval_responded_part_is_ignored() -> None:
    """tool-output-denied for an approval-responded part changes nothing (§3.2 table)."""
    answered = _tool("approval-responded", approval={"id": "ap1", "approved": True})
    _assert_unchanged(_message(answered), {"type": "tool-output-denied", "toolCallId": "c1"})


def test_replayed_output_available_keeps_first_output() -> None:
    """First write wins: a second, different output for a finished call is ignored."""
    again = {"type": "tool-output-available", "toolCallId": "c1", "output": {"temp": -5}}
    _assert_unchanged(_message(DONE), again, {**again, "preliminary": True})


def test_output_error_after_output_available_is_ignored() -> None:
    """An error for a call that already succeeded changes nothing."""
    _assert_unchanged(
        _message(DONE),
        {"type": "tool-output-error", "toolCallId": "c1", "errorText": "late failure"},
    )


def test_output_after_output_error_is_ignored() -> None:
    """An output for a call that already failed changes nothing."""
    failed = _tool("output-error", errorText="boom")
    _assert_unchanged(
        _message(failed), {"type": "tool-output-available", "toolCallId": "c1", "output": 1}
    )


def test_final_output_replaces_preliminary_output() -> None:
    """A preliminary output is not terminal: the final output still replaces it."""
    preliminary = _tool("output-available", output="50%", preliminary=True)
    final = {"type": "tool-output-available", "toolCallId": "c1", "output": "done"}
    part = _part_of(fold_stream([final], _message(preliminary)))
    assert part["output"] == "done" and "preliminary" not in part


def test_replayed_tool_call_in_later_step_adds_no_part() -> None:
    """A whole tool call re-sent in a new step neither duplicates nor regresses the part."""
    call = [
        START,
        {**DELTA, "inputTextDelta": '{"city":"Paris"}'},
        _available("c1"),
        {"type": "tool-output-available", "toolCallId": "c1", "output": {"temp": 21}},
    ]
    first = fold_stream([{"type": "start-step"}, *call])
    again = fold_stream([{"type": "start-step"}, *call, {"type": "start-step"}, *call])
    assert again == {**first, "parts": [*first["parts"], STEP]}


# -- replays of calls in earlier messages ------------------------------------------------------

USER = {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "weather?"}]}
USER2 = {"id": "u2", "role": "user", "parts": [{"type": "text", "text": "and now?"}]}


def test_replayed_tool_call_of_earlier_message_leaves_it_unchanged() -> None:
    """Re-sent chunks for an earlier message's finished call change neither message."""
    earlier = _message(DONE, mid="a1")
    replays = [
        START,
        {**DELTA, "inputTextDelta": "{}"},
        _available("c1"),
        {"type": "tool-output-available", "toolCallId": "c1", "output": "other"},
    ]
    text = [{"type": "text-start", "id": "t"}, {"type": "text-end", "id": "t"}]
    result = fold_into_conversation([USER, earlier, USER2], [*replays, *text], message_id="a2")
    assert result[:3] == [USER, earlier, USER2]
    assert result[3]["parts"] == [{"type": "text", "text": "", "state": "done"}]


def test_replay_in_continuation_of_call_from_an_earlier_message_changes_nothing() -> None:
    """In a continuation, replays of a call living in an earlier message change nothing."""
    earlier = _message(DONE, mid="a1")
    current = _message(_tool("input-available", call="c2"), mid="a2")
    conversation = [USER, earlier, USER2, current]
    result = fold_into_conversation(conversation, [START, _available("c1")], continuation=True)
    assert result == conversation


# -- §3.3: outputs for tool calls of earlier messages ------------------------------------------


def test_output_for_earlier_message_tool_call_updates_that_part() -> None:
    """After an approval, the executed tool's output updates the part in the earlier message."""
    earlier = _message(_tool("approval-responded", approval={"id": "ap1", "approved": True}))
    output = {"type": "tool-output-available", "toolCallId": "c1", "output": {"temp": 21}}
    result = fold_into_conversation([USER, earlier, USER2], [output], message_id="a2")
    part = _part_of(result[1])
    assert (part["state"], part["output"], part["approval"]["approved"]) == (
        "output-available",
        {"temp": 21},
        True,
    )
    assert [p for p in result[-1]["parts"] if "toolCallId" in p] == []


def test_output_error_for_earlier_message_tool_call_updates_that_part() -> None:
    """A tool-output-error for an earlier message's call lands on that call."""
    earlier = _message(_tool("input-available"))
    error = {"type": "tool-output-error", "toolCallId": "c1", "errorText": "timeout"}
    result = fold_into_conversation([USER, earlier, USER2], [error], message_id="a2")
    assert (_part_of(result[1])["state"], _part_of(result[1])["errorText"]) == (
        "output-error",
        "timeout",
    )


def test_output_denied_for_earlier_message_tool_call_updates_that_part() -> None:
    """A tool-output-denied for an earlier message's pending approval lands on that call."""
    earlier = _message(_tool("approval-requested", approval={"id": "ap1"}))
    result = fold_into_conversation(
        [USER, earlier, USER2],
        [{"type": "tool-output-denied", "toolCallId": "c1"}],
        message_id="a2",
    )
    assert _part_of(result[1])["state"] == "output-denied"


def test_continuation_output_updates_part_in_earlier_step_of_same_message() -> None:
    """A continuation's output for an earlier step's call updates that part in place."""
    current = _message(
        _tool("approval-responded", approval={"id": "ap1", "approved": True}),
        STEP,
        {"type": "text", "text": "ok", "state": "done"},
    )
    output = {"type": "tool-output-available", "toolCallId": "c1", "output": 1}
    [result] = fold_into_conversation([current], [output], continuation=True)
    assert result["parts"][1]["state"] == "output-available"
    assert len(result["parts"]) == len(current["parts"])


def test_output_for_earlier_message_call_keeps_first_write() -> None:
    """An output for an earlier message's call that already finished is a replay too."""
    earlier = _message(DONE)
    output = {"type": "tool-output-available", "toolCallId": "c1", "output": "new"}
    result = fold_into_conversation([USER, earlier, USER2], [output], message_id="a2")
    assert result[1] == earlier


# -- the SDK, for contrast ---------------------------------------------------------------------


@pytest.mark.oracle
def test_sdk_regresses_a_replayed_tool_call_but_chatledger_keeps_it(oracle: Oracle) -> None:
    """The real SDK sends a finished part back to input-streaming on a replayed start; we do not."""
    message = _message(DONE)
    answer = oracle.read([START], message=copy.deepcopy(message))
    assert answer["ok"]
    assert _part_of(answer["message"]) == {
        "type": "tool-getWeather",
        "toolCallId": "c1",
        "state": "input-streaming",
    }
    assert fold_stream([START], message) == message


def test_tool_output_denied_completes_an_imported_pending_denial() -> None:
    """A denial imported as ``approval-responded`` (approved false) takes its ``tool-output-denied``.

    docs/behaviour.md §4.2 never leaves a denial pending; an *approved* call stays as it is (§3.2).
    """

    def imported(approved: bool) -> list[dict[str, Any]]:
        part = {
            "type": "tool-delete",
            "toolCallId": "c1",
            "state": "approval-responded",
            "input": {"path": "/"},
            "approval": {"id": "ap1", "approved": approved},
        }
        return [{"id": "a1", "role": "assistant", "parts": [part]}]

    denied = fold_into_conversation(
        imported(False), [{"type": "tool-output-denied", "toolCallId": "c1"}], continuation=True
    )
    approved = fold_into_conversation(
        imported(True), [{"type": "tool-output-denied", "toolCallId": "c1"}], continuation=True
    )
    assert denied[0]["parts"][0]["state"] == "output-denied"
    assert approved[0]["parts"][0]["state"] == "approval-responded"
