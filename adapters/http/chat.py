"""``POST /api/chat``'s use case: record what a ``useChat`` request adds, then open the answer's stream.

``take_turn`` reads the conversation from its aggregate (never the read
models: the write path does not wait for the projection), asks the pure
planner (``use_chat.plan_use_chat``) what the request adds, executes the
plan's actions with the client as the actor, and opens the stream the
responder writes. A request refused before its first action changes nothing:
a new conversation is created only once the plan and its first message are
known to be acceptable. A user message sent while an answer streams is
recorded as a steering message and answered once that answer ends
(``steering.py``).
"""

from __future__ import annotations

from typing import Any

from chatledger.adapters.http.steering import Steered, steer
from chatledger.adapters.http.turns import Turn, open_turn
from chatledger.adapters.http.use_chat import (
    Action,
    AddToolOutput,
    AppendMessage,
    EditMessage,
    NothingToContinueError,
    Plan,
    Regenerate,
    RespondToApproval,
    plan_use_chat,
)
from chatledger.adapters.store import ConversationStore
from chatledger.domain.conversation import ConversationState
from chatledger.domain.errors import ConversationNotFoundError
from chatledger.domain.parts import check_message
from chatledger.domain.redaction import Masks

__all__ = ["execute", "take_turn"]


def take_turn(
    store: ConversationStore,
    *,
    tenant: str,
    chat_id: str,
    actor: str,
    responder_actor: str,
    messages: list[dict[str, Any]],
    trigger: str,
    message_id: str | None,
    body: dict[str, Any],
) -> Turn | Steered:
    """Record a ``useChat`` request and open the stream of its answer (call it in a worker thread).

    While an answer streams, a new user message is recorded as a steering
    message and ``Steered`` returned (its answer comes once that answer ends:
    ``steering.answer_steered``); any other request is refused then
    (``StreamAlreadyOpenError``).
    """
    state = _current_state(store, chat_id, tenant)
    # A stream whose writer died (its lease ran out) is closed first; a live one takes a
    # new user message as steering (v7) or refuses.
    if (
        state is not None
        and state.stream is not None
        and store.expire_stream(chat_id, tenant=tenant, noticed_by=f"a new turn by {actor}")
    ):
        state = _current_state(store, chat_id, tenant)
    # Compared with what the client was shown: redacted parts read "[redacted]" there too.
    stored = [] if state is None else Masks(state.redactions).message_list(state.messages)
    plan = plan_use_chat(stored, messages, trigger, message_id)
    if state is not None and state.stream is not None:
        return steer(store, state, plan, chat_id=chat_id, tenant=tenant, actor=actor, body=body)
    if state is None:
        _check_first_actions(store, plan)
        store.start_conversation(chat_id, tenant=tenant, actor=actor, exist_ok=True)
    # The common send, one new user message, is recorded with its answer's stream in one
    # transaction: a resume through another server never finds the message without its
    # stream (it answered 204 then), and the turn costs one commit less.
    with_open = _only_new_message(plan)
    if with_open is None:
        execute(store, plan, chat_id=chat_id, tenant=tenant, actor=actor)
    request_id = None
    if plan.continues:
        status = store.status(chat_id, tenant=tenant)
        if status.status != "ready-to-continue":
            raise NothingToContinueError(
                status.status, [call.tool_call_id for call in status.waiting_for]
            )
        request_id = status.continuation_request
    return open_turn(
        store,
        chat_id,
        tenant=tenant,
        actor=responder_actor,
        trigger=plan.answer.trigger,
        continuation=plan.answer.continuation,
        request_id=request_id,
        body=body,
        user_message=with_open,
        user_actor=actor,
    )


def _only_new_message(plan: Plan) -> dict[str, Any] | None:
    """The user message a plan only appends, to record with the stream's open; else None."""
    if plan.continues or len(plan.actions) != 1 or not isinstance(plan.actions[0], AppendMessage):
        return None
    return plan.actions[0].message


def execute(store: ConversationStore, plan: Plan, *, chat_id: str, tenant: str, actor: str) -> None:
    """Record the plan's actions in order, as ``actor``."""
    for action in plan.actions:
        _execute(store, action, chat_id=chat_id, tenant=tenant, actor=actor)


def _execute(
    store: ConversationStore, action: Action, *, chat_id: str, tenant: str, actor: str
) -> None:
    if isinstance(action, AppendMessage):
        store.append_message(chat_id, action.message, tenant=tenant, actor=actor)
    elif isinstance(action, EditMessage):
        store.edit(chat_id, action.message_id, action.message, tenant=tenant, actor=actor)
    elif isinstance(action, Regenerate):
        store.regenerate(chat_id, action.message_id, actor=actor, tenant=tenant)
    elif isinstance(action, RespondToApproval):
        store.respond_to_approval(
            chat_id,
            approved=action.approved,
            approval_id=action.approval_id,
            tool_call_id=None if action.approval_id else action.tool_call_id,
            reason=action.reason,
            actor=actor,
            auto_continue=action.auto_continue,
            tenant=tenant,
        )
    elif isinstance(action, AddToolOutput):
        store.add_tool_output(
            chat_id,
            action.tool_call_id,
            output=action.output,
            state=action.state,
            error_text=action.error_text,
            actor=actor,
            auto_continue=action.auto_continue,
            tenant=tenant,
        )
    else:  # pragma: no cover - the Action union is closed
        raise TypeError(f"unknown action {action!r}")


def _current_state(store: ConversationStore, chat_id: str, tenant: str) -> ConversationState | None:
    """The conversation as its aggregate holds it now (not the read models, which may lag), or None."""
    try:
        return store.conversation(chat_id, tenant=tenant).state
    except ConversationNotFoundError:
        return None


def _check_first_actions(store: ConversationStore, plan: Plan) -> None:
    """Refuse a new conversation's first message before the conversation is created."""
    for action in plan.actions:
        if isinstance(action, AppendMessage):
            store.limits.message_size(action.message)
            check_message(action.message)
