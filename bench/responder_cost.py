"""What ``live_load.py``'s paced responder costs alone: its CPU per chunk with nothing else running.

N answers of ``live_responder.PacedResponder`` at ``--rate`` chunks a second
each run at once on uvloop (as ``chatledger serve`` runs them), their chunks
taken and dropped: no store, no HTTP. Each chunk is a timer wake-up of its
answer, so this is the part of the server's CPU per chunk in ``live_load.py``
that is workload, not server code. Median (min-max) over rounds, with the
1-minute load.

    python bench/responder_cost.py --answers 10,50 --rounds 3
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time

import uvloop
from live_responder import PacedResponder
from stats import median


async def _drain(responder: PacedResponder) -> int:
    taken = 0
    async for _ in responder.respond(None):
        taken += 1
    return taken


async def _run(answers: int, seconds: float, rate: float) -> float:
    responder = PacedResponder(int(seconds * rate), rate)
    started = time.process_time()
    counts = await asyncio.gather(*(_drain(responder) for _ in range(answers)))
    return (time.process_time() - started) / sum(counts) * 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--answers", default="10,50", help="comma-separated N")
    parser.add_argument("--rate", type=float, default=50.0, help="chunks a second per answer")
    parser.add_argument("--seconds", type=float, default=10.0, help="length of each answer")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    for answers in (int(n) for n in args.answers.split(",")):
        costs, loads = [], []
        for _ in range(args.rounds):
            loads.append(os.getloadavg()[0])
            costs.append(uvloop.run(_run(answers, args.seconds, args.rate)))
        print(
            f"{answers} answers at {args.rate:g}/s: {median(costs):.1f} µs CPU a chunk "
            f"({min(costs):.1f}-{max(costs):.1f}), load {min(loads):.1f}-{max(loads):.1f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
