"""``ChatLedgerSession``: the OpenAI Agents SDK ``Session`` protocol over chatledger.

``Runner.run(agent, input, session=ChatLedgerSession(store, "chat-1"))`` keeps
the agent's history as chatledger events: every item shows in
``store.history(chat)`` with its actor and time, ``store.messages(chat)`` shows
the conversation as UIMessages, and a new process (a new store on the same
database) gets the same items back. The protocol is structural: this module
does not import the ``agents`` package.

The mapping, one added item at a time (items are Responses API input items):

- a ``message`` item (``type: "message"`` or a bare ``{"role", "content"}``)
  → one appended UIMessage of that role (``developer`` → ``system``): string
  content, ``input_text``, ``output_text`` and ``refusal`` content → ``text``
  parts, any other content → a ``data-openai-content`` part;
- ``function_call`` → one assistant UIMessage with a ``dynamic-tool`` part
  (``toolName``, ``toolCallId`` = ``call_id``, ``input`` = the parsed
  ``arguments``, state ``input-available``);
- ``function_call_output`` (exactly ``type``, ``call_id`` and ``output``) for
  a call awaiting its result → ``store.add_tool_output`` on that part
  (``output-available``, the session's actor, no auto-continuation: the
  Runner drives the turn), so the audit shows who answered the call;
- anything else (reasoning, other tool calls, an output nothing awaits, ...)
  → an assistant UIMessage holding the item in a ``data-openai-item`` part.

Approvals: the Runner keeps its approvals in its ``RunState``, not in the
session (while the Runner waits, the call's part is ``input-available`` and
the status ``awaiting-tool-output``); ``respond_to_approval`` records the human
decision in chatledger too (who approved or rejected which call, and why), so
the audit has it. A rejected call's part is then ``output-denied``, and the
Runner's output item for it (the rejection message) is kept as a
``data-openai-item`` message.

**Exactness.** Each appended message keeps the original item, JSON-copied,
in its metadata (``{"openaiItem": item}``), and ``get_items`` returns those
items, so the Runner gets back exactly what it stored. An output item is
rebuilt from its tool part (``{"type": "function_call_output", "call_id",
"output"}``, which is all such an item holds) and placed where it was added,
by the log position of its ``tool-output-added`` event; a part answered
otherwise (denied, or an error, through the store) gives its reason or error
text as the output (placed at the denial or error), unless a later message
holds an output item for the call. Messages written by other means
(streams, ``append_message``) are given as the converter's
``openai-responses`` items.

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
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from chatledger.adapters.frameworks.openai_agents_items import (
    ITEM_METADATA_KEY,
    Item,
    foreign_items,
    is_plain_output,
    item_of,
    json_copy,
    message_for,
    output_item,
)
from chatledger.adapters.frameworks.openai_agents_runs import Decision, mark_paused, paused_run
from chatledger.domain.errors import (
    ConversationExistsError,
    ConversationNotFoundError,
    InvalidInputError,
    ToolCallNotReadyError,
    UnknownToolCallError,
)

if TYPE_CHECKING:
    from chatledger.adapters.store import ConversationStore
    from chatledger.adapters.store.actions import ActionResult
    from chatledger.adapters.store.transaction import Transaction

__all__ = ["DEFAULT_ACTOR", "ITEM_METADATA_KEY", "ChatLedgerSession"]

T = TypeVar("T")

DEFAULT_ACTOR = "agent:openai-agents"


@dataclass(frozen=True)
class _Entry:
    """One item of the session and where it lives in the current view."""

    item: Item
    message_index: int
    """Index, in the current messages, of the message holding the item (or its call)."""
    position: int
    """Log position of the event that added it (ordering key)."""


class ChatLedgerSession:
    """An OpenAI Agents SDK ``Session`` whose items are events of one chatledger conversation.

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

    def __init__(
        self,
        store: ConversationStore,
        session_id: str,
        *,
        tenant: str | None = None,
        actor: str = DEFAULT_ACTOR,
        session_settings: Any = None,
    ) -> None:
        self.store = store
        self.session_id = session_id
        self.tenant = tenant
        self.actor = actor
        self.session_settings = _settings(session_settings)
        self._lock = threading.Lock()

    # -- the Session protocol ------------------------------------------------

    async def get_items(self, limit: int | None = None) -> list[Any]:
        """The session's items in order; with ``limit``, the latest ``limit`` of them."""
        return await asyncio.to_thread(self.items, limit)

    async def add_items(self, items: list[Any]) -> None:
        """Append items, all in one commit (see the module docstring)."""
        await _settled(self.add, items)

    async def pop_item(self) -> Any | None:
        """Remove the latest item from the view and return it (None when empty); the log keeps it."""
        return await _settled(self.pop)

    async def clear_session(self) -> None:
        """Cut every message from the view; the log keeps them."""
        await _settled(self.clear)

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
        return await _settled(
            self.store.respond_to_approval,
            self.session_id,
            tool_call_id=tool_call_id,
            approved=approved,
            reason=reason,
            actor=actor,
            auto_continue=False,
            tenant=self.tenant,
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
        await _settled(self.save_paused_run, record)

    async def load_run_state(self, agent: Any, **options: Any) -> Any | None:
        """The paused run saved with ``save_run_state``, with chatledger's decisions applied.

        A call approved in chatledger is approved in the state, a denied one
        rejected with the denial's reason as its rejection message; calls not
        answered yet stay interruptions. None when no saved run is still
        waiting. ``options`` go to ``RunState.from_json`` (e.g. ``context_override``).
        """
        found = await asyncio.to_thread(self.paused_run)
        if found is None:
            return None
        data, decisions = found
        state = await _agents().RunState.from_json(agent, data, **options)
        for item in state.get_interruptions():
            decision = decisions.get(str(item.call_id))
            if decision is not None and decision.approved:
                state.approve(item)
            elif decision is not None:
                state.reject(item, rejection_message=decision.reason)
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
            first, cut_at = _tail_to_cut(entries, paused[0])
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
        try:
            messages = self.store.messages(self.session_id, tenant=self.tenant)
        except ConversationNotFoundError:
            return None
        return paused_run(messages, item_of)

    # -- the same, synchronous -----------------------------------------------

    def items(self, limit: int | None = None) -> list[Any]:
        """``get_items``, synchronously."""
        if limit is None:
            limit = getattr(self.session_settings, "limit", None)
        try:
            messages = self.store.messages(self.session_id, tenant=self.tenant)
        except ConversationNotFoundError:
            return []
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
            with contextlib.suppress(ConversationExistsError):  # started by an earlier add
                self.store.start_conversation(self.session_id, tenant=self.tenant, actor=self.actor)

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
            first, cut_at = _tail_to_cut(entries)
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

    def _entries(self, messages: list[dict[str, Any]], upto: int | None) -> list[_Entry]:
        """The session's items in the order they were added (``upto``: the log version read)."""
        held = [item_of(message) for message in messages]
        kept_outputs: dict[str, int] = {}  # call id -> last message holding an output item for it
        for index, item in enumerate(held):
            if item is not None and item.get("type") == "function_call_output":
                kept_outputs[str(item.get("call_id"))] = index
        found: list[tuple[int, Item, str | None]] = []  # message index, item, answered call
        for index, (message, item) in enumerate(zip(messages, held, strict=True)):
            if item is None:
                for converted in foreign_items(message):
                    found.append((index, converted, None))
                continue
            found.append((index, item, None))
            output = output_item(message, item)
            if output is None:
                continue
            given, by_output = output
            # A result the session gave always stays; a denial's or an error's text stands
            # for the Runner's output only until the Runner's own output item follows.
            if by_output or kept_outputs.get(item["call_id"], -1) <= index:
                found.append((index, given, item["call_id"]))
        positions = self._positions(messages, upto) if any(c for _, _, c in found) else None
        entries: list[_Entry] = []
        for index, item, call_id in found:
            position = 0
            if positions is not None:
                appended, outputs = positions
                position = appended[index]
                if call_id is not None:
                    later = (p for p in outputs.get(call_id, []) if p > position)
                    position = next(later, position)
            entries.append(_Entry(item, index, position))
        entries.sort(key=lambda entry: entry.position)  # stable: view order among equals
        return entries

    def _positions(
        self, messages: list[dict[str, Any]], upto: int | None
    ) -> tuple[list[int], dict[str, list[int]]]:
        """Log positions: each message's append (or its predecessor's), each call's answers.

        A call is answered by a tool output or a denial (an approval gives no output).
        """
        history = self.store.history(
            self.session_id,
            tenant=self.tenant,
            kinds=["message-appended", "tool-output-added", "approval-responded"],
        )
        appended_at: dict[str, int] = {}
        outputs: dict[str, list[int]] = {}
        for entry in history:
            if upto is not None and entry.position > upto:
                break
            if entry.kind == "message-appended":
                appended_at[entry.details["messageId"]] = entry.position
            elif entry.kind == "tool-output-added" or entry.details.get("approved") is False:
                outputs.setdefault(entry.details["toolCallId"], []).append(entry.position)
        appended: list[int] = []
        for message in messages:
            appended.append(appended_at.get(message["id"], appended[-1] if appended else 0))
        return appended, outputs


def _settings(value: Any) -> Any:
    """``session_settings`` as the SDK's own sessions take it: a dict becomes ``SessionSettings``.

    The SDK validates it (a bad ``limit`` raises as it does for ``SQLiteSession``).
    Only a dict needs the ``agents`` package.
    """
    if value is None or not isinstance(value, dict):
        return value
    coerce_session_settings = _agents().memory.session_settings.coerce_session_settings

    return coerce_session_settings(value)


def _agents() -> Any:
    """The ``agents`` package (the OpenAI Agents SDK), imported when a method needs it."""
    try:
        import agents
        import agents.memory.session_settings
    except ImportError as error:
        raise ImportError(
            "this needs the OpenAI Agents SDK, which is not installed: "
            "pip install 'chatledger[agents]'"
        ) from error
    return agents


async def _settled(function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run a store call in a worker thread; a cancellation is reported once the call has finished.

    The write in the thread cannot be stopped half way, so the caller learns
    of its cancellation only when what was written is settled.
    """
    task = asyncio.ensure_future(asyncio.to_thread(function, *args, **kwargs))
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        while not task.done():
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.wait({task})
        raise


def _tail_to_cut(entries: list[_Entry], start: int = -1) -> tuple[int, int]:
    """(first item to remove, first message to cut) so that removing ``entries[start:]`` is exact.

    Cutting a message removes it and every later message with all their
    items; the items removed that are not wanted gone are appended again.
    """
    cut_at = entries[start].message_index
    while True:
        first = next(i for i, entry in enumerate(entries) if entry.message_index >= cut_at)
        lowest = min(entry.message_index for entry in entries[first:])
        if lowest == cut_at:
            return first, cut_at
        cut_at = lowest
