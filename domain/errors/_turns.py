"""Errors about a turn's tool calls: approvals, outputs, continuations, calls unanswered at conversion."""

from __future__ import annotations

from collections.abc import Sequence

from chatledger.domain.errors._base import ChatLedgerError

__all__ = [
    "ApprovalConflictError",
    "ContinuationNotPendingError",
    "MessageConversionError",
    "NothingToContinueError",
    "ToolCallNotReadyError",
    "UnansweredToolCallError",
]


class ApprovalConflictError(ChatLedgerError):
    """A tool call's approval was already answered the other way; the first answer stands."""

    def __init__(self, tool_call_id: str, approval_id: str, recorded: bool) -> None:
        self.tool_call_id = tool_call_id
        self.approval_id = approval_id
        self.recorded = recorded
        answer = "approved" if recorded else "denied"
        super().__init__(
            f"approval {approval_id!r} of tool call {tool_call_id!r} was already {answer}; "
            "a different answer is refused"
        )


class ToolCallNotReadyError(ChatLedgerError):
    """A tool call cannot take a client's output now.

    Its input is still streaming, or (``output-available`` with
    ``preliminary``) a tool run by the server is still streaming its output.
    """

    def __init__(self, tool_call_id: str, state: str) -> None:
        self.tool_call_id = tool_call_id
        self.state = state
        if state == "output-available":
            why = (
                "it has a preliminary output from a tool the server runs, whose final output "
                "comes from the model's stream"
            )
        else:
            why = "outputs are accepted once its input is available"
        super().__init__(
            f"tool call {tool_call_id!r} is in state {state!r} and cannot take an output now; {why}"
        )


class NothingToContinueError(ChatLedgerError):
    """A request asks to continue a turn that cannot continue now (HTTP 409)."""

    def __init__(self, status: str, waiting_for: Sequence[str] = ()) -> None:
        detail = f" (waiting for {', '.join(waiting_for)})" if waiting_for else ""
        super().__init__(f"the turn cannot continue: the conversation is {status}{detail}")
        self.status = status
        self.waiting_for = tuple(waiting_for)


class ContinuationNotPendingError(ChatLedgerError):
    """The continuation request named is not pending (already started, or never made)."""

    def __init__(self, chat_id: str, request_id: str) -> None:
        self.chat_id = chat_id
        self.request_id = request_id
        super().__init__(
            f"conversation {chat_id!r}: continuation request {request_id!r} is not pending "
            "(another worker may have started it already)"
        )


class UnansweredToolCallError(ChatLedgerError):
    """The last assistant message has tool calls with no result yet.

    Provider APIs refuse a tool call without its result. While a call awaits
    approval or a client's output the turn is paused; once every such call is
    answered and the approved ones only wait to run, the turn is ready to
    continue (as ``status()`` says). Answer or run the calls first, or convert
    with ``unanswered="omit"``. ``approved`` lists the calls approved but not run.
    """

    def __init__(self, tool_call_ids: list[str], *, approved: list[str] | None = None) -> None:
        self.tool_call_ids = tool_call_ids
        self.approved = list(approved or [])
        listed = ", ".join(repr(call) for call in tool_call_ids)
        if self.approved and set(self.approved) >= set(tool_call_ids):
            where = (
                "are approved but have not run yet (the turn is ready to continue: the "
                "continuation runs them)"
            )
        elif self.approved:
            ready = ", ".join(repr(call) for call in self.approved)
            where = f"have no result yet (the turn is paused; {ready} approved and ready to run)"
        else:
            where = "have no result yet (the turn is paused)"
        super().__init__(
            f"tool call(s) {listed} in the last assistant message {where}; answer them first, "
            "or pass unanswered='omit' to leave them out"
        )


class MessageConversionError(ChatLedgerError):
    """The messages cannot be converted to the model format asked for (the SDK's ``AI_MessageConversionError``)."""

    def __init__(self, reason: str, *, message_id: str | None = None) -> None:
        self.reason = reason
        self.message_id = message_id
        which = f" (message {message_id!r})" if message_id is not None else ""
        super().__init__(f"cannot convert the messages{which}: {reason}")
