"""Client actions on tool calls (docs/behaviour.md §4.1-4.3): tool outputs, approvals, duplicates, audit.

Every test runs on memory://, a SQLite file and PostgreSQL (the ``store`` /
``backend`` fixtures of ``conftest.py``). Conversations are built from AI SDK v6
chunk streams (``hitl_support.tool_step_chunks``) or imported UIMessages.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from chatledger import (
    ApprovalConflictError,
    ConversationStore,
    ToolCallNotReadyError,
    UnknownToolCallError,
)
from chatledger.domain.events import (
    ContinuationClaimed,
    ContinuationRequested,
    MessagesCut,
    ToolApprovalResponded,
    ToolOutputAdded,
)
from tests.integration.hitl_support import (
    ALICE,
    BOB,
    DEFAULT_DENIAL,
    DELETE,
    LOCATE,
    RUNNER,
    WEATHER,
    WIRE,
    answers,
    events_of,
    new_chat,
    part,
    paused_turn,
    tool_input_chunks,
)
from tests.support.ledger import as_json

# -- tool outputs (docs/behaviour.md §4.1) ------------------------------------------------------


def _call_in_state(store: ConversationStore, chat: str, state: str) -> str:
    """A conversation whose one tool call is in ``state``; returns the call id."""
    if state == "input-available":
        paused_turn(store, chat, [LOCATE])
        return LOCATE.call_id
    paused_turn(store, chat, [DELETE])
    if state == "approval-responded":
        store.respond_to_approval(
            chat, approval_id=DELETE.approval_id, approved=True, auto_continue=False
        )
    assert part(store, chat, DELETE.call_id)["state"] == state
    return DELETE.call_id


@pytest.mark.parametrize("state", ["input-available", "approval-requested", "approval-responded"])
def test_a_tool_output_is_accepted_from_every_ready_state(
    store: ConversationStore, state: str
) -> None:
    """input-available, approval-requested and approval-responded calls take an output."""
    call_id = _call_in_state(store, "chat", state)
    before = store.version("chat")

    result = store.add_tool_output("chat", call_id, output={"done": True, "rows": 3}, actor=RUNNER)

    assert (result.tool_call_id, result.changed, result.state) == (
        call_id,
        True,
        "output-available",
    )
    settled = part(store, "chat", call_id)
    assert settled["state"] == "output-available"
    assert settled["output"] == {"done": True, "rows": 3}
    assert settled.get("preliminary", False) is False
    assert "errorText" not in settled
    assert [type(e) for e in answers(store, "chat")][-1] is ToolOutputAdded
    assert store.version("chat") > before


def test_an_output_error_records_the_clients_text_as_a_custom_denial(
    store: ConversationStore,
) -> None:
    """An output-error with ``error_text`` ends the call in output-error with that text."""
    paused_turn(store, "chat", [DELETE])

    result = store.add_tool_output(
        "chat",
        DELETE.call_id,
        state="output-error",
        error_text="Refused: the report is still needed.",
        actor=ALICE,
    )

    assert (result.changed, result.state) == (True, "output-error")
    settled = part(store, "chat", DELETE.call_id)
    assert settled["state"] == "output-error"
    assert settled["errorText"] == "Refused: the report is still needed."
    assert "output" not in settled
    assert settled["input"] == DELETE.input


def test_an_output_error_without_text_gets_the_default_denial_text(
    store: ConversationStore,
) -> None:
    """An output-error given no ``error_text`` reads "Tool execution denied by user."."""
    paused_turn(store, "chat", [DELETE])

    store.add_tool_output("chat", DELETE.call_id, state="output-error", actor=ALICE)

    settled = part(store, "chat", DELETE.call_id)
    assert (settled["state"], settled["errorText"]) == ("output-error", DEFAULT_DENIAL)


def test_a_tool_output_for_a_call_still_streaming_its_input_is_refused_as_not_ready(
    store: ConversationStore,
) -> None:
    """A call still in input-streaming refuses an output with ToolCallNotReadyError."""
    new_chat(store, "chat")
    half = tool_input_chunks(DELETE)[:2]  # tool-input-start and the first delta only
    store.ingest(
        "chat",
        [{"type": "start", "messageId": "a1"}, {"type": "start-step"}, *half],
        outcome="interrupted",
    )
    assert part(store, "chat", DELETE.call_id)["state"] == "input-streaming"
    before, shown = store.version("chat"), as_json(store.messages("chat"))

    with pytest.raises(ToolCallNotReadyError, match="once its input is available"):
        store.add_tool_output("chat", DELETE.call_id, output={"deleted": True})

    assert store.version("chat") == before
    assert as_json(store.messages("chat")) == shown


def test_a_tool_output_for_a_call_with_a_preliminary_output_is_refused_saying_why(
    store: ConversationStore,
) -> None:
    """A server tool still streaming its output (``preliminary``) takes no client output."""
    new_chat(store, "chat")
    store.ingest(
        "chat",
        [
            {"type": "start", "messageId": "a1"},
            {"type": "start-step"},
            *tool_input_chunks(DELETE),
            {
                "type": "tool-output-available",
                "toolCallId": DELETE.call_id,
                "output": {"progress": 0.5},
                "preliminary": True,
            },
        ],
        outcome="interrupted",
    )
    before = store.version("chat")

    with pytest.raises(ToolCallNotReadyError, match="preliminary output from a tool the server"):
        store.add_tool_output("chat", DELETE.call_id, output={"deleted": True})

    assert store.version("chat") == before


def test_a_tool_output_for_an_unknown_call_is_refused(store: ConversationStore) -> None:
    """An output for a call id never seen raises UnknownToolCallError, records nothing."""
    paused_turn(store, "chat", [DELETE])
    before = store.version("chat")

    with pytest.raises(UnknownToolCallError):
        store.add_tool_output("chat", "call_never_made", output={"x": 1})

    assert store.version("chat") == before


# -- approvals (docs/behaviour.md §4.2) -----------------------------------------------------------


@pytest.mark.parametrize("by", ["approval_id", "tool_call_id"])
def test_approving_moves_the_call_to_approval_responded(store: ConversationStore, by: str) -> None:
    """Approving (by either id) gives approval-responded, approved true, the reason."""
    paused_turn(store, "chat", [DELETE])
    key = (
        {"approval_id": DELETE.approval_id}
        if by == "approval_id"
        else {"tool_call_id": DELETE.call_id}
    )

    result = store.respond_to_approval(
        "chat", **key, approved=True, reason="Old export, safe to drop.", actor=ALICE
    )

    assert (result.tool_call_id, result.changed, result.state) == (
        DELETE.call_id,
        True,
        "approval-responded",
    )
    settled = part(store, "chat", DELETE.call_id)
    assert settled["state"] == "approval-responded"
    assert settled["approval"] == {
        "id": DELETE.approval_id,
        "approved": True,
        "reason": "Old export, safe to drop.",
    }
    assert settled["input"] == DELETE.input


@pytest.mark.parametrize("by", ["approval_id", "tool_call_id"])
def test_denying_moves_the_call_to_output_denied_with_the_reason(
    store: ConversationStore, by: str
) -> None:
    """Denying (by either id) gives output-denied, approved false, the reason."""
    paused_turn(store, "chat", [DELETE])
    key = (
        {"approval_id": DELETE.approval_id}
        if by == "approval_id"
        else {"tool_call_id": DELETE.call_id}
    )

    result = store.respond_to_approval(
        "chat", **key, approved=False, reason="Finance still needs it.", actor=ALICE
    )

    assert (result.changed, result.state) == (True, "output-denied")
    settled = part(store, "chat", DELETE.call_id)
    assert settled["state"] == "output-denied"
    assert settled["approval"] == {
        "id": DELETE.approval_id,
        "approved": False,
        "reason": "Finance still needs it.",
    }


def test_a_call_that_asked_no_approval_can_be_approved_by_its_tool_call_id(
    store: ConversationStore,
) -> None:
    """An input-available call accepts an approval; its approval id is the tool call id."""
    paused_turn(store, "chat", [LOCATE])

    result = store.respond_to_approval(
        "chat", tool_call_id=LOCATE.call_id, approved=True, actor=ALICE
    )

    assert (result.changed, result.state) == (True, "approval-responded")
    assert part(store, "chat", LOCATE.call_id)["approval"] == {
        "id": LOCATE.call_id,
        "approved": True,
    }


@pytest.mark.parametrize("key", [{"approval_id": "appr_unknown"}, {"tool_call_id": "call_unknown"}])
def test_an_answer_for_an_unknown_call_is_refused(
    store: ConversationStore, key: dict[str, str]
) -> None:
    """An answer naming no known call raises UnknownToolCallError, records nothing."""
    paused_turn(store, "chat", [DELETE])
    before = store.version("chat")

    with pytest.raises(UnknownToolCallError):
        store.respond_to_approval("chat", **key, approved=True)

    assert store.version("chat") == before


# -- duplicates: no event (docs/behaviour.md §2, §4.1, §4.2) ---------------------------------------


def test_the_same_tool_output_twice_records_one_event(store: ConversationStore) -> None:
    """The second identical tool output appends nothing and reports changed=False."""
    paused_turn(store, "chat", [LOCATE])
    first = store.add_tool_output("chat", LOCATE.call_id, output={"city": "Lyon"})
    before = store.version("chat")

    again = store.add_tool_output("chat", LOCATE.call_id, output={"city": "Lyon"})

    assert first.changed and not again.changed
    assert (again.state, again.continuation_requested) == ("output-available", False)
    assert store.version("chat") == before
    assert len(answers(store, "chat")) == 1


def _settle(store: ConversationStore, chat: str, how: str) -> str:
    """A call made terminal in one of four ways; returns its id."""
    if how == "served by the stream":
        paused_turn(store, chat, [WEATHER])
        return WEATHER.call_id
    if how == "client output":
        paused_turn(store, chat, [LOCATE])
        store.add_tool_output(chat, LOCATE.call_id, output={"city": "Lyon"})
        return LOCATE.call_id
    paused_turn(store, chat, [DELETE])
    if how == "client error":
        store.add_tool_output(chat, DELETE.call_id, state="output-error", error_text="No.")
    else:
        store.respond_to_approval(
            chat, approval_id=DELETE.approval_id, approved=False, reason="No."
        )
    return DELETE.call_id


@pytest.mark.parametrize("how", ["served by the stream", "client output", "client error", "denied"])
@pytest.mark.parametrize("second", ["output-available", "output-error"])
def test_a_different_tool_output_after_a_terminal_state_changes_nothing(
    store: ConversationStore, how: str, second: str
) -> None:
    """First write wins: a later, different output records nothing; the result stays."""
    call_id = _settle(store, "chat", how)
    before, original = store.version("chat"), part(store, "chat", call_id)

    result = store.add_tool_output(
        "chat", call_id, output={"other": "value"}, state=second, error_text="late"
    )

    assert (result.changed, result.state, result.continuation_requested) == (
        False,
        original["state"],
        False,
    )
    assert store.version("chat") == before
    assert part(store, "chat", call_id) == original


@pytest.mark.parametrize("approved", [True, False])
def test_the_same_approval_answer_twice_records_one_event(
    store: ConversationStore, approved: bool
) -> None:
    """Answering an approval again the same way appends nothing and reports changed=False."""
    paused_turn(store, "chat", [DELETE])
    store.respond_to_approval(
        "chat", approval_id=DELETE.approval_id, approved=approved, actor=ALICE
    )
    before, settled = store.version("chat"), part(store, "chat", DELETE.call_id)

    again = store.respond_to_approval(
        "chat", approval_id=DELETE.approval_id, approved=approved, actor=BOB
    )

    assert (again.changed, again.state, again.continuation_requested) == (
        False,
        settled["state"],
        False,
    )
    assert store.version("chat") == before
    assert len(events_of(store, "chat", ToolApprovalResponded)) == 1


@pytest.mark.parametrize("first", [True, False])
def test_a_different_answer_after_an_approval_was_recorded_is_refused(
    store: ConversationStore, first: bool
) -> None:
    """The other answer after one was recorded raises ApprovalConflictError and changes nothing."""
    paused_turn(store, "chat", [DELETE])
    store.respond_to_approval("chat", approval_id=DELETE.approval_id, approved=first, actor=ALICE)
    before, settled = store.version("chat"), part(store, "chat", DELETE.call_id)

    with pytest.raises(ApprovalConflictError):
        store.respond_to_approval(
            "chat", tool_call_id=DELETE.call_id, approved=not first, actor=BOB
        )

    assert store.version("chat") == before
    assert part(store, "chat", DELETE.call_id) == settled


# -- audit (docs/behaviour.md §1 Actor, §2) ------------------------------------------------------------


def test_every_recorded_action_carries_its_actor_time_and_reason(store: ConversationStore) -> None:
    """Answers, outputs, requests, claims and cuts record who, when and why."""
    started = datetime.now(UTC)
    paused_turn(store, "chat", [DELETE, WIRE, LOCATE])

    store.respond_to_approval(
        "chat", approval_id=DELETE.approval_id, approved=True, reason="Stale file.", actor=ALICE
    )
    store.respond_to_approval(
        "chat", tool_call_id=WIRE.call_id, approved=False, reason="Over budget.", actor=BOB
    )
    store.add_tool_output("chat", LOCATE.call_id, output={"city": "Lyon"}, actor=RUNNER)
    claimed = store.claim_continuation("worker-7")
    assert claimed is not None
    store.regenerate("chat", reason="Wrong tone.", actor=ALICE)
    finished = datetime.now(UTC)

    approve, deny = events_of(store, "chat", ToolApprovalResponded)
    assert (approve.actor, approve.tool_call_id, approve.approval_id) == (
        ALICE,
        DELETE.call_id,
        DELETE.approval_id,
    )
    assert (approve.approved, approve.reason, approve.auto_continue) == (True, "Stale file.", True)
    assert (deny.actor, deny.tool_call_id, deny.approval_id) == (
        BOB,
        WIRE.call_id,
        WIRE.approval_id,
    )
    assert (deny.approved, deny.reason) == (False, "Over budget.")
    (output,) = events_of(store, "chat", ToolOutputAdded)
    assert (output.actor, output.tool_call_id, output.state, output.output) == (
        RUNNER,
        LOCATE.call_id,
        "output-available",
        {"city": "Lyon"},
    )
    (request,) = events_of(store, "chat", ContinuationRequested)
    assert (request.actor, request.message_id) == (RUNNER, "a1")
    assert LOCATE.call_id in request.cause
    (claim,) = events_of(store, "chat", ContinuationClaimed)
    assert (claim.actor, claim.worker, claim.request_id) == (
        "worker-7",
        "worker-7",
        claimed.request_id,
    )
    (cut,) = events_of(store, "chat", MessagesCut)
    assert (cut.actor, cut.reason, cut.from_message_id, cut.trigger) == (
        ALICE,
        "Wrong tone.",
        "a1",
        "regenerate-message",
    )
    for event in (approve, deny, output, request, claim, cut):
        assert event.timestamp.tzinfo is not None, f"{type(event).__name__} time is not UTC-aware"
        assert started <= event.timestamp <= finished, (
            f"{type(event).__name__} at {event.timestamp}"
        )
