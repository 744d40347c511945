"""Taking a turn, protocol-neutral: record what a request adds, then open the stream its answer is written to.

``Turns.take`` reads the conversation from its aggregate (never the read
models: the write path does not wait for the projection), asks the caller's
planner what the request adds (a ``domain.commands.Plan``: the ``useChat``
planner of the HTTP app, say), records the plan's actions with the client as
the actor, and opens the stream the responder writes (``Turn``). A request
refused before its first action changes nothing: a new conversation is
created only once the plan and its first message are known to be acceptable.
A user message sent while an answer streams is recorded as a steering
message and answered once that answer ends (``Steered``, ``turns.steering``).
Every method here is blocking: call it in a worker thread.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from chatledger.adapters.store.reads.shown import shown_messages
from chatledger.adapters.store.turns.concurrency import Arrival, MidAnswer, StopRunning
from chatledger.adapters.store.turns.responder import ResponderRequest
from chatledger.domain.commands import (
    Action,
    AddToolOutput,
    AppendMessage,
    EditMessage,
    Plan,
    Regenerate,
    RespondToApproval,
)
from chatledger.domain.compaction import compacted_messages
from chatledger.domain.errors import (
    FollowTimeoutError,
    NothingToContinueError,
    StreamAlreadyOpenError,
)
from chatledger.domain.owners import ANY
from chatledger.domain.parts import check_message
from chatledger.domain.stream_commands import check_new_answer

if TYPE_CHECKING:
    from chatledger.adapters.store.chats import Chats
    from chatledger.adapters.store.reads.reader import Reader
    from chatledger.adapters.store.streams.service import Streams
    from chatledger.adapters.store.streams.writer import StreamWriter
    from chatledger.domain.conversation import ConversationState
    from chatledger.domain.limits import Limits
    from chatledger.projections.read_models import ContinuationRequest

__all__ = ["Planner", "Steered", "Turn", "Turns"]

Planner = Callable[[list[dict[str, Any]]], Plan]
"""What a request adds, given the conversation's messages as every view shows them."""


@dataclass
class Turn:
    """A stream opened for a responder: the writer, and what the responder is asked."""

    writer: StreamWriter
    request: ResponderRequest
    stopped_by: tuple[str, str | None] | None = None
    """(actor, reason) once someone stopped it (``TurnRunner.stop``)."""
    started: bool = False
    """Whether the client was sent the answer's ``start`` (it names the stored message)."""


@dataclass(frozen=True)
class Steered:
    """A user message recorded while an answer streamed: its request is answered once that ends."""

    chat_id: str
    tenant: str
    message_id: str
    """The steering message's id."""
    stream_id: str
    """The stream that was open when it arrived."""
    body: dict[str, Any]
    """The request's body (passed to the responder if the message gets its own answer)."""
    arrival: Arrival | None = None
    """The mid-answer policy it was queued under, and when (``turns.concurrency``)."""


