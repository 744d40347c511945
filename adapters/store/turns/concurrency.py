"""Applying the policy for a user message sent while an answer streams (``chatledger.domain.concurrency``).

``Turns.take`` hands a request that arrives mid-answer to ``MidAnswer.arrive``:
it queues the message as steering (``queue``, ``merge``, ``debounce``;
``Steered``), refuses it (409: ``drop`` records the refusal first), or stops
the running answer and lets the turn go on as if nothing streamed
(``latest``). Once a queued message's running answer has ended,
``MidAnswer.answer_context`` gives a merged turn's responder the queued
messages as one, and ``quiet_left`` says how long a debounced answer still
waits. Every outcome but plain ``queue``'s is recorded (``MidAnswerMessage``).

The clock is injectable (``clock``) so a test can move time instead of
sleeping. The arrival times ``debounce`` compares are this process's: a
message sent through another process restarts the wait there, not here.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from chatledger.domain.concurrency import (
    Concurrency,
    MessageDroppedError,
    decide,
    merged_message,
    parse_concurrency,
    policy_of,
    quiet_left,
)
from chatledger.domain.errors import NoOpenStreamError, StreamAlreadyOpenError

if TYPE_CHECKING:
    from chatledger.adapters.store.chats import Chats
    from chatledger.adapters.store.streams.service import Streams
    from chatledger.domain.commands import Plan
    from chatledger.domain.conversation import ConversationState

__all__ = ["ENV_SETTING", "Arrival", "MidAnswer", "StopRunning"]

ENV_SETTING = "CHATLEDGER_MESSAGE_CONCURRENCY"
"""The environment's default policy (``chatledger serve --message-concurrency`` sets it per server)."""

StopRunning = Callable[[str, str, str], bool]
"""Stops the answer this process writes on a stream (stream id, actor, reason); False if none."""


@dataclass(frozen=True)
class Arrival:
    """How a queued message is to be answered: the policy applied, and when it arrived."""

    policy: Concurrency
    arrived: float
    """The clock's time when it was recorded."""


class MidAnswer:
    """The mid-answer policy of one store's turns: its default, its clock, what arrived when."""

    def __init__(self, chats: Chats, streams: Streams, *, clock: Callable[[], float] | None = None):
        self._chats, self._streams = chats, streams
        self.default = parse_concurrency(os.environ.get(ENV_SETTING) or "queue", ENV_SETTING)
        """The policy of conversations that set none (their metadata's ``messageConcurrency``)."""
        self.clock: Callable[[], float] = clock or time.monotonic
        self._last: dict[tuple[str, str], float] = {}
        self._lock = threading.Lock()

    def policy(self, state: ConversationState) -> Concurrency:
        """The conversation's policy: its own, else the default."""
        return policy_of(state.metadata or {}, self.default)

    def arrive(
        self,
        state: ConversationState,
        plan: Plan,
        chat_id: str,
        tenant: str,
        actor: str,
        stop_running: StopRunning | None,
    ) -> Arrival | None:
        """Apply the policy to a request that came while ``state``'s answer streams.

        Returns how to answer the queued message (the caller records it as
        steering), or None once ``latest`` stopped the running answer (the
        turn goes on). Raises ``StreamAlreadyOpenError`` (``MessageDroppedError``
        for ``drop``) when the request is refused.
        """
        assert state.stream is not None
        stream_id = state.stream.stream_id
        policy = self.policy(state)
        message = plan.new_user_message()
        decision = decide(
            policy.policy, steers=state.dialect.steers, new_message=message is not None
        )
        if decision == "refuse":
            raise StreamAlreadyOpenError(chat_id, stream_id)
        assert message is not None
        ids = [str(message["id"])]
        if decision == "drop":
            self._chats.record_mid_answer(chat_id, tenant=tenant, actor=actor, policy="drop", outcome="dropped",
                   stream_id=stream_id, message_ids=ids)  # fmt: skip
            raise MessageDroppedError(chat_id, stream_id)
        if decision == "latest":
            self._chats.record_mid_answer(chat_id, tenant=tenant, actor=actor, policy="latest",
                   outcome="stopped-running-answer", stream_id=stream_id, message_ids=ids)  # fmt: skip
            self._stop(chat_id, tenant, stream_id, actor, stop_running)
            return None
        now = self.clock()
        with self._lock:
            self._last[(tenant, chat_id)] = now
        if decision in ("merge", "debounce") and message not in state.steering:
            outcome = "queued-to-merge" if decision == "merge" else "debounced"
            self._chats.record_mid_answer(chat_id, tenant=tenant, actor=actor, policy=decision, outcome=outcome,
                   stream_id=stream_id, message_ids=ids)  # fmt: skip
        return Arrival(policy, now)

    def quiet_left(self, chat_id: str, tenant: str, arrival: Arrival | None) -> float:
        """Seconds a debounced answer still waits (0: answer now; 0 for any other policy)."""
        if arrival is None or arrival.policy.policy != "debounce":
            return 0.0
        with self._lock:
            last = self._last.get((tenant, chat_id), arrival.arrived)
        return quiet_left(self.clock(), last, arrival.policy.debounce_seconds)

    def answered(
        self,
        state: ConversationState,
        arrival: Arrival | None,
        chat_id: str,
        tenant: str,
        actor: str,
        stream_id: str,
        context: list[dict[str, Any]],
    ) -> list[dict[str, Any]]:
        """Record how a queued message's own answer (``stream_id``) answers it; the responder's context.

        ``merge``: the user messages at the end of ``context`` become one (and
        the merge is recorded, naming each); ``debounce``: the answer after the
        quiet time is recorded. Otherwise ``context`` as it is.
        """
        if arrival is None or arrival.policy.policy not in ("merge", "debounce"):
            return context
        tail = 0
        while tail < len(context) and context[-1 - tail].get("role") == "user":
            tail += 1
        ids = [str(m.get("id")) for m in context[len(context) - tail :]]
        policy = arrival.policy.policy
        with self._lock:
            self._last.pop((tenant, chat_id), None)  # answered: the next message starts afresh
        outcome = "merged" if policy == "merge" else "answered-after-quiet"
        self._chats.record_mid_answer(
            chat_id, tenant=tenant, actor=actor, policy=policy, outcome=outcome,
            stream_id=stream_id, message_ids=ids,
        )  # fmt: skip
        if policy != "merge" or tail < 2:
            return context
        return [*context[: len(context) - tail], merged_message(context[len(context) - tail :])]

    def _stop(
        self, chat_id: str, tenant: str, stream_id: str, actor: str, stop: StopRunning | None
    ) -> None:
        """Stop the running answer: through its writer when this process writes it, else by closing it."""
        reason = "a newer message was sent (message concurrency: latest)"
        if stop is not None and stop(stream_id, actor, reason):
            return
        with contextlib.suppress(NoOpenStreamError):  # it ended on its own meanwhile
            self._streams.close_stream(
                chat_id, stream_id, outcome="aborted", reason=reason, tenant=tenant, actor=actor
            )
