"""The useChat planner: what a request adds to the stored conversation, decided without a store.

Given the stored messages and a ``DefaultChatTransport`` body, ``plan_use_chat``
returns the store actions and what the responder writes next.
"""

from __future__ import annotations

import copy
import subprocess
import sys
from typing import Any

import pytest

from chatledger.adapters.http.use_chat import (
    CLIENT_TRIGGERS,
    InvalidRequestError,
    OutOfDateError,
    plan_use_chat,
)
from chatledger.domain import aggregate
from chatledger.domain.commands import (
    AddToolOutput,
    Answer,
    AppendMessage,
    EditMessage,
    Plan,
    Regenerate,
    RespondToApproval,
)
from chatledger.domain.errors import InvalidMessageError
from tests.support.builders import assistant, user

Message = dict[str, Any]


def tool(call: str, state: str, **fields: Any) -> dict[str, Any]:
    return {"type": "tool-delete_file", "toolCallId": call, "state": state, "input": {}, **fields}


def awaiting(call: str = "c1") -> dict[str, Any]:
    return tool(call, "approval-requested", approval={"id": f"a_{call}"})


def test_a_new_user_message_is_appended() -> None:
    """The client's last message, unknown to the store, is appended; a new answer follows."""
    plan = plan_use_chat(
        [user("u1"), assistant("a1")], [user("u1"), assistant("a1"), user("u2")], "submit-message"
    )
    assert plan == Plan((AppendMessage(user("u2")),), Answer("submit-message", False))


def test_the_same_last_message_again_records_nothing() -> None:
    """A retried request (same last user message) is answered again without a new action."""
    plan = plan_use_chat([user("u1")], [user("u1")], "submit-message")
    assert plan.actions == ()
    assert plan.answer == Answer("submit-message", False)


def test_an_identical_body_posted_again_is_a_regenerate_not_an_edit() -> None:
    """The same first request re-posted after it was answered asks for a new answer: nothing was edited."""
    plan = plan_use_chat([user("u1"), assistant("a1")], [user("u1")], "submit-message")
    assert plan.actions == (Regenerate("u1"),)
    assert plan.answer == Answer("submit-message", False)


def test_a_changed_stored_user_message_is_an_edit() -> None:
    """A stored user message sent with new content replaces it (the later messages are cut)."""
    edited = user("u1", "changed")
    plan = plan_use_chat([user("u1"), assistant("a1")], [edited], "submit-message")
    assert plan.actions == (EditMessage("u1", edited),)


def test_an_approval_inside_messages_is_answered_and_continued() -> None:
    """``addToolApprovalResponse`` then send: the approval is recorded and the same message continues."""
    stored = [user("u1"), assistant("a1", awaiting())]
    answered = assistant(
        "a1", tool("c1", "approval-responded", approval={"id": "a_c1", "approved": True})
    )
    plan = plan_use_chat(stored, [user("u1"), answered], "submit-message")
    assert plan.actions == (RespondToApproval("c1", "a_c1", True, None, auto_continue=True),)
    assert plan.answer == Answer("continuation", True)
    assert plan.continues


def test_a_denial_with_a_reason_is_recorded_without_continuing_when_a_user_message_follows() -> (
    None
):
    """Answers found in an earlier assistant message do not request a continuation."""
    stored = [user("u1"), assistant("a1", awaiting())]
    denied = assistant(
        "a1",
        tool("c1", "output-denied", approval={"id": "a_c1", "approved": False, "reason": "no"}),
    )
    plan = plan_use_chat(stored, [user("u1"), denied, user("u2")], "submit-message")
    assert plan.actions == (
        RespondToApproval("c1", "a_c1", False, "no", auto_continue=False),
        AppendMessage(user("u2")),
    )


def test_tool_outputs_and_errors_the_store_lacks_are_added() -> None:
    """``addToolOutput``: an output or an error for a call still waiting for one."""
    stored = [
        user("u1"),
        assistant("a1", tool("c1", "input-available"), tool("c2", "input-available")),
    ]
    client = assistant(
        "a1",
        tool("c1", "output-available", output={"ok": 1}),
        tool("c2", "output-error", errorText="refused by the user"),
    )
    plan = plan_use_chat(stored, [user("u1"), client], "submit-message")
    assert plan.actions == (
        AddToolOutput("c1", "output-available", {"ok": 1}, None, auto_continue=True),
        AddToolOutput("c2", "output-error", None, "refused by the user", auto_continue=True),
    )


def test_the_store_stays_authoritative() -> None:
    """Unknown calls are ignored, answered calls keep their answer, a contradiction goes to the store."""
    done = tool("c1", "output-available", output=1)
    denied = tool("c2", "output-denied", approval={"id": "a_c2", "approved": False})
    stored = [user("u1"), assistant("a1", done, denied)]
    client = assistant(
        "a1",
        tool("c1", "output-available", output=2),  # terminal in the store: kept
        tool("c2", "approval-responded", approval={"id": "a_c2", "approved": True}),
        tool("c9", "output-available", output=3),  # unknown to the store
    )
    plan = plan_use_chat(stored, [user("u1"), client, user("u2")], "submit-message")
    assert plan.actions == (
        RespondToApproval("c2", "a_c2", True, None, auto_continue=False),  # the store says 409
        AppendMessage(user("u2")),
    )


