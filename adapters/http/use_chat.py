"""What a ``useChat`` request asks of the store: a pure planner from the stored messages and the request.

``DefaultChatTransport`` posts the whole conversation as the client holds it
(``{id, messages, trigger, messageId}``). ``plan_use_chat`` compares it with
the stored messages and returns a ``Plan``: the store actions that record what
is new, and what the responder is to write next (``chatledger.domain.commands``).
It reads nothing and writes nothing; the turn service
(``chatledger.adapters.store.turns``) records the plan. The rules:

* ``submit-message`` ending on a user message: a new user message (appended),
  an edit of a stored one (``edit``: the later messages are cut), the same
  last message again (a retry: nothing recorded), or an unchanged earlier one
  without what followed it (a regenerate of its answer, not an edit);
* ``submit-message`` ending on the assistant message: approval answers and
  tool outputs the client added to it (``approval-responded`` /
  ``output-denied`` with ``approval: {id, approved, reason}``,
  ``output-available`` / ``output-error``), then a continuation of that
  message, if its turn can continue;
* ``regenerate-message``: the answer named by ``messageId`` (else the one
  after the client's last known message) is cut;
* while an answer streams, only a new user message can be taken (AI SDK 7:
  it is queued for the running answer as a steering message,
  ``Plan.new_user_message``); anything else waits for the answer to end (409).

The store stays authoritative: parts it already answered keep their answer
(a contradicting approval is planned, and the store refuses it: 409) and tool
calls it does not know are ignored.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from chatledger.domain.commands import (
    Action,
    AddToolOutput,
    Answer,
    AppendMessage,
    EditMessage,
    Plan,
    Regenerate,
    RespondToApproval,
)
from chatledger.domain.errors import ChatLedgerError, InvalidInputError, InvalidMessageError
from chatledger.domain.tool_parts import is_terminal, is_tool_part

__all__ = [
    "CLIENT_TRIGGERS",
    "InvalidRequestError",
    "OutOfDateError",
    "plan_use_chat",
]

CLIENT_TRIGGERS = ("submit-message", "regenerate-message")
"""The ``trigger`` values a client may send (``DefaultChatTransport``); a stream's own triggers
add ``continuation`` (``chatledger.domain.aggregate.TRIGGERS``)."""


class InvalidRequestError(InvalidInputError):
    """The request cannot be answered as it is (HTTP 422); the message says what to change."""


class OutOfDateError(ChatLedgerError):
    """The client asks to continue a message that is no longer the conversation's last (HTTP 409)."""

    def __init__(self, message_id: str) -> None:
        super().__init__(
            f"message {message_id!r} is not the conversation's last message; "
            "reload the messages (GET /api/chats/{id}/messages)"
        )
        self.message_id = message_id


# -- the planner --------------------------------------------------------------------------


def plan_use_chat(
    stored: Sequence[Mapping[str, Any]],
    messages: Sequence[Mapping[str, Any]],
    trigger: str,
    message_id: str | None = None,
) -> Plan:
    """What recording a ``useChat`` request takes, given the conversation's stored messages.

    ``messages`` are the client's (each with a string ``id`` and ``role``).
    Raises ``InvalidRequestError`` when there is nothing to answer and
    ``OutOfDateError`` when the client continues a message that is not the
    last one (``InvalidMessageError`` for a ``messageId`` it does not
    hold). Whether a turn can continue once its answers are recorded is
    for the store to say (``NothingToContinueError``).
    """
    if trigger not in CLIENT_TRIGGERS:
        raise InvalidRequestError(
            f"'trigger' must be one of {', '.join(CLIENT_TRIGGERS)}, not {trigger!r}"
        )
    if trigger == "regenerate-message":
        return Plan(_regenerate(stored, messages, message_id), Answer(trigger, False))
    if not messages:
        raise InvalidRequestError("'messages' is empty: there is nothing to answer")
    last = messages[-1]
    actions: list[Action] = []
    client_assistant = next((m for m in reversed(messages) if m["role"] == "assistant"), None)
    if client_assistant is not None:
        actions += _answers(client_assistant, stored, continuing=last["role"] == "assistant")
    if last["role"] == "user":
        actions += _user_message(dict(last), stored)
        return Plan(tuple(actions), Answer(trigger, False))
    if last["role"] == "assistant":
        if not stored or stored[-1]["id"] != last["id"]:
            raise OutOfDateError(str(last["id"]))
        return Plan(tuple(actions), Answer("continuation", True))
    raise InvalidRequestError(
        f"the last message must be a user or an assistant message, not {last['role']!r}"
    )


