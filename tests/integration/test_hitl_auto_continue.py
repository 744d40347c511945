"""Auto-continuation defaults (docs/behaviour.md §4.3): on for approvals and tool results, off for errors.

Overridable per action and by the store setting ``open(url, auto_continue=False)``.
Runs on memory://, a SQLite file and PostgreSQL.
"""

from __future__ import annotations

import pytest

from chatledger import ConversationStore
from tests.integration.conftest import Backend
from tests.integration.hitl_support import (
    DELETE,
    LOCATE,
    answers,
    continuation_requests,
    paused_turn,
)

# -- auto-continuation defaults (docs/behaviour.md §4.3) -------------------------------------------------


@pytest.mark.parametrize("approved", [True, False])
def test_an_approval_answer_requests_a_continuation_by_default(
    store: ConversationStore, approved: bool
) -> None:
    """Approvals and denials both request one continuation of the paused turn, by default."""
    paused_turn(store, "chat", [DELETE])

    result = store.respond_to_approval("chat", approval_id=DELETE.approval_id, approved=approved)

    assert result.continuation_requested
    (request,) = continuation_requests(store, "chat")
    assert request.message_id == "a1"
    assert [(p.chat_id, p.message_id) for p in store.pending_continuations()] == [("chat", "a1")]


def test_an_output_available_tool_output_requests_a_continuation_by_default(
    store: ConversationStore,
) -> None:
    """A client tool result requests one continuation by default."""
    paused_turn(store, "chat", [LOCATE])

    result = store.add_tool_output("chat", LOCATE.call_id, output={"city": "Lyon"})

    assert result.continuation_requested
    assert len(continuation_requests(store, "chat")) == 1
    assert len(store.pending_continuations()) == 1


def test_an_output_error_tool_output_requests_no_continuation_by_default(
    store: ConversationStore,
) -> None:
    """A client error (custom denial) requests no continuation by default."""
    paused_turn(store, "chat", [DELETE])

    result = store.add_tool_output("chat", DELETE.call_id, state="output-error", error_text="No.")

    assert result.changed and not result.continuation_requested
    assert continuation_requests(store, "chat") == []
    assert store.pending_continuations() == []


@pytest.mark.parametrize(
    ("action", "auto_continue", "expected"),
    [
        ("approve", False, 0),
        ("deny", False, 0),
        ("output-available", False, 0),
        ("output-error", True, 1),
    ],
)
def test_auto_continue_can_be_overridden_per_action(
    store: ConversationStore, action: str, auto_continue: bool, expected: int
) -> None:
    """``auto_continue=`` on the action beats the default both ways, and is recorded."""
    paused_turn(store, "chat", [DELETE])
    if action in ("approve", "deny"):
        result = store.respond_to_approval(
            "chat",
            approval_id=DELETE.approval_id,
            approved=action == "approve",
            auto_continue=auto_continue,
        )
    else:
        result = store.add_tool_output(
            "chat",
            DELETE.call_id,
            state=action,
            output={"deleted": True},
            error_text="No.",
            auto_continue=auto_continue,
        )

    assert result.changed
    assert result.continuation_requested is bool(expected)
    assert len(continuation_requests(store, "chat")) == expected
    assert [e.auto_continue for e in answers(store, "chat")] == [auto_continue]


def test_the_store_setting_turns_the_default_continuation_off(backend: Backend) -> None:
    """``open(auto_continue=False)`` requests nothing by default; an action can ask."""
    store = backend.open(auto_continue=False)
    paused_turn(store, "approve", [DELETE])
    paused_turn(store, "output", [LOCATE])
    paused_turn(store, "asked", [DELETE])

    approved = store.respond_to_approval("approve", approval_id=DELETE.approval_id, approved=True)
    output = store.add_tool_output("output", LOCATE.call_id, output={"city": "Lyon"})
    asked = store.respond_to_approval(
        "asked", approval_id=DELETE.approval_id, approved=True, auto_continue=True
    )

    assert (approved.changed, approved.continuation_requested) == (True, False)
    assert (output.changed, output.continuation_requested) == (True, False)
    assert continuation_requests(store, "approve") == continuation_requests(store, "output") == []
    assert asked.continuation_requested
    assert [p.chat_id for p in store.pending_continuations()] == ["asked"]
