"""Writing a conversation: start it, append and edit messages, answer its tool calls, name and redact it.

Each use case is one decision of the ``Conversation`` aggregate run through
the unit of work (load, decide, save; decided again on a version clash);
the decisions of the client actions live in ``actions``, several actions in
one commit in ``transaction``. Streams (a model's answer) are written by
``chatledger.adapters.store.streams``, turns by ``chatledger.adapters.store.turns``.
``tenant=None`` means the store's default tenant.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from chatledger.adapters.store import actions, forks
from chatledger.adapters.store.actions import ActionResult
from chatledger.adapters.store.branching import ChatBranches
from chatledger.adapters.store.records import ChatRecords
from chatledger.adapters.store.transaction import Transaction, transact
from chatledger.domain.aggregate import Conversation, conversation_id
from chatledger.domain.concurrency import METADATA_KEY, parse_concurrency
from chatledger.domain.errors import (
    ConcurrentWriteError,
    ConversationExistsError,
)
from chatledger.domain.limits import check_names
from chatledger.domain.owners import ANY

if TYPE_CHECKING:
    from chatledger.adapters.store.unit_of_work import UnitOfWork
    from chatledger.domain.limits import Limits

__all__ = ["Chats", "ExpireLapsed"]

T = TypeVar("T")

ExpireLapsed = Callable[[Conversation, str], None]
"""A decision step: close the conversation's stream if its writer's lease ran out (``noticed_by``)."""


class Chats(ChatRecords, ChatBranches):
    """The write use cases of one store's conversations (everything but streams)."""

    def __init__(
        self,
        uow: UnitOfWork,
        limits: Limits,
        *,
        tenant: str,
        ai_sdk: int,
        auto_continue: bool,
        expire_lapsed: ExpireLapsed,
    ) -> None:
        self.tenant = tenant
        self.ai_sdk = ai_sdk
        """The AI SDK major new conversations speak unless ``start_conversation`` says otherwise."""
        self.auto_continue = auto_continue
        """Whether approvals and tool results request a continuation unless told otherwise."""
        self._uow, self._limits, self._expire_lapsed = uow, limits, expire_lapsed

    def start_conversation(
        self,
        chat_id: str,
        *,
        tenant: str | None = None,
        actor: str = "system",
        metadata: dict[str, Any] | None = None,
        exist_ok: bool = False,
        ai_sdk: int | None = None,
        owner: str = ANY,
        message_concurrency: str | None = None,
    ) -> bool:
        """Create a conversation; ConversationExistsError if it is already there.

        With ``exist_ok`` an existing conversation is left as it is (checked
        first: no failing write). Returns whether the conversation was created.
        ``ai_sdk`` (6 or 7, default: the store's ``ai_sdk``) is the AI SDK major
        it speaks, for good: its chunks, its fold and its ``ai-sdk`` conversion.
        ``owner`` is the runtime that continues it (``chatledger.domain.owners``;
        default ``any``: every continuation worker); ``set_owner`` changes it.
        ``message_concurrency`` (``chatledger.domain.concurrency``) is recorded with
        the start as the metadata's ``messageConcurrency``, so it applies at once.
        """
        if message_concurrency is not None:
            parse_concurrency(message_concurrency, "message_concurrency")
            metadata = {**(metadata or {}), METADATA_KEY: message_concurrency.strip()}
        tenant = tenant or self.tenant
        check_names(chat_id=chat_id, tenant=tenant, actor=actor)
        for what, value in (
            ("chat id", chat_id),
            ("tenant", tenant),
            ("actor", actor),
            ("metadata", metadata),
        ):
            self._limits.check_value(what, value)
        if exist_ok and self._uow.log.has_events_after(conversation_id(tenant, chat_id), 0):
            return False
        version = self.ai_sdk if ai_sdk is None else ai_sdk
        conversation = Conversation.start(
            tenant, chat_id, actor=actor, metadata=metadata, ai_sdk=version, owner=owner
        )
        if message_concurrency is not None and metadata is not None:  # folded, same commit
            conversation.set_metadata(metadata, actor=actor)
        try:
            self._uow.create(conversation)
        except ConcurrentWriteError:
            if exist_ok:  # created by another writer since the check
                return False
            raise ConversationExistsError(tenant, chat_id) from None
        return True

    def append_message(
        self,
        chat_id: str,
        message: dict[str, Any],
        *,
        tenant: str | None = None,
        actor: str = "system",
    ) -> None:
        """Append a whole UIMessage of any role (imported assistant messages keep every tool state).

        While an answer streams, a user message of an AI SDK 7 conversation is
        queued as a steering message (see ``steering``) instead of refused.
        """
        check_names(actor=actor)

        def decide(c: Conversation) -> None:
            self._expire_lapsed(c, f"a message by {actor}")
            c.append_message(message, actor=actor, limits=self._limits)

        self._uow.act(tenant or self.tenant, chat_id, decide)

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
        return actions.add_tool_output(
            self._uow, tenant or self.tenant, chat_id, tool_call_id, output=output, state=state,
            error_text=error_text, actor=actor, auto_continue=auto_continue, limits=self._limits,
        )  # fmt: skip

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
        return actions.respond_to_approval(
            self._uow, tenant or self.tenant, chat_id, approved=approved, approval_id=approval_id,
            tool_call_id=tool_call_id, reason=reason, actor=actor,
            auto_continue=self.auto_continue if auto_continue is None else auto_continue,
        )  # fmt: skip

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
        return actions.regenerate(
            self._uow, tenant or self.tenant, chat_id, message_id, reason=reason, actor=actor
        )

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
        return actions.cut(
            self._uow, tenant or self.tenant, chat_id, from_message_id,
            trigger=trigger, reason=reason, actor=actor,
        )  # fmt: skip

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
        return actions.edit(
            self._uow, tenant or self.tenant, chat_id, message_id, new_message,
            reason=reason, actor=actor, limits=self._limits,
        )  # fmt: skip

    def transact(
        self,
        chat_id: str,
        decide: Callable[[Transaction], T],
        *,
        tenant: str | None = None,
    ) -> T:
        """Several actions on one conversation decided together and recorded in one commit.

        ``decide`` gets a ``Transaction`` (the current messages; append, cut,
        tool outputs, approvals) and may raise to give up, recording nothing.
        When another writer commits first, ``decide`` runs again on the new
        state. Returns what ``decide`` returned. For stores of other
        frameworks, whose one save is several actions.
        """
        return transact(self._uow, tenant or self.tenant, chat_id, decide, limits=self._limits)

    def set_title(
        self, chat_id: str, title: str | None, *, tenant: str | None = None, actor: str = "system"
    ) -> bool:
        """Name the conversation (None: back to its first user text); False if it already had that title."""
        self._limits.check_value("title", title)
        return self._changed(tenant, chat_id, lambda c: c.set_title(title, actor=actor))

    def set_metadata(
        self,
        chat_id: str,
        metadata: dict[str, Any],
        *,
        tenant: str | None = None,
        actor: str = "system",
    ) -> bool:
        """Replace the conversation's metadata (a JSON object); False if it already was exactly that."""
        self._limits.check_value("metadata", metadata)
        return self._changed(tenant, chat_id, lambda c: c.set_metadata(metadata, actor=actor))

    def set_metadata_key(
        self,
        chat_id: str,
        key: str,
        value: Any,
        *,
        tenant: str | None = None,
        actor: str = "system",
    ) -> bool:
        """Set one key of the conversation's metadata (None removes it), keeping the others.

        Decided on the stored metadata, so a concurrent change of another key is
        kept; False if the key already held that value.
        """

        def decide(conversation: Conversation) -> bool:
            metadata = {k: v for k, v in (conversation.state.metadata or {}).items() if k != key}
            if value is not None:
                metadata[key] = value
            self._limits.check_value("metadata", metadata)
            return conversation.set_metadata(metadata, actor=actor)

        return self._changed(tenant, chat_id, decide)

    def set_owner(
        self,
        chat_id: str,
        owner: str,
        *,
        actor: str,
        reason: str | None = None,
        tenant: str | None = None,
    ) -> bool:
        """Hand the conversation to another owner (an audited ``OwnerSet``); False if it already has it.

        ``owner`` names the runtime that continues it from now on: ``any``,
        ``none``, ``openai-agents``, ``pydantic-ai``, a responder's
        ``responder:<actor>`` or an external runtime's name. A pending
        continuation request goes to the new owner with it: only its workers
        may claim it.
        """
        self._limits.check_value("reason", reason)
        return self._changed(
            tenant, chat_id, lambda c: c.set_owner(owner, actor=actor, reason=reason)
        )

    def retire_continuation(
        self, chat_id: str, *, actor: str, reason: str, tenant: str | None = None
    ) -> str | None:
        """Retire the pending continuation request: its owner continued the turn by its own means.

        A framework that resumes its own run calls it, so no worker continues
        the turn too. Records a ``ContinuationRetired`` (who, why); returns the
        request's id, or None when none was pending.
        """
        self._limits.check_value("reason", reason)
        retired: str | None = self._uow.act(
            tenant or self.tenant,
            chat_id,
            lambda c: c.retire_continuation(actor=actor, reason=reason),
        )[2]
        return retired

    def redact(
        self,
        chat_id: str,
        *,
        tool_call_id: str | None = None,
        message_id: str | None = None,
        fields: list[str] | None = None,
        actor: str,
        reason: str,
        tenant: str | None = None,
    ) -> bool:
        """Hide one tool call's input/output, or parts of one message, from every view; False if already hidden.

        Name exactly one of ``tool_call_id`` (``fields``: ``input``, ``output``)
        or ``message_id`` (``fields``: the kinds of its parts, e.g. ``text``,
        ``reasoning``, ``file``); ``fields`` defaults to all of them. Records a
        ``Redacted`` event (who, why); from then on messages (also at earlier
        versions), model conversions, the timeline, followed streams and the
        read models show ``[redacted]`` instead. The original events stay in
        the log unchanged, so the chain still verifies and an operator holding
        the store's key can still read them (see docs/audit.md). Forks that
        share the target get the same redaction (recorded on each).
        """
        self._limits.check_value("reason", reason)
        wanted = list(fields) if isinstance(fields, list | tuple) else fields

        def redact(why: str) -> Callable[[Conversation], Any]:
            return lambda c: c.redact(
                tool_call_id=tool_call_id, message_id=message_id, fields=wanted,
                reason=why, actor=actor,
            )  # fmt: skip

        changed = self._changed(tenant, chat_id, redact(reason))
        forks.redact_forks(
            self._uow, tenant or self.tenant, chat_id, redact, reason
        )  # they share it
        return changed

    def _changed(
        self, tenant: str | None, chat_id: str, decide: Callable[[Conversation], Any]
    ) -> bool:
        """Run one decision; whether it recorded a change."""
        return bool(self._uow.act(tenant or self.tenant, chat_id, decide)[2])
