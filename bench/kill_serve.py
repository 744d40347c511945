"""SIGKILL `chatledger serve` mid-answer, again and again: nothing lost or doubled, the orphan closed by its lease.

A script, not a test. For each backend, one conversation goes on over
``--rounds`` rounds; each round starts a real ``chatledger serve`` (the
hanging test responder, ``--stream-lease-seconds LEASE``) on the same
database and:

1. posts a turn that gets a whole answer (acknowledged: 200, read to the end);
2. posts a turn whose answer hangs half written, waits until that half is
   committed, and SIGKILLs the server mid-answer;
3. follows the conversation from this process (``store.follow``) until the
   orphaned stream is closed: the time from the kill to the close is
   reported with its ratio to the lease.

After each round: every acknowledged user message is there exactly once, no
message id twice, and the conversation's stream closes are exactly one
``finished`` and one ``interrupted`` per round so far.

Run: ``python bench/kill_serve.py --backend all --rounds 30 --lease 2`` and
``--rounds 3 --lease 30`` (the default lease).
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from chatledger import ConversationStore  # noqa: E402
from tests.integration.conftest import _postgres_store_url, drop_schema  # noqa: E402
from tests.integration.http_support import send_body  # noqa: E402
from tests.support.hanging_responder import PARTIAL  # noqa: E402

TOKEN, TENANT = "token-kill", "kill-tenant"
HEADERS = {"authorization": f"Bearer {TOKEN}"}
RESPONDER = "tests.support.hanging_responder:responder"
CHAT = "chat-k"


@contextmanager
def server_process(url: str, *options: str, tokens: str) -> Iterator[tuple[Any, str]]:
    """``chatledger serve`` on a free port, given 180 s to start on a loaded machine."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [sys.executable, "-m", "chatledger", "serve", "--url", url, "--port", str(port)]
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHATLEDGER_TOKEN")}
    env["CHATLEDGER_TOKENS"] = tokens
    process = subprocess.Popen(
        [*command, "--log-level", "warning", *options],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.STDOUT,
        env=env,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                if httpx.get(f"{base}/openapi.json", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert process.poll() is None and time.monotonic() < deadline, "serve did not start"
            time.sleep(0.05)
        yield process, base
    finally:
        if process.poll() is None:
            process.terminate()
            process.wait(timeout=30)


def user(message_id: str, text: str) -> dict[str, object]:
    return {"id": message_id, "role": "user", "parts": [{"type": "text", "text": text}]}


def one_round(url: str, lease: str, store: ConversationStore, number: int) -> float:
    """One round (see the module docstring); the seconds from the kill to the close."""
    options = ("--responder", RESPONDER, "--stream-lease-seconds", lease)
    with server_process(url, *options, tokens=f"{TOKEN}={TENANT}") as (process, base):
        whole = httpx.post(
            f"{base}/api/chat",
            headers=HEADERS,
            timeout=60,
            json=send_body(CHAT, [*store.messages(CHAT), user(f"a{number}", "again")]),
        )
        assert whole.status_code == 200 and "a whole answer" in whole.text, whole.text
        with httpx.stream(
            "POST",
            f"{base}/api/chat",
            headers=HEADERS,
            timeout=60,
            json=send_body(CHAT, [*store.messages(CHAT), user(f"h{number}", "hang")]),
        ) as response:
            assert response.status_code == 200
            for line in response.iter_lines():
                if PARTIAL in line:
                    break
            deadline = time.monotonic() + 30
            while not any(
                PARTIAL in str(m) and m["role"] == "assistant" for m in store.messages(CHAT)[-1:]
            ):
                assert time.monotonic() < deadline, "the half answer was never committed"
                time.sleep(0.02)
            process.send_signal(signal.SIGKILL)
            killed = time.monotonic()
            process.wait(timeout=30)
    for _ in store.follow(CHAT, timeout=float(lease) * 3 + 60):
        pass
    return time.monotonic() - killed


def check(store: ConversationStore, rounds: int) -> tuple[int, int, list[str]]:
    """(lost, doubled, the stream closes' outcomes) after ``rounds`` rounds."""
    ids = [str(m["id"]) for m in store.messages(CHAT)]
    acked = {f"{kind}{n}" for n in range(1, rounds + 1) for kind in ("a", "h")}
    lost = len(acked - set(ids))
    doubled = len(ids) - len(set(ids))
    outcomes = [e.details["outcome"] for e in store.history(CHAT, kinds=["stream-closed"])]
    expected = ["finished", "interrupted"] * rounds
    if outcomes != expected:
        doubled += max(0, len(outcomes) - len(expected))
    return lost, doubled, outcomes


def run(backend: str, rounds: int, lease: str) -> None:
    if backend == "sqlite":
        url = f"sqlite:///{tempfile.mkdtemp(prefix='kill-serve-')}/store.db"
    else:
        url = _postgres_store_url(f"kill_serve_{uuid.uuid4().hex}")
    load = os.getloadavg()[0]
    closes: list[float] = []
    try:
        with ConversationStore.open(url, tenant=TENANT, stream_lease_seconds=float(lease)) as store:
            store.start_conversation(CHAT)
            lost = doubled = 0
            outcomes: list[str] = []
            for number in range(1, rounds + 1):
                closes.append(one_round(url, lease, store, number))
                lost, doubled, outcomes = check(store, number)
                print(
                    f"{backend} round {number}: closed {closes[-1]:.2f} s after the kill; "
                    f"lost {lost}, doubled {doubled}",
                    flush=True,
                )
    finally:
        if backend == "postgres":
            drop_schema(url)
    ratio = [c / float(lease) for c in closes]
    print(
        f"{backend}: {rounds} SIGKILLs of serve mid-answer (lease {lease} s): "
        f"{2 * rounds} acknowledged user turns, lost {lost}, doubled {doubled}, closes "
        f"{outcomes.count('interrupted')} interrupted + {outcomes.count('finished')} finished; "
        f"kill -> closed median {statistics.median(closes):.2f} s (min {min(closes):.2f}, "
        f"max {max(closes):.2f}), {statistics.median(ratio):.2f}x the lease "
        f"({min(ratio):.2f}-{max(ratio):.2f}); load average {load:.2f} -> "
        f"{os.getloadavg()[0]:.2f}",
        flush=True,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["sqlite", "postgres", "all"], default="all")
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--lease", default="2", help="--stream-lease-seconds of each server")
    args = parser.parse_args()
    for backend in ["sqlite", "postgres"] if args.backend == "all" else [args.backend]:
        run(backend, args.rounds, args.lease)
    return 0


if __name__ == "__main__":
    sys.exit(main())
