"""The continuation policy: who runs a requested continuation, when, and under which lease.

An approval or tool output may request a continuation of the turn (the
store records a ``ContinuationRequested``). Any process holding a
``ContinuationRunner`` can run it: ``chatledger serve`` right after the
action that requested it, and every few seconds for the requests nobody took;
``chatledger worker`` with the same sweep and no HTTP at all. A request is
claimed with a lease, so of many processes exactly one runs it; a request
younger than the grace period is left to the process that recorded it (a
``POST /api/chat`` continuing its own turn).

Only the conversation's owner continues it (``chatledger.domain.owners``): a
runner claims the requests of its ``owner`` (``serve`` and ``worker`` pass
their responder's, ``responder:<actor>``) and of conversations owned by
``any``; a request of another owner (a framework that resumes its own run, an
external runtime) stays pending, visible with its age, until its owner takes
or retires it.

The runner decides when; the caller says how: it passes ``run``, an async
function that opens the claimed request's stream (``open_stream(...,
request_id=...)``) within the lease and starts the responder on it;
``start_claimed`` makes the usual one from the turn service and a
``TurnRunner``.

The same sweep closes, as ``interrupted``, the streams whose writers died
(their stream lease ran out: ``chatledger.adapters.store.streams.leases``), so a
conversation whose server was killed mid-answer is free again even when
nobody follows it or starts a new turn.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING

from chatledger.domain.errors import ChatLedgerError, ConcurrentWriteError, StoreUnavailableError
from chatledger.projections.read_models import ContinuationRequest

if TYPE_CHECKING:
    from chatledger.adapters.store.store import ConversationStore
    from chatledger.adapters.store.turns.runner import TurnRunner
    from chatledger.adapters.store.turns.service import Turns

__all__ = ["LEASE_SECONDS", "ContinuationRunner", "RunTurn", "start_claimed", "worker_name"]

log = logging.getLogger("chatledger.continuations")

LEASE_SECONDS = 10.0
"""How long a claim keeps others off a request. It only has to cover claim -> open (the open
stream fulfils the request, in milliseconds), so a process that dies in between delays the
continuation by seconds, not a minute."""

RunTurn = Callable[[ContinuationRequest], Awaitable[None]]
"""Opens a claimed request's stream and starts its responder (returns once it is started)."""


def start_claimed(turns: Turns, runner: TurnRunner) -> RunTurn:
    """The usual ``run``: open the claimed request's stream and start ``runner``'s responder on it.

    Nobody reads the answer there: clients follow it from the log.
    """

    async def run(claimed: ContinuationRequest) -> None:
        turn = await asyncio.to_thread(turns.continue_claimed, claimed, actor=runner.actor)
        runner.run(turn)

    return run


def worker_name(role: str) -> str:
    """The name a process claims continuation requests under: ``role:host:pid``."""
    return f"{role}:{socket.gethostname()}:{os.getpid()}"


class ContinuationRunner:
    """Claims continuation requests (with a lease) and runs them through a caller's ``run``."""

    def __init__(
        self,
        store: ConversationStore,
        run: RunTurn,
        *,
        tenants: Sequence[str] | None = None,
        worker: str | None = None,
        lease_seconds: float = LEASE_SECONDS,
        grace_seconds: float = 5.0,
        poll_seconds: float = 2.0,
        owner: str | None = None,
    ) -> None:
        self.store = store
        self.run = run
        self.tenants = list(tenants) if tenants else [store.tenant]
        """The tenants whose requests the sweep runs."""
        self.worker = worker or worker_name("worker")
        """The name this process claims requests under."""
        self.lease_seconds = lease_seconds
        self.grace_seconds = grace_seconds
        self.poll_seconds = poll_seconds
        self.owner = owner
        """Whose requests it claims: the conversations this owner owns, and those owned by ``any``
        (None: only those). Another owner's request is never taken."""

    async def claim(
        self, tenant: str, *, chat_id: str | None = None, min_age_seconds: float = 0.0
    ) -> ContinuationRequest | None:
        """Claim one pending request (one process of many wins it), or None."""
        return await asyncio.to_thread(
            self.store.claim_continuation,
            self.worker,
            lease_seconds=self.lease_seconds,
            tenant=tenant,
            chat_id=chat_id,
            min_age_seconds=min_age_seconds,
            owner=self.owner,
        )

    async def start(self, claimed: ContinuationRequest) -> bool:
        """Run a claimed request; False if its stream could not be opened (the lease lapses, a sweep retries)."""
        try:
            await self.run(claimed)
        except ChatLedgerError as error:
            log.warning("could not continue chat %r: %s", claimed.chat_id, error)
            return False
        except Exception:  # a bug in ``run`` must not end the sweep
            log.exception("could not continue chat %r", claimed.chat_id)
            return False
        return True

    async def continue_now(self, tenant: str, chat_id: str) -> bool:
        """Claim and run the request an action just recorded on ``chat_id``; False if none was run.

        Called by the process that recorded it, so a client that resumes right
        after finds the continuation streaming; a failure is left to the sweep.
        """
        try:
            claimed = await self.claim(tenant, chat_id=chat_id)
        except ChatLedgerError as error:
            log.warning("could not claim the continuation of chat %r: %s", chat_id, error)
            return False
        return claimed is not None and await self.start(claimed)

    async def expire_streams(self, tenant: str) -> list[str]:
        """Close the tenant's streams whose lease expired (their writers died); the chat ids closed."""
        closed = await asyncio.to_thread(
            self.store.streams.expire_streams,
            tenant=tenant,
            actor=self.worker,
            noticed_by="the sweep",
        )
        for chat_id in closed:
            log.warning("closed the stream of chat %r: its writer's lease expired", chat_id)
        return closed

    async def sweep_once(self, stop: asyncio.Event | None = None) -> int:
        """Close the streams of dead writers, then run every request older than the grace period
        that nobody holds; how many requests were started."""
        started = 0
        for tenant in self.tenants:
            try:
                await self.expire_streams(tenant)
                while stop is None or not stop.is_set():
                    claimed = await self.claim(tenant, min_age_seconds=self.grace_seconds)
                    if claimed is None:
                        break
                    started += await self.start(claimed)
            except (StoreUnavailableError, ConcurrentWriteError) as error:
                log.warning("continuation sweep for tenant %r: %s", tenant, error)
        return started

    async def sweep(self, stop: asyncio.Event) -> None:
        """``sweep_once`` every ``poll_seconds`` until ``stop`` is set.

        Returns between two claims: a claim under way (in a worker thread) is
        never cut off while the store may be closed after it.
        """
        while not stop.is_set():
            await self.sweep_once(stop)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), self.poll_seconds)