class Turns:
    """The turn use cases of one store (``tenant=None``: the store's default tenant)."""

    def __init__(
        self, chats: Chats, reader: Reader, streams: Streams, limits: Limits, *, tenant: str
    ) -> None:
        self.tenant = tenant
        self._chats, self._reader, self._streams, self._limits = chats, reader, streams, limits
        self.mid_answer = MidAnswer(chats, streams)
        """The policy for user messages sent while an answer streams (default, clock)."""

    def take(
        self,
        chat_id: str,
        plan: Planner,
        *,
        tenant: str | None = None,
        actor: str,
        responder_actor: str,
        body: dict[str, Any] | None = None,
        owner: str = ANY,
        stop_running: StopRunning | None = None,
    ) -> Turn | Steered:
        """Record what a request adds (as ``actor``) and open the stream of its answer.

        While an answer streams, a new user message is recorded as a steering
        message and ``Steered`` returned (its answer comes once that answer
        ends: ``answer_steered``); any other request is refused then
        (``StreamAlreadyOpenError``). A continuation the conversation cannot
        make now raises ``NothingToContinueError``. A conversation the request
        starts is owned by ``owner`` (the runtime that will continue it).
        The conversation's mid-answer policy (``mid_answer``) may instead stop
        the running answer first (``latest``: through ``stop_running`` when
        this process writes it) or refuse the message (``drop``).
        """
        tenant, body = tenant or self.tenant, body or {}
        state = self._reader.stored_state(chat_id, tenant=tenant)
        # A stream whose writer died (its lease ran out) is closed first; a live one takes a
        # new user message as steering (v7) or refuses.
        if (
            state is not None
            and state.stream is not None
            and self._streams.expire_stream(
                chat_id, tenant=tenant, noticed_by=f"a new turn by {actor}"
            )
        ):
            state = self._reader.stored_state(chat_id, tenant=tenant)
        # Compared with what the client was shown: redacted parts read "[redacted]" there too.
        decided = plan([] if state is None else shown_messages(state))
        if state is not None and state.stream is not None:
            arrival = self.mid_answer.arrive(state, decided, chat_id, tenant, actor, stop_running)
            if arrival is not None:  # queued: only merge and debounce answer it their own way
                kept = arrival if arrival.policy.policy in ("merge", "debounce") else None
                return self._steer(state, decided, chat_id, tenant, actor, body, kept)
            state = self._reader.stored_state(chat_id, tenant=tenant)  # its answer stopped
            assert state is not None
            if state.stream is not None:
                raise StreamAlreadyOpenError(chat_id, state.stream.stream_id)
            decided = plan(shown_messages(state))
        if state is None:
            self._check_first_actions(decided)
            self._chats.start_conversation(
                chat_id, tenant=tenant, actor=actor, exist_ok=True, owner=owner
            )
        # The common send, one new user message, is recorded with its answer's stream in one
        # transaction: a resume through another process never finds the message without its
        # stream, and the turn costs one commit less.
        with_open = decided.new_user_message()
        if with_open is None:
            for action in decided.actions:
                self._record(action, chat_id, tenant, actor)
        return self.open(
            chat_id,
            tenant=tenant,
            actor=responder_actor,
            trigger=decided.answer.trigger,
            continuation=decided.answer.continuation,
            request_id=self._continuable(chat_id, tenant) if decided.continues else None,
            body=body,
            user_message=with_open,
            user_actor=actor,
        )

    def open(
        self,
        chat_id: str,
        *,
        tenant: str | None = None,
        actor: str,
        trigger: str,
        continuation: bool = False,
        request_id: str | None = None,
        body: dict[str, Any] | None = None,
        user_message: dict[str, Any] | None = None,
        user_actor: str = "system",
    ) -> Turn:
        """Open the stream a responder will write (as ``actor``), and what it is asked.

        ``user_message`` (by ``user_actor``) is recorded in the open's
        transaction: both or neither, and no moment where another process sees
        the message without the stream answering it. The responder's messages
        come from the conversation just saved by the open (a copy: the writer
        goes on folding into it), not from the read models, so a write never
        waits for the projection to catch up.
        """
        tenant = tenant or self.tenant
        writer = self._streams.open_stream(
            chat_id, tenant=tenant, actor=actor, continuation=continuation, trigger=trigger,
            request_id=request_id, user_message=user_message, user_actor=user_actor,
        )  # fmt: skip
        state = writer.conversation.state
        assert state.stream is not None  # just opened by this writer
        end = state.stream.message_index + (1 if state.stream.continuation else 0)
        # The model sees what every view shows: redacted content stays hidden from it too.
        context = shown_messages(state, copy.deepcopy(state.messages[:end]))
        if state.compactions:  # and a compaction's summary in place of its range
            context = compacted_messages(context, state.compactions)
        request = ResponderRequest(
            chat_id, tenant, context, trigger, writer.message_id, body or {}, ai_sdk=state.ai_sdk
        )
        return Turn(writer, request)

    def open_answer(
        self,
        chat_id: str,
        *,
        tenant: str | None = None,
        actor: str,
        continuation: bool = False,
        answer_key: str | None = None,
    ) -> StreamWriter:
        """Open the stream of an answer another runtime writes (``POST /api/chats/{id}/answers``).

        A new assistant message answering the conversation as it stands, or
        (``continuation``) the continuation of its last one, fulfilling the
        pending continuation request (``NothingToContinueError`` when the turn
        cannot continue). ``answer_key`` names the answer: a key already used
        raises ``AnswerAlreadyWrittenError``, also for a continuation already
        written, so a retried write is written once. A stream whose writer
        died is closed first.
        """
        tenant = tenant or self.tenant
        state = self._reader.stored_state(chat_id, tenant=tenant)
        if state is not None:  # the aggregate checks it again when it decides the open
            check_new_answer(state, answer_key)
        if state is not None and state.stream is not None:
            self._streams.expire_stream(chat_id, tenant=tenant, noticed_by=f"an answer by {actor}")
        return self._streams.open_stream(
            chat_id, tenant=tenant, actor=actor, continuation=continuation,
            trigger="continuation" if continuation else "submit-message",
            request_id=self._continuable(chat_id, tenant) if continuation else None,
            answer_key=answer_key,
        )  # fmt: skip

    def continue_claimed(self, claimed: ContinuationRequest, *, actor: str) -> Turn:
        """Open the stream of a claimed continuation request (``Inbox.claim_continuation``)."""
        return self.open(
            claimed.chat_id,
            tenant=claimed.tenant,
            actor=actor,
            trigger="continuation",
            continuation=True,
            request_id=claimed.request_id,
        )

    def wait_until_answered(self, steered: Steered, stop: threading.Event, *, tick: float) -> None:
        """Return once the stream a steering message arrived during has closed (or ``stop`` is set).

        Follows the log, so any process on the same database may write the
        running answer; wakes at least every ``tick`` seconds to look at ``stop``.
        """
        if self._open_stream_id(steered) != steered.stream_id:
            return
        after: str | None = None
        while not stop.is_set():
            follower = self._reader.follow(
                steered.chat_id, after=after, tenant=steered.tenant, timeout=tick
            )
            try:
                for item in follower:
                    after = item.cursor
                    if stop.is_set():
                        return
                return  # the stream closed
            except FollowTimeoutError as idle:
                after = idle.cursor
            finally:
                follower.close()

    def answer_steered(self, steered: Steered, *, responder_actor: str) -> Turn | None:
        """Once the answer it arrived during has ended: open the message's own answer, if it needs one.

        None when the running answer took it as steering, when something else
        answered it, or when another answer is already streaming.
        """
        state = self._reader.stored_state(steered.chat_id, tenant=steered.tenant)
        last = state.messages[-1] if state is not None and state.messages else None
        if state is None or state.stream is not None or last is None:
            return None
        if last["id"] != steered.message_id or last["role"] != "user":
            return None
        with contextlib.suppress(StreamAlreadyOpenError):  # another request answers it
            turn = self.open(
                steered.chat_id,
                tenant=steered.tenant,
                actor=responder_actor,
                trigger="submit-message",
                body=steered.body,
            )
            context = self.mid_answer.answered(
                state, steered.arrival, steered.chat_id, steered.tenant, responder_actor,
                turn.writer.stream_id, turn.request.messages,
            )  # fmt: skip
            if context is not turn.request.messages:
                turn.request = dataclasses.replace(turn.request, messages=context)
            return turn
        return None

    def _steer(
        self,
        state: ConversationState,
        plan: Plan,
        chat_id: str,
        tenant: str,
        actor: str,
        body: dict[str, Any],
        arrival: Arrival | None = None,
    ) -> Steered:
        """Record the request's user message as a steering message; anything else waits (409).

        The same message posted again (a retried request) is not recorded
        twice. ``StreamAlreadyOpenError`` for a request that is not just a new
        user message, and for an AI SDK 6 conversation.
        """
        assert state.stream is not None
        message = plan.new_user_message() if state.dialect.steers else None
        if message is None:
            raise StreamAlreadyOpenError(chat_id, state.stream.stream_id)
        if message not in state.steering:
            self._chats.append_message(chat_id, message, tenant=tenant, actor=actor)
        return Steered(chat_id, tenant, str(message["id"]), state.stream.stream_id, body, arrival)

    def _continuable(self, chat_id: str, tenant: str) -> str | None:
        """The continuation request a continuing answer fulfils; NothingToContinueError if it cannot."""
        status = self._reader.status(chat_id, tenant=tenant)
        if status.status != "ready-to-continue":
            raise NothingToContinueError(
                status.status, [call.tool_call_id for call in status.waiting_for]
            )
        return status.continuation_request

    def _record(self, action: Action, chat_id: str, tenant: str, actor: str) -> None:
        """Record one action of a plan, as ``actor``."""
        chats = self._chats
        if isinstance(action, AppendMessage):
            chats.append_message(chat_id, action.message, tenant=tenant, actor=actor)
        elif isinstance(action, EditMessage):
            chats.edit(chat_id, action.message_id, action.message, tenant=tenant, actor=actor)
        elif isinstance(action, Regenerate):
            chats.regenerate(chat_id, action.message_id, actor=actor, tenant=tenant)
        elif isinstance(action, RespondToApproval):
            chats.respond_to_approval(
                chat_id, approved=action.approved, approval_id=action.approval_id,
                tool_call_id=None if action.approval_id else action.tool_call_id,
                reason=action.reason, actor=actor, auto_continue=action.auto_continue,
                tenant=tenant,
            )  # fmt: skip
        elif isinstance(action, AddToolOutput):
            chats.add_tool_output(
                chat_id, action.tool_call_id, output=action.output, state=action.state,
                error_text=action.error_text, actor=actor, auto_continue=action.auto_continue,
                tenant=tenant,
            )  # fmt: skip
        else:  # pragma: no cover - the Action union is closed
            raise TypeError(f"unknown action {action!r}")

    def _check_first_actions(self, plan: Plan) -> None:
        """Refuse a new conversation's first message before the conversation is created."""
        for action in plan.actions:
            if isinstance(action, AppendMessage):
                self._limits.message_size(action.message)
                check_message(action.message)

    def _open_stream_id(self, steered: Steered) -> str | None:
        """The id of the conversation's open stream, read from its aggregate (None: none)."""
        state = self._reader.stored_state(steered.chat_id, tenant=steered.tenant)
        return None if state is None or state.stream is None else state.stream.stream_id
