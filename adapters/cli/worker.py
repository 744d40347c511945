"""``chatledger worker``: run the continuations the store queues, in a process without HTTP.

An approval or tool output may request a continuation of the turn. ``chatledger
serve`` runs them itself; a worker runs them too (or instead, with ``serve
--no-continuations``): it claims each request with a lease (of many servers and
workers exactly one runs it), opens its stream and runs the responder into
it. Clients follow the answer with ``GET /api/chat/{id}/stream``. It runs only the
requests of the conversations its owner (``--owner``, default ``responder:<the
responder's actor>``) or ``any`` owns: a framework's conversation is never
answered by it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
from collections.abc import Sequence
from typing import TYPE_CHECKING, TextIO

from chatledger.adapters.cli.common import load_responder, open_store
from chatledger.adapters.cli.options import (
    DELAY,
    OWNER,
    RESPONDER,
    STREAM_LEASE_SECONDS,
    Commands,
    flag,
    option,
)

if TYPE_CHECKING:  # imported when the command runs, so `chatledger --help` starts fast
    from chatledger.adapters.responders.scripted import Responder
    from chatledger.adapters.store import ConversationStore
    from chatledger.projections.read_models import ContinuationRequest

__all__ = ["LEASE_SECONDS", "add", "run", "run_worker"]

LEASE_SECONDS = 10.0
"""``chatledger.adapters.store.turns.continuations.LEASE_SECONDS`` (kept equal by a test)."""


def add(commands: Commands) -> None:
    """Declare ``worker``."""
    commands.declare(
        "worker",
        run,
        RESPONDER.but(help="what answers, as for 'serve' (default: demo)"),
        OWNER,
        DELAY.but(help="pause between the demo responder's chunks (default: 0.05)"),
        option(
            "--poll-seconds",
            type=float,
            default=2.0,
            help="look for requests this often (default: 2)",
        ),
        option(
            "--grace-seconds",
            type=float,
            default=5.0,
            help="leave younger requests to the process that recorded them (default: 5)",
        ),
        option(
            "--lease-seconds",
            type=float,
            default=LEASE_SECONDS,
            help="how long a claim keeps other processes off a request, until its stream opens "
            f"(default: {LEASE_SECONDS:g})",
        ),
        flag("--once", "run the requests waiting now, wait for their answers, and exit"),
        STREAM_LEASE_SECONDS,
        help="run the continuations requested by approvals and tool outputs (no HTTP)",
        description="Claim each continuation request of the tenant (with a lease: of many "
        "servers and workers exactly one runs it), open its stream and run the responder into "
        "it, until interrupted. Requests younger than --grace-seconds are left to the process "
        "that recorded them. The same sweep closes, as interrupted, answers whose writer died "
        "(their stream lease ran out, see --stream-lease-seconds).",
        epilog="Example: chatledger worker --url postgresql://app@db/chat "
        "--responder myapp.bot:agent",
    )


def run(args: argparse.Namespace, out: TextIO) -> int:
    """Run the tenant's continuations until stopped (or, with ``--once``, those waiting now)."""
    responder = load_responder(args.responder, args.delay)
    with open_store(args) as store:
        print(
            f"chatledger worker on {store.config.display} (tenant: {args.tenant}); Ctrl-C to stop",
            file=out,
            flush=True,
        )
        started = asyncio.run(
            run_worker(
                store,
                responder,
                tenants=[args.tenant],
                poll_seconds=args.poll_seconds,
                grace_seconds=args.grace_seconds,
                lease_seconds=args.lease_seconds,
                once=args.once,
                owner=args.owner,
            )
        )
        print(f"chatledger worker: {started} continuation(s) run", file=out, flush=True)
    return 0


async def run_worker(
    store: ConversationStore,
    responder: Responder,
    *,
    tenants: Sequence[str],
    poll_seconds: float = 2.0,
    grace_seconds: float = 5.0,
    lease_seconds: float = LEASE_SECONDS,
    once: bool = False,
    stop: asyncio.Event | None = None,
    owner: str | None = None,
) -> int:
    """Run continuation requests until ``stop`` is set (SIGINT/SIGTERM set it); how many were run.

    With ``once``, runs the requests waiting now and returns when their answers
    are written. Answers under way when it stops get 10 s to finish, then are
    closed as ``aborted``. Only the requests of conversations owned by
    ``owner`` (default: ``responder:<the responder's actor>``) or by ``any``
    are run: never those a framework or another runtime continues.
    """
    from chatledger.adapters.store.turns.continuations import (
        ContinuationRunner,
        start_claimed,
        worker_name,
    )
    from chatledger.adapters.store.turns.runner import TurnRunner

    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(signum, stop.set)
    runner = TurnRunner(responder, owner=owner)
    start = start_claimed(store.turns, runner)
    started = 0

    async def run(claimed: ContinuationRequest) -> None:
        nonlocal started
        await start(claimed)  # nobody reads it here: clients follow the log
        started += 1

    continuations = ContinuationRunner(
        store,
        run,
        tenants=tenants,
        worker=worker_name("worker"),
        lease_seconds=lease_seconds,
        grace_seconds=grace_seconds,
        poll_seconds=poll_seconds,
        owner=runner.owner,
    )
    try:
        if once:
            await continuations.sweep_once(stop)
            if runner.tasks:
                await asyncio.wait(set(runner.tasks))
        else:
            await continuations.sweep(stop)
    finally:
        await runner.shutdown(timeout=10)
        for signum in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.remove_signal_handler(signum)
    return started
