"""Client actions on a conversation: tool outputs, approval answers, regenerate, cut and edit.

Each is one decision of the aggregate run through the unit of work (load,
decide, save, retry on a version clash).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from chatledger.domain.continuation import latest_assistant
from chatledger.domain.errors import InvalidMessageError
from chatledger.domain.events import ContinuationRequested
from chatledger.domain.limits import check_names

if TYPE_CHECKING:
    from chatledger.adapters.store.unit_of_work import UnitOfWork
    from chatledger.domain.aggregate import Conversation
    from chatledger.domain.limits import Limits

__all__ = ["ActionResult", "add_tool_output", "cut", "edit", "regenerate", "respond_to_approval"]


@dataclass(frozen=True)
class ActionResult:
    """What a client action did."""

    tool_call_id: str
    """The tool call acted on."""
    changed: bool
    """False for a duplicate (no event was recorded)."""
    state: str
    """The tool part's state afterwards."""
    continuation_requested: bool = False
    """Whether the action queued a continuation of the turn."""


def add_tool_output(
    uow: UnitOfWork,
    tenant: str,
    chat_id: str,
    tool_call_id: str,
    *,
    output: Any,
    state: str,
    error_text: str | None,
    actor: str,
    auto_continue: bool,
    limits: Limits,
) -> ActionResult:
    """Record a tool call's result or error; see ``ConversationStore.add_tool_output``."""

    def decide(conversation: Conversation) -> Any:
        return conversation.add_tool_output(
            tool_call_id,
            state=state,
            output=output,
            error_text=error_text,
            actor=actor,
            auto_continue=auto_continue,
            limits=limits,
        )

    _, events, decision = uow.act(tenant, chat_id, decide)
    return _result(decision, events)


def respond_to_approval(
    uow: UnitOfWork,
    tenant: str,
    chat_id: str,
    *,
    approved: bool,
    approval_id: str | None,
    tool_call_id: str | None,
    reason: str | None,
    actor: str,
    auto_continue: bool,
) -> ActionResult:
    """Record an approval answer; see ``ConversationStore.respond_to_approval``."""

    def decide(conversation: Conversation) -> Any:
        return conversation.respond_to_approval(
            approval_id=approval_id,
            tool_call_id=tool_call_id,
            approved=approved,
            reason=reason,
            actor=actor,
            auto_continue=auto_continue,
        )

    _, events, decision = uow.act(tenant, chat_id, decide)
    return _result(decision, events)


def regenerate(
    uow: UnitOfWork,
    tenant: str,
    chat_id: str,
    message_id: str | None,
    *,
    reason: str | None,
    actor: str,
) -> int:
    """Cut an answer (default: the last) and what follows; see ``ConversationStore.regenerate``."""

    def decide(conversation: Conversation) -> int:
        messages = conversation.state.messages
        if message_id is None:
            target = latest_assistant(messages)
            if target is None:
                raise InvalidMessageError("nothing to regenerate: no assistant message")
            index = messages.index(target)
        else:
            index = next((i for i, m in enumerate(messages) if m["id"] == message_id), -1)
            if index < 0:
                raise InvalidMessageError("no message with this id", message_id=message_id)
            if messages[index]["role"] != "assistant":
                index += 1
        if index >= len(messages):
            return 0
        return conversation.cut_messages(
            messages[index]["id"], trigger="regenerate-message", reason=reason, actor=actor
        )

    return int(uow.act(tenant, chat_id, decide)[2])


def cut(
    uow: UnitOfWork,
    tenant: str,
    chat_id: str,
    from_message_id: str,
    *,
    trigger: str,
    reason: str | None,
    actor: str,
) -> int:
    """Cut a message and every later one from the view; see ``ConversationStore.cut``."""

    def decide(conversation: Conversation) -> int:
        return conversation.cut_messages(
            from_message_id, trigger=trigger, reason=reason, actor=actor
        )

    return int(uow.act(tenant, chat_id, decide)[2])


def edit(
    uow: UnitOfWork,
    tenant: str,
    chat_id: str,
    message_id: str,
    new_message: dict[str, Any],
    *,
    reason: str | None,
    actor: str,
    limits: Limits,
) -> int:
    """Replace a user message and cut what followed; see ``ConversationStore.edit``."""
    check_names(message_id=message_id, actor=actor)

    def decide(conversation: Conversation) -> int:
        target = next((m for m in conversation.state.messages if m["id"] == message_id), None)
        if target is None:
            raise InvalidMessageError(
                "no such message in the conversation (nothing to edit)", message_id=message_id
            )
        if target["role"] != "user":
            raise InvalidMessageError(
                f"only a user message can be edited, this one is {target['role']}",
                message_id=message_id,
            )
        count = conversation.cut_messages(message_id, trigger="edit", reason=reason, actor=actor)
        conversation.append_message(new_message, actor=actor, limits=limits)
        return count

    return int(uow.act(tenant, chat_id, decide)[2])


def _result(decision: Any, events: list[Any]) -> ActionResult:
    requested = any(isinstance(event, ContinuationRequested) for event in events)
    return ActionResult(decision.tool_call_id, decision.changed, decision.state, requested)
