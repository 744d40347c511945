"""Replaying a recorded conversation against a changed responder finds exactly the changes made."""

from __future__ import annotations

from typing import Any

import pytest

from chatledger.adapters.replay import NO_RECORDED_RESULT, assert_replay, replay
from tests.integration.replay_support import (
    DELETED,
    LIVE_DELETED,
    WEATHER,
    record,
    responder,
)


def _part(store: Any, chat_id: str, call_id: str) -> dict[str, Any]:
    for message in store.messages(chat_id):
        for part in message["parts"]:
            if part.get("toolCallId") == call_id:
                return dict(part)
    raise AssertionError(f"no part for {call_id} in {chat_id}")


def test_an_unchanged_responder_replays_without_divergence(store: Any) -> None:
    record(store, "rec")
    report = assert_replay(store, "rec", responder(), into="rec-replay")
    assert report.ok and report.exit_code == 0
    assert report.served == 3  # the approval, the client's result, the tool's own result
    assert len(report.replayed) == 3
    # the replay is a conversation of its own, with the recorded answers in it
    assert _part(store, "rec-replay", "call_del")["output"] == DELETED
    assert _part(store, "rec-replay", "call_wx")["output"] == WEATHER
    assert [m["role"] for m in store.messages("rec-replay")] == [
        m["role"] for m in store.messages("rec")
    ]


def test_a_tool_the_responder_runs_gets_the_recorded_result_not_its_own(store: Any) -> None:
    record(store, "rec")
    report = replay(store, "rec", responder(result=LIVE_DELETED), into="r2")
    assert report.ok, report.summary()
    assert _part(store, "r2", "call_del")["output"] == DELETED


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"first_text": "Deleting the logs now."}, [(1, "text")]),
        ({"last_text": "Bye.", "last_finish": "length"}, [(3, "text"), (3, "finish-reason")]),
        # another input: no recorded result is served, and the replay says so
        ({"weather_input": {"city": "Lyon"}}, [(2, "tool-input"), (2, "unmatched-tool-call"),
                                                (2, "text"), (2, "finish-reason")]),
        ({"delete_input": {"path": "/", "recursive": True}},
         # the call is left awaiting approval; the next turns still replay as recorded
         [(1, "tool-input"), (1, "unanswered-approval"), (1, "text"), (1, "finish-reason")]),
    ],
)  # fmt: skip
def test_a_changed_responder_diverges_exactly_where_it_was_changed(
    store: Any, changes: dict[str, Any], expected: list[tuple[int, str]]
) -> None:
    record(store, "rec")
    report = assert_replay(store, "rec", responder(**changes), expect=expected, into="rx")
    assert report.exit_code == 3
    assert report.to_json()["divergences"]


def test_a_call_with_another_input_is_never_served_the_recorded_result(store: Any) -> None:
    record(store, "rec")
    replay(store, "rec", responder(weather_input={"city": "Lyon"}), into="r3")
    part = _part(store, "r3", "call_wx")
    assert part["state"] == "input-available"  # nothing answered it
    assert "output" not in part


def test_a_result_the_responder_streams_for_another_input_is_replaced_by_an_error(
    store: Any,
) -> None:
    """The recorded decision is not given to another input, so even an approval-free run is refused a result."""
    record(store, "rec")
    changed = responder(delete_input={"path": "/"}, result=LIVE_DELETED)
    # skip the approval: the responder streams a result for its changed call straight away
    changed.scripts[0] = [c for c in changed.scripts[0] if c["type"] != "tool-approval-request"]
    changed.scripts[0][-1] = {"type": "finish", "finishReason": "stop"}
    changed.scripts[0][-1:-1] = [
        {"type": "tool-output-available", "toolCallId": "call_del", "output": LIVE_DELETED}
    ]
    report = replay(store, "rec", changed, into="r4")
    part = _part(store, "r4", "call_del")
    assert part["state"] == "output-error" and part["errorText"] == NO_RECORDED_RESULT
    assert (1, "unmatched-tool-call") in report.kinds()


def test_standing_grants_do_not_answer_a_replay_s_approvals(store: Any) -> None:
    """Only the recording's decisions answer a replay: a live grant for the tool approves nothing there."""
    record(store, "rec")
    grant = store.grants.give(scope="tool", tool_name="delete_file", actor="user:alice")
    changed = responder(delete_input={"path": "/", "recursive": True})
    report = replay(store, "rec", changed, into="r5")
    assert (1, "unanswered-approval") in report.kinds()
    assert _part(store, "r5", "call_del")["state"] == "approval-requested"
    assert store.grants.get(grant.grant_id).uses == 0
