"""``ChatLedgerConversationStore``: Pydantic AI's ``ConversationStore`` over chatledger.

Pydantic AI (``pydantic-ai-slim`` 2.68) defines its conversation store contract
as the abstract class ``pydantic_ai.conversation_store.ConversationStore``: a
conversation is a chain of ``ConversationEntry``s (one ``ModelMessage`` each,
linked to its parent) plus a ``ConversationRecord`` (the head entry, usage,
the ``DeferredToolRequests`` a paused run waits on, scope, fork origin, the
branches it left, a revision token and ``updated_at``). The base class does
``load``, ``save``, ``branch``, ``fork``, ``list_conversations`` and
``delete``; a backend gives five primitives, which this class implements over
one chatledger conversation per Pydantic AI conversation::

    store = ChatLedgerConversationStore(ConversationStore.open(url))
    conversation = await store.load(cid) or Conversation(conversation_id=cid)
    result = await agent.run(prompt, conversation=conversation)
    await store.save(result)

**The mapping.** The chat id is the ``conversation_id``. The current view of
the chat (``messages(chat)``) is the conversation's history, head last,
followed by one *record marker*; ``pydantic_ai_mapping`` says how each entry,
tool return and record is recorded.

Who decided: ``respond_to_approval`` (beyond the contract) records a human's
decision on a paused call with that human as the actor, before the run is
resumed; the framework's later denial or result then lands on that part.

**Writes.** A ``write_record`` is one atomic decision: it checks the
revision of the record marker in the view, cuts (trigger ``pydantic-ai-save``)
from the first message where the view and the new history differ (at least
the old marker), appends the new history's remaining entries, their tool
results, and then the new marker, all recorded in one commit
(``chatledger.adapters.store.transaction``). When another writer commits to
the conversation first, the decision is taken again against its state, so of
two workers saving the same revision exactly one succeeds and the other gets
``ConversationConflict``; a conflict leaves nothing behind. The audit
(``store.history(chat)``) shows every stored message, tool result, denial and
cut with its actor and time, and ``messages(chat, at_version=N)`` every past
state. A branch back to an older history re-appends its entries (same ids)
from the log. A fork's history is copied into the fork's chat.
``delete_record`` cuts the whole view (trigger ``pydantic-ai-delete``): the
entries **stay in the log**; chatledger never erases. Conversations written
by earlier versions, whose write could stop after its cut, are still read:
with no marker in the view, the record is the last marker in the log (none if
a delete came after it).

**Copies.** Entries and records are kept and given as copies (as Pydantic AI's
``InMemoryConversationStore`` does), so changing a loaded or saved
conversation changes nothing stored. ``read_entry`` finds an entry of any
conversation this class registered, read by this instance or not.

Limits: reading a record, or an entry not seen yet, re-reads the chat's
``message-appended`` audit to index its entries (cost grows with the log).
``list_conversations`` reads a registry chat (``registry_chat_id``) that
lists every conversation this class created.
"""

from __future__ import annotations

import asyncio
import copy
import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING

try:
    from pydantic_ai import DeferredToolResults, ToolDenied
    from pydantic_ai.conversation_store import (
        ConversationConflict,
        ConversationEntry,
        ConversationRecord,
    )
    from pydantic_ai.conversation_store import ConversationStore as PydanticAIConversationStore
    from pydantic_ai.messages import (
        ModelMessagesTypeAdapter,
        ModelRequest,
        RetryPromptPart,
        ToolReturnPart,
    )
except ImportError as error:  # the framework is an optional dependency
    raise ImportError(
        "chatledger.adapters.frameworks.pydantic_ai needs Pydantic AI, which is not installed: "
        "pip install 'chatledger[pydantic-ai]'"
    ) from error

from chatledger.adapters.frameworks.pydantic_ai_entries import DELETE_TRIGGER, EntryIndex
from chatledger.adapters.frameworks.pydantic_ai_mapping import (
    METADATA_KEY,
    delete_marker,
    entry_json,
    entry_message,
    record_message,
    recorded_decisions,
    tool_states,
    tool_text,
)
from chatledger.adapters.frameworks.store_binding import StoreBinding
from chatledger.domain.errors import ConversationNotFoundError
from chatledger.domain.owners import PYDANTIC_AI

if TYPE_CHECKING:
    from chatledger.adapters.store import ConversationStore
    from chatledger.adapters.store.actions import ActionResult
    from chatledger.adapters.store.transaction import Transaction

__all__ = [
    "DEFAULT_ACTOR",
    "DEFAULT_REGISTRY_CHAT_ID",
    "METADATA_KEY",
    "ChatLedgerConversationStore",
]

DEFAULT_ACTOR = "agent:pydantic-ai"
DEFAULT_REGISTRY_CHAT_ID = "pydantic-ai:conversations"
_REGISTERED_PART = "data-pydantic-ai-conversation"
_SAVE_TRIGGER = "pydantic-ai-save"


