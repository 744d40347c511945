"""SIGKILL a process writing through the store API, again and again: nothing acknowledged lost or applied twice.

A script, not a test. Each round starts a child (this file with ``--child``)
that appends user messages to four conversations as fast as it can and prints
``ack <id>`` right after each ``append_message`` returns; after a random
0.2-1.5 s the parent sends SIGKILL. The parent then opens the store and checks:

* every acknowledged message is there (``lost``);
* no message is there twice, and each conversation holds exactly one event per
  message after its start (``doubled``: an action applied twice);
* at most the one message in flight at the kill is there unacknowledged.

The next child first retries the message that was in flight (as a client
whose call never returned would): it is either applied now or refused as
already there, never recorded twice.

Run: ``python bench/kill_writer.py --url postgresql://root@127.0.0.1:5432/test?schema=kw --rounds 30``
(a fresh SQLite file when ``--url`` is left out).
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from chatledger import ConversationStore  # noqa: E402
from chatledger.domain.errors import (  # noqa: E402
    ConversationNotFoundError,
    InvalidMessageError,
)

CHATS = [f"w{n}" for n in range(4)]


def _message(number: int) -> dict[str, object]:
    return {"id": f"m{number}", "role": "user", "parts": [{"type": "text", "text": f"n {number}"}]}


def child(url: str, start: int, retry: int | None) -> None:
    """Append messages ``start``, ``start+1``, ... until killed (after retrying ``retry``)."""
    store = ConversationStore.open(url)
    for chat in CHATS:
        try:
            store.version(chat)
        except ConversationNotFoundError:
            store.start_conversation(chat)
    if retry is not None:
        try:
            store.append_message(CHATS[retry % 4], _message(retry))
            print(f"ack m{retry}", flush=True)
        except InvalidMessageError:
            print(f"was-there m{retry}", flush=True)
    print("ready", flush=True)
    number = start
    while True:
        store.append_message(CHATS[number % 4], _message(number))
        print(f"ack m{number}", flush=True)
        number += 1


def check(url: str, acked: set[str]) -> tuple[int, int, set[str]]:
    """(lost, doubled, present but not acknowledged) over the whole store."""
    with ConversationStore.open(url) as store:
        present: list[str] = []
        extra_events = 0
        for chat in CHATS:
            try:
                store.version(chat)
            except ConversationNotFoundError:
                continue
            ids = [str(m["id"]) for m in store.messages(chat)]
            present += ids
            extra_events += store.version(chat) - 1 - len(ids)
    doubled = len(present) - len(set(present)) + extra_events
    lost = len(acked - set(present))
    return lost, doubled, set(present) - acked


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url")
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--seed", type=int, default=27)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--start", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--retry", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    url = args.url or f"sqlite:///{tempfile.mkdtemp(prefix='kill-writer-')}/store.db"
    if args.child:
        child(url, args.start, args.retry)
        return 0
    rng = random.Random(args.seed)
    acked: set[str] = set()
    next_number, in_flight = 0, None
    totals = {"kills": 0, "lost": 0, "doubled": 0, "unacked_present": 0, "was_there": 0}
    print(f"store {url}; load average {os.getloadavg()[0]:.2f}", flush=True)
    for round_ in range(1, args.rounds + 1):
        command = [sys.executable, __file__, "--child", "--url", url, "--start", str(next_number)]
        if in_flight is not None:
            command += ["--retry", str(in_flight)]
        process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        assert process.stdout is not None
        line = ""
        while line.strip() != "ready":
            line = process.stdout.readline()
            assert line, "the child ended before it was ready"
            word, _, ident = line.strip().partition(" ")
            if word == "ack":
                acked.add(ident)
            elif word == "was-there":
                totals["was_there"] += 1
                acked.add(ident)  # it is there: from now on it must stay
        time.sleep(rng.uniform(0.2, 1.5))  # when to kill: the point of the measurement
        process.send_signal(signal.SIGKILL)
        rest = process.stdout.read()
        process.wait()
        totals["kills"] += 1
        last = next_number - 1
        for line in rest.splitlines():
            word, _, ident = line.strip().partition(" ")
            if word == "ack":
                acked.add(ident)
                last = max(last, int(ident[1:]))
        lost, doubled, unacked = check(url, acked)
        in_flight = last + 1
        next_number = last + 2
        totals["lost"] = max(totals["lost"], lost)  # cumulative: each check covers every ack
        totals["doubled"] = max(totals["doubled"], doubled)
        totals["unacked_present"] += len(unacked - {f"m{in_flight}"})
        print(
            f"round {round_}: {len(acked)} acknowledged so far, lost {lost}, doubled {doubled}, "
            f"present unacknowledged {sorted(unacked)}",
            flush=True,
        )
    print(
        f"{totals['kills']} SIGKILLs, {len(acked)} acknowledged appends: lost {totals['lost']}, "
        f"applied twice {totals['doubled']}, present but never acknowledged (other than the "
        f"one in flight) {totals['unacked_present']}, in-flight retries refused as already "
        f"there {totals['was_there']}; load average {os.getloadavg()[0]:.2f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