def _regenerate(
    stored: Sequence[Mapping[str, Any]],
    messages: Sequence[Mapping[str, Any]],
    message_id: str | None,
) -> tuple[Action, ...]:
    """Cut the answer to regenerate: ``messageId``, else whatever follows the client's last message."""
    stored_ids = [m["id"] for m in stored]
    if message_id is not None:
        if message_id not in stored_ids:
            raise InvalidMessageError("no message with this id", message_id=message_id)
        target: str | None = message_id
    else:
        target = next((m["id"] for m in reversed(messages) if m["id"] in stored_ids), None)
    if target is not None:
        index = stored_ids.index(target)
        kept = index if stored[index]["role"] == "assistant" else index + 1
        action: tuple[Action, ...] = (Regenerate(target),)
    elif stored and stored[-1]["role"] == "assistant":
        kept, action = len(stored) - 1, (Regenerate(None),)
    else:
        kept, action = len(stored), ()
    if kept == 0:
        raise InvalidRequestError(
            "nothing to regenerate: the conversation has no message to answer"
        )
    return action


def _user_message(message: dict[str, Any], stored: Sequence[Mapping[str, Any]]) -> list[Action]:
    """Append a new user message; an already stored one is an edit (or a retry if it is the last)."""
    index = next((i for i, m in enumerate(stored) if m["id"] == message["id"]), None)
    if index is None:
        return [AppendMessage(message)]
    if stored[index] == message:
        if index == len(stored) - 1:
            return []  # the same request again: answer it, record nothing new
        # The same message re-posted without what followed it: the client asks for a new
        # answer to it, which is a regenerate (an edit would record a change that was not made).
        return [Regenerate(message["id"])]
    return [EditMessage(message["id"], message)]


def _answers(
    client_message: Mapping[str, Any],
    stored: Sequence[Mapping[str, Any]],
    *,
    continuing: bool,
) -> list[Action]:
    """Approval answers and tool outputs the client's assistant message has and the store lacks.

    When the client asks to continue, the answers may request the
    continuation; otherwise they do not.
    """
    known = next((m for m in stored if m["id"] == client_message["id"]), None)
    if known is None:
        return []
    mine_by_call = {
        p["toolCallId"]: p
        for p in known.get("parts", [])
        if isinstance(p, dict) and is_tool_part(p) and "toolCallId" in p
    }
    parts = client_message.get("parts")
    actions: list[Action] = []
    for part in parts if isinstance(parts, list) else []:
        if not isinstance(part, dict) or not is_tool_part(part):
            continue
        call = part.get("toolCallId")
        mine = mine_by_call.get(call) if isinstance(call, str) else None
        if mine is None or mine == part or not isinstance(call, str):  # unknown, or nothing new
            continue
        action = _answer(call, part, mine, continuing)
        if action is not None:
            actions.append(action)
    return actions


def _answer(
    call: str, part: Mapping[str, Any], mine: Mapping[str, Any], continuing: bool
) -> Action | None:
    """The action recording what the client's tool ``part`` says beyond the stored one, if any."""
    state, before = part.get("state"), mine.get("state")
    given = part.get("approval")
    approval: Mapping[str, Any] = given if isinstance(given, dict) else {}
    approved = approval.get("approved")
    if state in ("approval-responded", "output-denied") and isinstance(approved, bool):
        recorded_approval = mine.get("approval")
        recorded = (
            recorded_approval.get("approved") if isinstance(recorded_approval, dict) else None
        )
        if before == "approval-requested" or (
            before in ("approval-responded", "output-denied") and recorded != approved
        ):
            approval_id = approval.get("id")
            reason = approval.get("reason")
            return RespondToApproval(
                tool_call_id=call,
                approval_id=approval_id if isinstance(approval_id, str) else None,
                approved=approved,
                reason=reason if isinstance(reason, str) else None,
                auto_continue=continuing,
            )
        return None
    if state in ("output-available", "output-error") and not is_terminal(mine):
        error_text = part.get("errorText")
        return AddToolOutput(
            tool_call_id=call,
            state=state,
            output=part.get("output") if state == "output-available" else None,
            error_text=error_text
            if state == "output-error" and isinstance(error_text, str)
            else None,
            auto_continue=continuing,
        )
    return None