class ChatLedgerConversationStore(StoreBinding, PydanticAIConversationStore):
    """A Pydantic AI ``ConversationStore`` whose conversations are chatledger conversations.

    ``store`` is the chatledger store; ``tenant`` defaults to the store's;
    ``actor`` names the writer in the audit (messages, tool results, denials,
    cuts). See the module docstring for the mapping. The primitives run the
    (synchronous) store calls in a worker thread. The conversations it starts
    are owned by ``pydantic-ai``: no continuation worker answers them, and a
    save retires a continuation request an approval queued.
    """

    owner = PYDANTIC_AI

    def __init__(
        self,
        store: ConversationStore,
        *,
        tenant: str | None = None,
        actor: str = DEFAULT_ACTOR,
        registry_chat_id: str = DEFAULT_REGISTRY_CHAT_ID,
    ) -> None:
        super().__init__(store, tenant=tenant, actor=actor)
        self.registry_chat_id = registry_chat_id
        self._index = EntryIndex(store, tenant)

    # -- the five primitives of the contract -------------------------------------

    async def read_record(self, conversation_id: str) -> ConversationRecord | None:
        """The conversation's current record marker, or None (unknown or deleted)."""
        return await asyncio.to_thread(self.read_record_sync, conversation_id)

    async def read_records(
        self, *, scope: str | None = None, limit: int | None = None
    ) -> Sequence[ConversationRecord]:
        """The records of the registered conversations, newest ``updated_at`` first."""
        return await asyncio.to_thread(self.read_records_sync, scope=scope, limit=limit)

    async def write_record(
        self,
        record: ConversationRecord,
        *,
        new_entries: Sequence[ConversationEntry] = (),
        expected_revision: str | None,
    ) -> None:
        """Make the chat's view the record's history plus its marker (see the module docstring)."""
        await asyncio.to_thread(
            self.write_record_sync,
            record,
            new_entries=new_entries,
            expected_revision=expected_revision,
        )

    async def delete_record(self, conversation_id: str, *, expected_revision: str) -> None:
        """Cut the whole view; the log keeps every entry."""
        await asyncio.to_thread(
            self.delete_record_sync, conversation_id, expected_revision=expected_revision
        )

    async def read_entry(self, entry_id: str) -> ConversationEntry:
        """A copy of a stored entry of any conversation this class registered (KeyError otherwise)."""
        return await asyncio.to_thread(self._find_entry, entry_id)

    def _find_entry(self, entry_id: str) -> ConversationEntry:
        """An entry of any registered conversation (a copy), indexing their logs on a miss."""
        with self._lock:
            return self._index.find(entry_id, self._registered)

    # -- beyond the contract: the human decision, audited -------------------------

    async def respond_to_approval(
        self,
        conversation_id: str,
        tool_call_id: str,
        *,
        approved: bool,
        actor: str,
        reason: str | None = None,
    ) -> ActionResult:
        """Record who approved or denied a call a paused run waits on, and why.

        Call it with the decision given in ``DeferredToolResults`` (a denial's
        ``reason`` is the ``ToolDenied`` message) before resuming the run. The
        audit then shows the decision with ``actor``; a denial puts the part in
        ``output-denied``. No continuation is queued.
        """
        return await asyncio.to_thread(
            self._record_decision,
            conversation_id,
            tool_call_id,
            approved=approved,
            actor=actor,
            reason=reason,
        )

    async def deferred_tool_results(self, conversation_id: str) -> DeferredToolResults | None:
        """The decisions recorded in chatledger on the calls a paused run waits on, to resume it.

        Give it to ``agent.run(conversation=loaded, deferred_tool_results=...)``:
        an approval (``chatledger approve``, the HTTP route, the inbox page,
        ``respond_to_approval``) is ``True``, a denial ``ToolDenied`` with its
        reason. None while the conversation waits on nothing, or no call is
        answered yet; calls not answered yet are left out.
        """
        record = await self.read_record(conversation_id)
        if record is None or record.deferred_tool_requests is None:
            return None
        calls = [call.tool_call_id for call in record.deferred_tool_requests.approvals]
        messages = await asyncio.to_thread(self._messages_or_none, conversation_id) or []
        decisions = recorded_decisions(messages, calls)
        if not decisions:
            return None
        return DeferredToolResults(
            approvals={
                call: True if approved else (ToolDenied(reason) if reason else ToolDenied())
                for call, (approved, reason) in decisions.items()
            }
        )

    # -- the same, synchronous -----------------------------------------------------

    def read_record_sync(self, conversation_id: str) -> ConversationRecord | None:
        """``read_record``, synchronously (it also indexes the chat's entries)."""
        with self._lock:
            messages = self._messages_or_none(conversation_id)
            if messages is None:
                return None
            return self._index.current(conversation_id, messages)

    def read_records_sync(
        self, *, scope: str | None = None, limit: int | None = None
    ) -> list[ConversationRecord]:
        """``read_records``, synchronously."""
        records = []
        for conversation_id in self._registered():
            record = self.read_record_sync(conversation_id)
            if record is not None and (scope is None or record.scope == scope):
                records.append(record)
        records.sort(key=lambda record: record.updated_at, reverse=True)
        return records[:limit]

    def write_record_sync(
        self,
        record: ConversationRecord,
        *,
        new_entries: Sequence[ConversationEntry] = (),
        expected_revision: str | None,
    ) -> None:
        """``write_record``, synchronously: the revision check and every write are one commit."""
        chat = record.conversation_id
        given = {entry.id: copy.deepcopy(entry) for entry in new_entries}
        if expected_revision is None:
            # AI SDK 6 rules: tool returns arrive in a request entry (a user message)
            # before the approval is answered, which v7 would treat as superseding it.
            self._start_once(chat, ai_sdk=6)
            self._register(chat)

        def decide(tx: Transaction) -> None:
            messages = tx.messages
            current = self._index.current(chat, messages)
            if (current.revision if current is not None else None) != expected_revision:
                raise ConversationConflict(chat)
            # The framework continues its run itself: a request an approval queued is done.
            tx.retire_continuation(actor=self.actor, reason="the Pydantic AI run saved its state")
            history = self._index.history(record, given)
            shared = 0
            for message, entry in zip(messages, history, strict=False):
                if message["id"] != entry.id or entry_json(message) is None:
                    break
                shared += 1
            if shared < len(messages):
                tx.cut(messages[shared]["id"], trigger=_SAVE_TRIGGER, actor=self.actor)
            for entry in history[shared:]:
                self._append_entry(tx, entry, record)
            tx.append_message(record_message(record), actor=self.actor)

        with self._lock:
            try:
                self.store.transact(chat, decide, tenant=self.tenant)
            except ConversationNotFoundError:
                raise ConversationConflict(chat) from None
            self._index.remember(given)

    def delete_record_sync(self, conversation_id: str, *, expected_revision: str) -> None:
        """``delete_record``, synchronously: the revision check and the cut are one commit."""

        def decide(tx: Transaction) -> None:
            messages = tx.messages
            current = self._index.current(conversation_id, messages)
            if current is None or current.revision != expected_revision:
                raise ConversationConflict(conversation_id)
            if not messages:  # an interrupted write had cut everything: cut nothing more
                marker = delete_marker()
                tx.append_message(marker, actor=self.actor)
                messages = [marker]
            tx.cut(messages[0]["id"], trigger=DELETE_TRIGGER, actor=self.actor)

        with self._lock:
            try:
                self.store.transact(conversation_id, decide, tenant=self.tenant)
            except ConversationNotFoundError:
                raise ConversationConflict(conversation_id) from None

    # -- writing -----------------------------------------------------------------

    def _append_entry(
        self, tx: Transaction, entry: ConversationEntry, record: ConversationRecord
    ) -> None:
        awaiting = set()
        if record.deferred_tool_requests is not None:
            awaiting = {call.tool_call_id for call in record.deferred_tool_requests.approvals}
        tx.append_message(entry_message(entry, awaiting), actor=self.actor)
        if isinstance(entry.message, ModelRequest):
            returns = [
                p
                for p in entry.message.parts
                if isinstance(p, ToolReturnPart)
                or (isinstance(p, RetryPromptPart) and p.tool_name is not None)
            ]
            if returns:
                self._answer(tx, returns)

    def _answer(self, tx: Transaction, returns: list[ToolReturnPart | RetryPromptPart]) -> None:
        """Put each tool return (or retry prompt) on its call's part (with this store's actor)."""
        states = tool_states(tx.messages)
        actor = self.actor
        for part in returns:
            call_id = part.tool_call_id
            state = states.get(call_id)
            if state is None:
                continue  # a return for a call this conversation does not show
            text = tool_text(part)
            outcome = part.outcome if isinstance(part, ToolReturnPart) else "retry"
            if outcome == "denied":
                if state == "approval-requested":
                    tx.respond_to_approval(call_id, approved=False, reason=text, actor=actor)
                elif state in ("input-available", "approval-responded"):
                    tx.add_tool_output(call_id, state="output-error", error_text=text, actor=actor)
            elif outcome == "success":
                if state == "approval-requested":
                    tx.respond_to_approval(call_id, approved=True, actor=actor)
                    state = "approval-responded"
                if state in ("input-available", "approval-responded"):
                    content = ModelMessagesTypeAdapter.dump_python(
                        [ModelRequest(parts=[part])], mode="json"
                    )[0]["parts"][0]["content"]
                    tx.add_tool_output(call_id, output=content, actor=actor)
            elif state in ("input-available", "approval-requested", "approval-responded"):
                tx.add_tool_output(call_id, state="output-error", error_text=text, actor=actor)

    def _registered(self) -> list[str]:
        messages = self._messages_or_none(self.registry_chat_id) or []
        ids: list[str] = []
        for message in messages:
            for part in message["parts"]:
                if part.get("type") == _REGISTERED_PART:
                    ids.append(part["data"]["conversationId"])
        return list(dict.fromkeys(ids))

    def _register(self, chat: str) -> None:
        if chat in self._registered():
            return
        self._start_once(self.registry_chat_id)
        message = {
            "id": f"pai_{uuid.uuid4().hex}",
            "role": "system",
            "parts": [{"type": _REGISTERED_PART, "data": {"conversationId": chat}}],
        }
        self.store.append_message(
            self.registry_chat_id, message, tenant=self.tenant, actor=self.actor
        )
