"""``ChatLedgerSession``: the OpenAI Agents SDK ``Session`` protocol over chatledger.

``Runner.run(agent, input, session=ChatLedgerSession(store, "chat-1"))`` keeps
the agent's history as chatledger events: every item shows in
``store.history(chat)`` with its actor and time, ``store.messages(chat)`` shows
the conversation as UIMessages, and a new process (a new store on the same
database) gets the same items back. The protocol is structural: this module
does not import the ``agents`` package.

Each added item becomes one UIMessage that keeps the item, so ``get_items``
gives the Runner back exactly what it added; ``openai_agents_items`` says
how each kind of item maps, and how the items are given back in order.

Approvals: the Runner keeps its approvals in its ``RunState``, not in the
session (while the Runner waits, the call's part is ``input-available`` and
the status ``awaiting-tool-output``); ``respond_to_approval`` records the human
decision in chatledger too (who approved or rejected which call, and why), so
the audit has it. A rejected call's part is then ``output-denied``, and the
Runner's output item for it (the rejection message) is kept as a
``data-openai-item`` message.

``add_items`` checks every item first, then records the whole batch in one
commit (``chatledger.adapters.store.transaction``): a batch refused part way
leaves nothing. A ``function_call_output`` given by the session always comes
back, even when another output for the same call (a second one, or one with
extra keys) is kept as data.

**Removal keeps the log.** ``pop_item`` and ``clear_session`` cut messages
from the current view with a ``MessagesCut`` event (triggers ``pop-item`` and
``clear-session``), as ``regenerate`` does; ``messages(at_version=...)`` and
``history()`` still show them. An output cannot be cut alone, so popping it
(or any item whose message is followed by items still wanted) cuts from the
earliest message involved and appends the items that should stay again, as new
messages: the view and ``get_items`` are then exactly the items minus the last.
A pop is one atomic decision on the conversation as the commit finds it: when
another worker appended meanwhile, the pop is decided again, so it removes
exactly the item that is last, never one it did not see.

**Cancellation.** A store call runs in a worker thread and cannot be stopped
half way: a cancelled ``add_items``, ``pop_item`` or ``clear_session`` raises
``CancelledError`` only once its write has settled (done or not at all).
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
from typing import TYPE_CHECKING, Any

from chatledger.adapters.frameworks.openai_agents_items import (
    ITEM_METADATA_KEY,
    Entry,
    Item,
    is_plain_output,
    item_of,
    json_copy,
    message_for,
    session_entries,
    tail_to_cut,
)
from chatledger.adapters.frameworks.openai_agents_runs import (
    Decision,
    apply_decisions,
    mark_paused,
    paused_run,
)
from chatledger.adapters.frameworks.openai_agents_sdk import agents_sdk, coerce_settings, settled
from chatledger.adapters.frameworks.store_binding import StoreBinding
from chatledger.domain.errors import (
    ConversationNotFoundError,
    InvalidInputError,
    ToolCallNotReadyError,
    UnknownToolCallError,
)
from chatledger.domain.owners import OPENAI_AGENTS

if TYPE_CHECKING:
    from chatledger.adapters.store import ConversationStore
    from chatledger.adapters.store.actions import ActionResult
    from chatledger.adapters.store.transaction import Transaction
    from chatledger.domain.timeline import TimelineEntry

__all__ = ["DEFAULT_ACTOR", "ITEM_METADATA_KEY", "ChatLedgerSession"]

DEFAULT_ACTOR = "agent:openai-agents"


class ChatLedgerSession(StoreBinding):
    """An OpenAI Agents SDK ``Session`` whose items are events of one chatledger conversation.

    The conversations it starts are owned by ``openai-agents``: no continuation
    worker (``chatledger serve``/``worker``) answers them.

    ``session_id`` is the chat id (the conversation is started on the first
    ``add_items``); ``tenant`` defaults to the store's; ``actor`` names who
    wrote the items in the audit. ``session_settings`` (an
    ``agents.SessionSettings``, or a dict such as ``{"limit": 20}``, coerced and
    validated as the SDK's own sessions do) gives a default ``limit`` for ``get_items``.
    The async methods run the (synchronous) store calls in a worker thread;
    ``items()``, ``add()``, ``pop()`` and ``clear()`` are the same, synchronous.
    Items are typed ``Any`` (they are JSON objects, the SDK's ``TResponseInputItem``)
    so that the class matches the ``Session`` protocol without importing ``agents``.
    """

    owner = OPENAI_AGENTS

    def __init__(
        self,
        store: ConversationStore,
        session_id: str,
        *,
        tenant: str | None = None,
        actor: str = DEFAULT_ACTOR,
        session_settings: Any = None,
    ) -> None:
        super().__init__(store, tenant=tenant, actor=actor)
        self.session_id = session_id
        self.session_settings = coerce_settings(session_settings)

    # -- the Session protocol ------------------------------------------------

    async def get_items(self, limit: int | None = None) -> list[Any]:
        """The session's items in order; with ``limit``, the latest ``limit`` of them."""
        return await asyncio.to_thread(self.items, limit)

    async def add_items(self, items: list[Any]) -> None:
        """Append items, all in one commit (see the module docstring)."""
        await settled(self.add, items)

    async def pop_item(self) -> Any | None:
        """Remove the latest item from the view and return it (None when empty); the log keeps it."""
        return await settled(self.pop)

    async def clear_session(self) -> None:
        """Cut every message from the view; the log keeps them."""
        await settled(self.clear)

    # -- beyond the protocol: the human decision, audited ------------------------

    async def respond_to_approval(
        self,
        tool_call_id: str,
        *,
        approved: bool,
        actor: str,
        reason: str | None = None,
    ) -> ActionResult:
        """Record who approved or rejected a call the Runner paused on (``result.interruptions``).

        Call it with the decision given to ``RunState.approve``/``reject``
        (``tool_call_id`` is the interruption's ``raw_item.call_id``), before
        resuming the run. The audit then shows the decision with its actor
        (``approval-responded``); a rejection puts the part in ``output-denied``
        with ``reason``. The Runner's own output item for the call still comes
        back from ``get_items`` exactly as it added it. No continuation is
        queued: the Runner drives the turn.
        """
        return await settled(
            self._record_decision,
            self.session_id,
            tool_call_id,
            approved=approved,
            actor=actor,
            reason=reason,
        )

    # -- beyond the protocol: a paused run, kept in chatledger ---------------------

    async def save_run_state(self, state: Any) -> None:
        """Keep a paused run's ``RunState`` in chatledger; its calls then await approval there.

        Call it with ``result.to_state()`` when ``result.interruptions`` is not
        empty (after ``Runner.run(..., session=self)`` has added the run's
        items). ``store.status(chat)`` then says ``awaiting-approval`` and the
        approvals inbox lists the calls; answer them there (or with
        ``respond_to_approval``) and resume with ``load_run_state``. See
        ``chatledger.adapters.frameworks.openai_agents_runs``.
        """
        calls = [str(item.call_id) for item in state.get_interruptions() if item.call_id]
        record = {"state": state.to_json(), "calls": calls}
        await settled(self.save_paused_run, record)

    async def load_run_state(self, agent: Any, **options: Any) -> Any | None:
        """The paused run saved with ``save_run_state``, with chatledger's decisions applied.

        A call approved in chatledger is approved in the state, a denied one
        rejected with the denial's reason as its rejection message; calls not
        answered yet stay interruptions. None when no saved run is still
        waiting. ``options`` go to ``RunState.from_json`` (e.g. ``context_override``).
        The continuation request an approval queued (``chatledger approve``,
        the HTTP route) is retired: the run about to resume continues the turn.
        """
        found = await asyncio.to_thread(self.paused_run)
        if found is None:
            return None
        data, decisions = found
        state = await agents_sdk().RunState.from_json(agent, data, **options)
        apply_decisions(state, decisions)
        if decisions:
            await asyncio.to_thread(
                self._retire_continuation, self.session_id, "the OpenAI Agents run resumes"
            )
        return state

    def save_paused_run(self, record: dict[str, Any]) -> None:
        """``save_run_state``'s write: the paused calls' parts await approval; one commit.

        The items from the first paused call on are cut and added again (as
        ``pop_item`` does), exactly, with the calls' parts ``approval-requested``
        and ``record`` in the first one's metadata.
        """
        calls = list(record["calls"])

        def decide(tx: Transaction) -> None:
            messages = copy.deepcopy(tx.messages)
            entries = self._entries(messages, tx.started_at)
            paused = [
                index
                for index, entry in enumerate(entries)
                if entry.item.get("type") == "function_call" and entry.item.get("call_id") in calls
            ]
            if not paused:
                raise InvalidInputError(
                    f"session {self.session_id!r} holds none of the paused calls {calls}: "
                    "run the agent with session= this session before saving its state"
                )
            first, cut_at = tail_to_cut(entries, paused[0])
            tx.cut(messages[cut_at]["id"], trigger="run-paused", actor=self.actor)
            kept: dict[str, Any] | None = record
            for entry in entries[first:]:
                item = copy.deepcopy(entry.item)
                if is_plain_output(item) and self._answer(tx, item):
                    continue
                message = message_for(item)
                if item.get("type") == "function_call" and item.get("call_id") in calls:
                    mark_paused(message, calls, kept)
                    kept = None
                tx.append_message(message, actor=self.actor)

        with self._lock:
            self.store.transact(self.session_id, decide, tenant=self.tenant)

    def paused_run(self) -> tuple[dict[str, Any], dict[str, Decision]] | None:
        """The saved run state still waiting, and chatledger's decisions on its calls (or None)."""
        messages = self._messages_or_none(self.session_id)
        return None if messages is None else paused_run(messages, item_of)

    # -- the same, synchronous -----------------------------------------------

    def items(self, limit: int | None = None) -> list[Any]:
        """``get_items``, synchronously."""
        if limit is None:
            limit = getattr(self.session_settings, "limit", None)
        messages = self._messages_or_none(self.session_id) or []
        items = [entry.item for entry in self._entries(messages, None)]
        if limit is None:
            return items
        return items[-limit:] if limit > 0 else []

    def add(self, items: list[Any]) -> None:
        """``add_items``, synchronously: every item is checked first, then all are one commit."""
        if not items:
            return
        copies = [json_copy(item) for item in items]  # refuses the batch before any write
        with self._lock:
            self._start_once(self.session_id)

            def decide(tx: Transaction) -> None:
                for item in copies:
                    self._add_one(tx, item)

            self.store.transact(self.session_id, decide, tenant=self.tenant)

    def pop(self) -> Any | None:
        """``pop_item``, synchronously: the item last in the conversation as the commit finds it."""

        def decide(tx: Transaction) -> Any | None:
            messages = copy.deepcopy(tx.messages)
            entries = self._entries(messages, tx.started_at)
            if not entries:
                return None
            first, cut_at = tail_to_cut(entries)
            tx.cut(messages[cut_at]["id"], trigger="pop-item", actor=self.actor)
            for entry in entries[first:-1]:
                self._add_one(tx, copy.deepcopy(entry.item))
            return entries[-1].item

        with self._lock:
            try:
                return self.store.transact(self.session_id, decide, tenant=self.tenant)
            except ConversationNotFoundError:
                return None

    def clear(self) -> None:
        """``clear_session``, synchronously."""

        def decide(tx: Transaction) -> None:
            if tx.messages:
                tx.cut(tx.messages[0]["id"], trigger="clear-session", actor=self.actor)

        with self._lock, contextlib.suppress(ConversationNotFoundError):
            self.store.transact(self.session_id, decide, tenant=self.tenant)

    # -- writing ---------------------------------------------------------------

    def _add_one(self, tx: Transaction, item: Item) -> None:
        if is_plain_output(item) and self._answer(tx, item):
            return
        tx.append_message(message_for(item), actor=self.actor)

    def _answer(self, tx: Transaction, item: Item) -> bool:
        """Record an output item on its call's part; False when no call awaits it."""
        try:
            return tx.add_tool_output(item["call_id"], output=item["output"], actor=self.actor)
        except (UnknownToolCallError, ToolCallNotReadyError):
            return False

    # -- reading ---------------------------------------------------------------

    def _entries(self, messages: list[dict[str, Any]], upto: int | None) -> list[Entry]:
        """The session's items in the order they were added (``upto``: the log version read)."""

        def read_history(kinds: list[str]) -> list[TimelineEntry]:
            return self.store.history(self.session_id, tenant=self.tenant, kinds=kinds)

        return session_entries(messages, upto, read_history)
