"""A user message sent while an answer streams (AI SDK 7 steering), over ``POST /api/chat`` and the WebSocket.

``DefaultChatTransport`` (without ``experimental_queue``) posts a message the
user sends mid-answer at once; with the queue it waits for the answer to end
and posts an ordinary turn. A message that arrives mid-answer is recorded at
once as a steering message (``store.append_message`` during an open stream:
``SteeringQueued``, with who and when); the running answer may take it at its
next step boundary (a ``steering-message`` part). The request's own answer
then waits until that answer has ended, and:

* if the running answer did not take the message, it became the next user
  message when the answer ended; if it is still the last message, its answer
  starts now and is streamed like any other (the client holds the message as
  its own user message, so its messages end equal to the store's);
* otherwise (taken, or answered by a later request) the answer is empty.

Only an AI SDK 7 conversation steers; a v6 one refuses a send while an answer
streams (409), as before. ``steer`` and ``answer_steered`` are called in a
worker thread; ``wait_until_answered`` follows the log, so any server process
on the same database may have written the running answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from chatledger.adapters.http.turns import Turn, open_turn
from chatledger.adapters.http.use_chat import Plan, steering_message
from chatledger.adapters.store import ConversationStore
from chatledger.domain.conversation import ConversationState
from chatledger.domain.errors import (
    ConversationNotFoundError,
    FollowTimeoutError,
    StreamAlreadyOpenError,
)

__all__ = ["Steered", "answer_steered", "steer", "wait_until_answered", "waiting"]


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


def steer(
    store: ConversationStore,
    state: ConversationState,
    plan: Plan,
    *,
    chat_id: str,
    tenant: str,
    actor: str,
    body: dict[str, Any],
) -> Steered:
    """Record the request's user message as a steering message; anything else waits (409).

    The same message posted again (a retried request) is not recorded twice.
    Raises ``StreamAlreadyOpenError`` for a request that is not just a new
    user message, and for an AI SDK 6 conversation.
    """
    assert state.stream is not None
    message = steering_message(plan) if state.ai_sdk == 7 else None
    if message is None:
        raise StreamAlreadyOpenError(chat_id, state.stream.stream_id)
    if message not in state.steering:
        store.append_message(chat_id, message, tenant=tenant, actor=actor)
    return Steered(chat_id, tenant, str(message["id"]), state.stream.stream_id, body)


def wait_until_answered(
    store: ConversationStore, steered: Steered, stop: threading.Event, *, tick: float
) -> None:
    """Return once the stream the message arrived during has closed (or ``stop`` is set).

    Follows the log (``store.follow``), waking at least every ``tick``
    seconds to look at ``stop``.
    """
    if _open_stream(store, steered) != steered.stream_id:
        return
    after: str | None = None
    while not stop.is_set():
        follower = store.follow(steered.chat_id, after=after, tenant=steered.tenant, timeout=tick)
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


def answer_steered(
    store: ConversationStore, steered: Steered, *, responder_actor: str
) -> Turn | None:
    """Once the answer it arrived during has ended: open the message's own answer, if it needs one.

    None when the running answer took it as steering, when something else
    answered it, or when another answer is already streaming.
    """
    try:
        state = store.conversation(steered.chat_id, tenant=steered.tenant).state
    except ConversationNotFoundError:
        return None
    last = state.messages[-1] if state.messages else None
    if state.stream is not None or last is None:
        return None
    if last["id"] != steered.message_id or last["role"] != "user":
        return None
    with contextlib.suppress(StreamAlreadyOpenError):  # another request answers it
        return open_turn(
            store,
            steered.chat_id,
            tenant=steered.tenant,
            actor=responder_actor,
            trigger="submit-message",
            continuation=False,
            request_id=None,
            body=steered.body,
        )
    return None


async def waiting(
    store: ConversationStore, steered: Steered, *, tick: float
) -> AsyncIterator[None]:
    """Yield every ``tick`` seconds until the stream the message arrived during has closed."""
    stop = threading.Event()
    job = asyncio.ensure_future(
        asyncio.to_thread(wait_until_answered, store, steered, stop, tick=tick)
    )
    try:
        while True:
            done, _ = await asyncio.wait([job], timeout=tick)
            if done:
                job.result()
                return
            yield None
    finally:
        stop.set()


def _open_stream(store: ConversationStore, steered: Steered) -> str | None:
    """The id of the conversation's open stream, read from its aggregate (None: none)."""
    state = store.conversation(steered.chat_id, tenant=steered.tenant).state
    return None if state.stream is None else state.stream.stream_id
