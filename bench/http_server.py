"""The HTTP server's cost: a ``useChat`` turn through ``chatledger serve`` next to the store alone.

For each backend, a fresh database and a real ``chatledger serve`` process
(uvicorn) whose responder replays one recorded answer at full speed: a text
answer of ``--deltas`` text deltas. The client (httpx, this process) posts a
new conversation per turn and reads the SSE answer to ``[DONE]``; it notes the
time to the first event and to the end. The baseline, in the same run and on
the same kind of database, is ``store.ingest`` of the same chunks in this
process: what storing the answer costs without HTTP, SSE and the responder
task. Figures are medians over the turns; nothing passes or fails.

    python bench/http_server.py                       # both backends, ~1 minute
    python bench/http_server.py --backend sqlite --turns 20 --deltas 1000
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
from backends import BACKENDS, DEFAULT_POSTGRES_URL, fresh_db, postgres_available
from stats import median, percentile

Chunk = dict[str, Any]

RESPONDER = "bench_http_responder"
"""The module ``chatledger serve --responder`` imports (written into a temp folder)."""


def answer(deltas: int) -> list[Chunk]:
    """One streamed text answer: ``deltas`` text deltas of about 20 characters."""
    return [
        {"type": "start"},
        {"type": "start-step"},
        {"type": "text-start", "id": "t"},
        *(
            {"type": "text-delta", "id": "t", "delta": f"word {i:05d} of the answer "}
            for i in range(deltas)
        ),
        {"type": "text-end", "id": "t"},
        {"type": "finish-step"},
        {"type": "finish", "finishReason": "stop"},
    ]


def user(i: int) -> Chunk:
    return {"id": f"u{i}", "role": "user", "parts": [{"type": "text", "text": f"question {i}"}]}


def _args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["all", *BACKENDS], default="all")
    parser.add_argument("--turns", type=int, default=10, help="turns per backend (default 10)")
    parser.add_argument("--deltas", type=int, default=500, help="text deltas per answer")
    parser.add_argument("--postgres-url", default=DEFAULT_POSTGRES_URL)
    return parser.parse_args()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def through_http(url: str, turns: int, deltas: int, folder: Path) -> dict[str, list[float]]:
    """Turns through a ``chatledger serve`` process: first-event and whole-answer times (ms)."""
    (folder / f"{RESPONDER}.py").write_text(
        "from chatledger.adapters.responders.scripted import ScriptedResponder\n"
        "from http_bench_answer import CHUNKS\n"
        "responder = ScriptedResponder([CHUNKS], cycle=True)\n"
    )
    (folder / "http_bench_answer.py").write_text(f"CHUNKS = {answer(deltas)!r}\n")
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": str(folder)}
    command = [sys.executable, "-m", "chatledger", "serve", "--url", url, "--port", str(port)]
    command += ["--responder", f"{RESPONDER}:responder", "--log-level", "warning"]
    server = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    first_ms: list[float] = []
    total_ms: list[float] = []
    expected = len(answer(deltas)) + 1  # every chunk, then [DONE]
    try:
        _wait_for(base, server)
        with httpx.Client(base_url=base, timeout=60) as client:
            for i in range(turns + 1):  # the first turn warms the server up; it is not counted
                body = {"id": f"chat-{i}", "messages": [user(i)], "trigger": "submit-message"}
                started = time.perf_counter()
                first = None
                events = 0
                with client.stream("POST", "/api/chat", json=body) as response:
                    for line in response.iter_lines():
                        if line.startswith("data: "):
                            events += 1
                            first = first or time.perf_counter()
                ended = time.perf_counter()
                if events != expected:
                    raise RuntimeError(f"turn {i}: {events} events, expected {expected}")
                if i:
                    assert first is not None
                    first_ms.append((first - started) * 1000)
                    total_ms.append((ended - started) * 1000)
    finally:
        server.terminate()
        server.wait(timeout=15)
    return {"first_ms": first_ms, "total_ms": total_ms}


def _wait_for(base: str, server: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError("chatledger serve exited at start")
        try:
            if httpx.get(f"{base}/openapi.json", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.05)
    raise RuntimeError("chatledger serve did not answer within 30 s")


def store_alone(url: str, turns: int, deltas: int) -> list[float]:
    """The baseline: the same turns recorded with ``store.ingest`` in this process (ms per turn)."""
    from chatledger import ConversationStore

    chunks = answer(deltas)
    total_ms: list[float] = []
    with ConversationStore.open(url) as store:
        for i in range(turns + 1):
            started = time.perf_counter()
            store.start_conversation(f"chat-{i}")
            store.append_message(f"chat-{i}", user(i))
            store.ingest(f"chat-{i}", chunks)
            if i:
                total_ms.append((time.perf_counter() - started) * 1000)
    return total_ms


def main() -> int:
    import tempfile

    args = _args()
    backends = list(BACKENDS) if args.backend == "all" else [args.backend]
    problem = postgres_available(args.postgres_url) if "postgres" in backends else None
    if problem is not None:
        if args.backend == "postgres":
            print(f"PostgreSQL does not answer at {args.postgres_url}: {problem}", file=sys.stderr)
            return 1
        print(f"PostgreSQL does not answer ({problem}): SQLite only", file=sys.stderr)
        backends.remove("postgres")
    chunks = len(answer(args.deltas))
    print(
        "| backend | chunks per answer | first event p50 ms | answer p50 ms | HTTP chunks/s "
        "| store.ingest alone chunks/s (baseline) | ratio |"
    )
    print("|---|---|---|---|---|---|---|", flush=True)
    for backend in backends:
        print(f"{backend}: {args.turns} turns through HTTP...", file=sys.stderr)
        with fresh_db(backend, args.postgres_url) as db, tempfile.TemporaryDirectory() as tmp:
            served = through_http(db.url, args.turns, args.deltas, Path(tmp))
        with fresh_db(backend, args.postgres_url) as db:
            alone = store_alone(db.url, args.turns, args.deltas)
        http_rate = chunks / (median(served["total_ms"]) / 1000)
        alone_rate = chunks / (median(alone) / 1000)
        print(
            f"| {backend} | {chunks} | {median(served['first_ms']):.1f} "
            f"(p90 {percentile(served['first_ms'], 90):.1f}) | {median(served['total_ms']):.0f} "
            f"| {http_rate:,.0f} | {alone_rate:,.0f} | {http_rate / alone_rate:.2f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
