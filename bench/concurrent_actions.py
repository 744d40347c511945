"""4,000 actions at once from 4 processes of 8 threads: nothing lost, nothing doubled, no continuation claimed twice.

A script, not a test. A fresh store gets ``--conversations`` conversations
awaiting a tool approval and 16 busy ones. Then 4 processes of 8 threads
each (``--processes``, ``--threads``) run 125 actions per thread, all at once:

* 3 in 5: ``append_message`` to one of the 16 busy conversations (a unique
  id; retried on ``ConcurrentWriteError``, as the error asks); acknowledged
  when it returns;
* 1 in 5: ``respond_to_approval`` of a random paused conversation (many
  threads race on the same approval): ``changed`` means this call recorded it;
* 1 in 5: ``claim_continuation`` (lease 1 h, longer than the run, so that no
  claim runs out and is rightly claimed again): a returned request is a claim.

Checked afterwards from a fresh store: every acknowledged message once (and
one event per message), exactly one ``approval-responded`` event per
conversation answered and exactly one call told ``changed``, one
``continuation-claimed`` event per claim and no conversation claimed twice.

Run: ``python bench/concurrent_actions.py --backend all``.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from chatledger import ConversationStore  # noqa: E402
from chatledger.adapters.responders import demo  # noqa: E402
from chatledger.domain.errors import ConcurrentWriteError  # noqa: E402
from tests.integration.conftest import _postgres_store_url, drop_schema  # noqa: E402

TENANT = "race"
BUSY = [f"busy-{n}" for n in range(16)]


def _retrying(action: Any) -> Any:
    for _ in range(200):
        try:
            return action()
        except ConcurrentWriteError:
            time.sleep(random.uniform(0.001, 0.01))
    return action()


def worker(
    url: str, process: int, threads: int, per_thread: int, conversations: int, start: Any, out: Any
) -> None:
    store = ConversationStore.open(url, tenant=TENANT)
    found: dict[str, list[Any]] = {"messages": [], "answers": [], "claims": [], "errors": []}
    lock = threading.Lock()

    def thread(number: int) -> None:
        rng = random.Random(process * 100 + number)
        name = f"p{process}t{number}"
        start.wait()
        for i in range(per_thread):
            try:
                if i % 5 < 3:
                    ident = f"{name}-{i}"
                    chat = BUSY[(i + number + process) % len(BUSY)]
                    message = {
                        "id": ident,
                        "role": "user",
                        "parts": [{"type": "text", "text": ident}],
                    }
                    _retrying(lambda c=chat, m=message: store.append_message(c, m, actor=name))
                    with lock:
                        found["messages"].append(ident)
                elif i % 5 == 3:
                    chat = f"paused-{rng.randrange(conversations)}"
                    result = _retrying(
                        lambda c=chat: store.respond_to_approval(
                            c, approval_id=demo.APPROVAL_ID, approved=True, actor=name
                        )
                    )
                    if result.changed:
                        with lock:
                            found["answers"].append(chat)
                else:
                    claim = store.claim_continuation(name, lease_seconds=3600)
                    if claim is not None:
                        with lock:
                            found["claims"].append(claim.chat_id)
            except Exception as error:  # counted and shown: none expected
                with lock:
                    found["errors"].append(f"{type(error).__name__}: {error}"[:200])

    pool = [threading.Thread(target=thread, args=(n,)) for n in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    store.close()
    out.put(json.dumps(found))


def run(backend: str, processes: int, threads: int, per_thread: int, conversations: int) -> None:
    if backend == "sqlite":
        url = f"sqlite:///{tempfile.mkdtemp(prefix='race-')}/store.db"
    else:
        url = _postgres_store_url(f"race_{uuid.uuid4().hex}")
    try:
        with ConversationStore.open(url, tenant=TENANT) as store:
            for chat in BUSY:
                store.start_conversation(chat)
            for n in range(conversations):
                chat = f"paused-{n}"
                store.start_conversation(chat)
                store.append_message(chat, demo.USER_MESSAGE)
                store.ingest(chat, demo.first_turn_chunks())
        context = multiprocessing.get_context("spawn")
        start, out = context.Event(), context.Queue()
        pool = [
            context.Process(
                target=worker, args=(url, p, threads, per_thread, conversations, start, out)
            )
            for p in range(processes)
        ]
        for p in pool:
            p.start()
        time.sleep(3)  # let every process open its store and start its threads
        load = os.getloadavg()[0]
        began = time.monotonic()
        start.set()
        results = [json.loads(out.get(timeout=1200)) for _ in pool]
        took = time.monotonic() - began
        for p in pool:
            p.join()
        messages = [m for r in results for m in r["messages"]]
        answers = Counter(a for r in results for a in r["answers"])
        claims = Counter(c for r in results for c in r["claims"])
        errors = [e for r in results for e in r["errors"]]
        with ConversationStore.open(url, tenant=TENANT) as store:
            present: list[str] = []
            extra = 0
            for chat in BUSY:
                ids = [str(m["id"]) for m in store.messages(chat)]
                present += ids
                extra += store.version(chat) - 1 - len(ids)
            answered_events = claimed_events = 0
            answer_doubled = claim_doubled = 0
            for n in range(conversations):
                chat = f"paused-{n}"
                kinds = Counter(e.kind for e in store.history(chat))
                answered_events += kinds["approval-responded"]
                claimed_events += kinds["continuation-claimed"]
                answer_doubled += max(0, kinds["approval-responded"] - 1)
                claim_doubled += max(0, kinds["continuation-claimed"] - 1)
        lost = len(set(messages) - set(present))
        doubled = len(present) - len(set(present)) + extra
        total = processes * threads * per_thread
        print(
            f"{backend}: {total} actions ({processes} processes x {threads} threads) in "
            f"{took:.1f} s, load average {load:.2f} -> {os.getloadavg()[0]:.2f}; "
            f"{len(messages)} messages acknowledged: lost {lost}, doubled {doubled}; "
            f"{sum(answers.values())} approval answers recorded (of "
            f"{total // 5} attempts): {answered_events} events, answered twice "
            f"{answer_doubled + sum(max(0, c - 1) for c in answers.values())}; "
            f"{sum(claims.values())} continuations claimed: {claimed_events} events, claimed "
            f"twice {claim_doubled + sum(max(0, c - 1) for c in claims.values())}; "
            f"other errors {len(errors)} {errors[:3]}",
            flush=True,
        )
    finally:
        if backend == "postgres":
            drop_schema(url)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["sqlite", "postgres", "all"], default="all")
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--per-thread", type=int, default=125)
    parser.add_argument("--conversations", type=int, default=200)
    args = parser.parse_args()
    for backend in ["sqlite", "postgres"] if args.backend == "all" else [args.backend]:
        run(backend, args.processes, args.threads, args.per_thread, args.conversations)
    return 0


if __name__ == "__main__":
    sys.exit(main())
