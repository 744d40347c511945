"""A user message sent while an answer streams (AI SDK 7 steering): its request's answer, on the event loop.

A message that arrives mid-answer is recorded at once as a steering message
(``Turns.take`` returns ``Steered``); the running answer may take it at its
next step boundary (a ``steering-message`` part). The request's own answer
then waits until that answer has ended, and:

* if the running answer did not take the message, it became the next user
  message when the answer ended; if it is still the last message, its answer
  starts now and is streamed like any other (the client holds the message as
  its own user message, so its messages end equal to the store's);
* otherwise (taken, or answered by a later request) the answer is empty.

Only an AI SDK 7 conversation steers; a v6 one refuses a send while an answer
streams, as before. ``steered_answer`` is the one way every transport (the
SSE response, the WebSocket) waits for it.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator

from chatledger.adapters.store.turns.service import Steered, Turn, Turns

__all__ = ["steered_answer"]


async def steered_answer(
    turns: Turns, steered: Steered, *, responder_actor: str, tick: float
) -> AsyncIterator[Turn | None]:
    """None every ``tick`` seconds while the answer the message arrived during streams; then its own.

    The last item is the ``Turn`` of the message's own answer when it needs
    one (start it with ``TurnRunner``); when the running answer took the
    message, or something else answered it, nothing more comes. The log is
    followed in a worker thread, so any process may write the running answer.
    """
    stop = threading.Event()
    job = asyncio.ensure_future(
        asyncio.to_thread(turns.wait_until_answered, steered, stop, tick=tick)
    )
    try:
        while True:
            done, _ = await asyncio.wait([job], timeout=tick)
            if done:
                job.result()
                break
            yield None
    finally:
        stop.set()
    # A debounced message waits, once the running answer ended, for the user to stop typing.
    while (
        left := turns.mid_answer.quiet_left(steered.chat_id, steered.tenant, steered.arrival)
    ) > 0:
        await asyncio.sleep(min(left, tick))
        yield None
    turn = await asyncio.to_thread(turns.answer_steered, steered, responder_actor=responder_actor)
    if turn is not None:
        yield turn
