"""What a request asks of a conversation, as data: the actions that record it and the answer to write.

A protocol adapter (the ``useChat`` planner of the HTTP app, a WebSocket
send) turns a client's request into a ``Plan``; the turn service
(``chatledger.adapters.store.turns``) records its actions in order, then
opens the stream of its answer. The commands are imperative and plain data:
they decide nothing and read nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = [
    "Action",
    "AddToolOutput",
    "Answer",
    "AppendMessage",
    "EditMessage",
    "Plan",
    "Regenerate",
    "RespondToApproval",
]


@dataclass(frozen=True)
class AppendMessage:
    """Append a new user message."""

    message: dict[str, Any]


@dataclass(frozen=True)
class EditMessage:
    """Replace a stored user message (it and the later messages are cut)."""

    message_id: str
    message: dict[str, Any]


@dataclass(frozen=True)
class Regenerate:
    """Cut the answer to regenerate: from ``message_id`` (None: the last assistant message)."""

    message_id: str | None


@dataclass(frozen=True)
class RespondToApproval:
    """Answer a tool call's approval request."""

    tool_call_id: str
    approval_id: str | None
    approved: bool
    reason: str | None
    auto_continue: bool


@dataclass(frozen=True)
class AddToolOutput:
    """Give a tool call its result (``output-available``) or error (``output-error``)."""

    tool_call_id: str
    state: str
    output: Any
    error_text: str | None
    auto_continue: bool


Action = AppendMessage | EditMessage | Regenerate | RespondToApproval | AddToolOutput
"""One store action of a plan."""


@dataclass(frozen=True)
class Answer:
    """What the responder is to write once a request is recorded."""

    trigger: str
    """``submit-message``, ``regenerate-message`` or ``continuation``."""
    continuation: bool
    """Whether it continues the last assistant message (else: a new message)."""
    request_id: str | None = None
    """The pending continuation request the answer fulfils, if any."""


@dataclass(frozen=True)
class Plan:
    """The actions recording a request, in order, and the answer to write after them."""

    actions: tuple[Action, ...]
    answer: Answer

    @property
    def continues(self) -> bool:
        """Whether the answer continues the last assistant message (the turn must be able to)."""
        return self.answer.continuation

    def new_user_message(self) -> dict[str, Any] | None:
        """The user message the request adds, if that is all it asks; else None.

        Such a request is recorded with its answer's stream in one transaction,
        and can be taken while another answer streams (an AI SDK 7 steering
        message). A request that also answers approvals, edits, regenerates,
        retries or continues is None.
        """
        if self.continues or len(self.actions) != 1:
            return None
        action = self.actions[0]
        if not isinstance(action, AppendMessage) or action.message.get("role") != "user":
            return None
        return action.message
