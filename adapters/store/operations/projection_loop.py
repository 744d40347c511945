"""Keeping the read models up to date from a process of their own (``chatledger project``).

The loop catches up, then waits for new events: on PostgreSQL it LISTENs to
the channel ``eventsourcing`` NOTIFYs on every insert (so it reacts within
milliseconds), elsewhere it polls. Stopped and restarted, it resumes from the
tracking position it recorded, so no event is skipped or applied twice.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from chatledger.adapters.persistence.notify import listen

if TYPE_CHECKING:
    from chatledger.adapters.store import ConversationStore

__all__ = ["project_forever"]


def project_forever(
    store: ConversationStore,
    stop: threading.Event,
    *,
    poll_seconds: float = 0.5,
    on_catch_up: Callable[[int], None] | None = None,
) -> None:
    """Catch up, wait for new events, repeat, until ``stop`` is set.

    ``on_catch_up`` is called with the number of events applied each time
    some were.
    """
    listener = (
        listen(store.log, "chatledger-project") if store.config.backend == "postgres" else None
    )
    try:
        while not stop.is_set():
            applied = store.operations.catch_up()
            if applied and on_catch_up is not None:
                on_catch_up(applied)
            if listener is None:
                stop.wait(poll_seconds)
            else:
                for _ in listener.notifies(timeout=poll_seconds, stop_after=1):
                    pass
    finally:
        if listener is not None:
            listener.close()