def test_parts_the_client_did_not_change_record_nothing() -> None:
    stored = [user("u1"), assistant("a1", awaiting())]
    plan = plan_use_chat(stored, copy.deepcopy(stored), "submit-message")
    assert plan.actions == ()
    assert plan.continues


def test_continuing_a_message_that_is_not_the_last_is_out_of_date() -> None:
    stored = [user("u1"), assistant("a1"), user("u2")]
    with pytest.raises(OutOfDateError, match="'a1'"):
        plan_use_chat(stored, [user("u1"), assistant("a1")], "submit-message")
    with pytest.raises(OutOfDateError):
        plan_use_chat([], [assistant("a1")], "submit-message")


@pytest.mark.parametrize(
    ("stored", "client", "message_id", "expected"),
    [
        ([user("u1"), assistant("a1")], [user("u1"), assistant("a1")], "a1", Regenerate("a1")),
        ([user("u1"), assistant("a1")], [user("u1")], None, Regenerate("u1")),
        ([user("u1"), assistant("a1")], [user("x")], None, Regenerate(None)),
    ],
    ids=["by-message-id", "after-the-clients-last-known", "the-last-answer"],
)
def test_regenerate_cuts_the_answer(
    stored: list[Message], client: list[Message], message_id: str | None, expected: Regenerate
) -> None:
    plan = plan_use_chat(stored, client, "regenerate-message", message_id)
    assert plan == Plan((expected,), Answer("regenerate-message", False))


def test_regenerate_refuses_what_cannot_be_answered() -> None:
    """Nothing left to answer, or a message id the store does not hold."""
    with pytest.raises(InvalidRequestError, match="nothing to regenerate"):
        plan_use_chat([assistant("a1")], [], "regenerate-message", "a1")
    with pytest.raises(InvalidRequestError, match="nothing to regenerate"):
        plan_use_chat([], [], "regenerate-message")
    with pytest.raises(InvalidMessageError, match="no message with this id"):
        plan_use_chat([user("u1")], [], "regenerate-message", "nope")


def test_bad_requests_are_refused_with_what_to_change() -> None:
    with pytest.raises(InvalidRequestError, match="'messages' is empty"):
        plan_use_chat([], [], "submit-message")
    with pytest.raises(InvalidRequestError, match="trigger"):
        plan_use_chat([], [user("u1")], "continuation")
    with pytest.raises(InvalidRequestError, match="user or an assistant"):
        plan_use_chat([], [{"id": "s", "role": "system", "parts": []}], "submit-message")


def test_malformed_parts_are_ignored_not_a_crash() -> None:
    """Parts that are not objects, a non-list ``parts``, a list ``toolCallId``: nothing to record."""
    stored = [user("u1"), assistant("a1", awaiting())]
    for parts in ("text", [1, None, {"type": "tool-x", "toolCallId": ["c1"]}], None):
        client = {"id": "a1", "role": "assistant", "parts": parts}
        assert plan_use_chat(
            stored, [user("u1"), client, user("u2")], "submit-message"
        ).actions == (AppendMessage(user("u2")),)


def test_one_set_of_client_triggers() -> None:
    """The triggers a client may send are the stream triggers without ``continuation``."""
    assert (*CLIENT_TRIGGERS, "continuation") == aggregate.TRIGGERS


def test_the_planner_needs_no_web_framework() -> None:
    """Importing the planner does not load Starlette (the package façade may load the store)."""
    code = (
        "import sys, chatledger.adapters.http.use_chat; "
        "print(sorted(m for m in sys.modules if m.startswith('starlette')))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


def test_only_a_new_user_message_can_be_sent_while_an_answer_streams() -> None:
    """Mid-answer, the client's message (its view of the answer lagging or not) is steering; the rest waits."""
    denied = {"id": "a_c1", "approved": False, "reason": "no"}
    streaming = assistant("a1", {"type": "text", "text": "Paris is", "state": "streaming"})
    stored = [user("u1"), streaming]
    lagging = assistant("a1", {"type": "text", "text": "Par", "state": "streaming"})
    for client in ([user("u1"), lagging, user("u2")], [user("u1"), user("u2")]):
        assert plan_use_chat(stored, client, "submit-message").new_user_message() == user("u2")
    waiting = [
        plan_use_chat(stored, [user("u1", "edited")], "submit-message"),  # an edit
        plan_use_chat(stored, [user("u1"), streaming], "submit-message"),  # a continuation
        plan_use_chat(stored, [user("u1")], "submit-message"),  # a regenerate of u1's answer
        plan_use_chat(stored, [user("u1"), streaming], "regenerate-message"),
        plan_use_chat(
            [user("u1"), assistant("a1", awaiting())],
            [user("u1"), assistant("a1", tool("c1", "output-denied", approval=denied)), user("u2")],
            "submit-message",
        ),  # an approval answer with the message
    ]
    assert [plan.new_user_message() for plan in waiting] == [None] * len(waiting)
