"""Client actions on a conversation: tool outputs, approval answers, regenerate and edit (SPEC §4)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from chatledger.domain.errors import InvalidMessageError
from chatledger.domain.events import ContinuationRequested

if TYPE_CHECKING:
    from collections.abc import Callable

    from chatledger.domain.aggregate import Conversation
    from chatledger.domain.limits import Limits

__all__ = ["ActionResult", "ToolActions"]


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


class ToolActions:
    """The HITL actions of ``ConversationStore`` (mixed in; they use its load/decide/save loop)."""

    if TYPE_CHECKING:
        tenant: str
        auto_continue: bool
        limits: Limits

        def _act(
            self, chat_id: str, tenant: str | None, decide: Callable[[Conversation], None]
        ) -> tuple[Conversation, list[Any]]: ...

    def add_tool_output(
        self,
        chat_id: str,
        tool_call_id: str,
        *,
        output: Any = None,
        state: str = "output-available",
        error_text: str | None = None,
        actor: str = "system",
        auto_continue: bool | None = None,
        tenant: str | None = None,
    ) -> ActionResult:
        """Give a tool call's result (``output-available``) or error (``output-error``).

        Accepted when the call is ``input-available``, ``approval-requested`` or
        ``approval-responded``. ``output-error`` with ``error_text`` is how a
        client sends a custom denial. A call that already has a result keeps it
        (first write wins; ``changed`` is False). ``auto_continue`` defaults to
        True for results and False for errors.
        """
        if auto_continue is None:
            auto_continue = self.auto_continue and state == "output-available"
        outcome: list[Any] = []

        def decide(conversation: Conversation) -> None:
            outcome.append(
                conversation.add_tool_output(
                    tool_call_id,
                    state=state,
                    output=output,
                    error_text=error_text,
                    actor=actor,
                    auto_continue=auto_continue,
                    limits=self.limits,
                )
            )

        _, events = self._act(chat_id, tenant, decide)
        return _result(outcome[-1], events)

    def respond_to_approval(
        self,
        chat_id: str,
        *,
        approved: bool,
        approval_id: str | None = None,
        tool_call_id: str | None = None,
        reason: str | None = None,
        actor: str = "system",
        auto_continue: bool | None = None,
        tenant: str | None = None,
    ) -> ActionResult:
        """Approve or deny a tool call awaiting approval (by approval id or tool call id).

        Approved: ``approval-responded``; denied: ``output-denied`` with
        ``approval.approved = false`` and the reason, so the model is told. The
        same answer again records nothing; a different one raises
        ApprovalConflictError. ``auto_continue`` defaults to True for both.
        """
        if auto_continue is None:
            auto_continue = self.auto_continue
        outcome: list[Any] = []

        def decide(conversation: Conversation) -> None:
            outcome.append(
                conversation.respond_to_approval(
                    approval_id=approval_id,
                    tool_call_id=tool_call_id,
                    approved=approved,
                    reason=reason,
                    actor=actor,
                    auto_continue=auto_continue,
                )
            )

        _, events = self._act(chat_id, tenant, decide)
        return _result(outcome[-1], events)

    def regenerate(
        self,
        chat_id: str,
        message_id: str | None = None,
        *,
        reason: str | None = None,
        actor: str = "system",
        tenant: str | None = None,
    ) -> int:
        """Cut an assistant message (default: the last one) and everything after it from the view.

        Given a user message id, the messages after it are cut. The cut
        messages stay in the log (``messages(at_version=...)`` shows them).
        Open the new stream with ``trigger="regenerate-message"``. Returns how
        many messages were cut.
        """
        counts: list[int] = []

        def decide(conversation: Conversation) -> None:
            messages = conversation.state.messages
            if message_id is None:
                target = next((m for m in reversed(messages) if m["role"] == "assistant"), None)
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
                counts.append(0)
                return
            counts.append(
                conversation.cut_messages(
                    messages[index]["id"], trigger="regenerate-message", reason=reason, actor=actor
                )
            )

        self._act(chat_id, tenant, decide)
        return counts[-1]

    def cut(
        self,
        chat_id: str,
        from_message_id: str,
        *,
        trigger: str = "cut",
        reason: str | None = None,
        actor: str = "system",
        tenant: str | None = None,
    ) -> int:
        """Cut ``from_message_id`` (any role) and every later message from the view.

        The general form of ``regenerate`` and ``edit``, for stores of other
        frameworks (``trigger`` names why, in the audit). The cut messages stay
        in the log. Returns how many messages were cut.
        """
        counts: list[int] = []

        def decide(conversation: Conversation) -> None:
            counts.append(
                conversation.cut_messages(
                    from_message_id, trigger=trigger, reason=reason, actor=actor
                )
            )

        self._act(chat_id, tenant, decide)
        return counts[-1]

    def edit(
        self,
        chat_id: str,
        message_id: str,
        new_message: dict[str, Any],
        *,
        reason: str | None = None,
        actor: str = "system",
        tenant: str | None = None,
    ) -> int:
        """Replace a user message: it and every later message leave the view, ``new_message`` is appended.

        Returns how many messages were cut; they stay in the log.
        """
        counts: list[int] = []

        def decide(conversation: Conversation) -> None:
            target = next((m for m in conversation.state.messages if m["id"] == message_id), None)
            if target is None or target["role"] != "user":
                raise InvalidMessageError(
                    "only a user message can be edited", message_id=message_id
                )
            counts.append(
                conversation.cut_messages(message_id, trigger="edit", reason=reason, actor=actor)
            )
            conversation.append_message(new_message, actor=actor, limits=self.limits)

        self._act(chat_id, tenant, decide)
        return counts[-1]


def _result(decision: Any, events: list[Any]) -> ActionResult:
    requested = any(isinstance(event, ContinuationRequested) for event in events)
    return ActionResult(decision.tool_call_id, decision.changed, decision.state, requested)
