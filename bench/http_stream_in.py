"""Stream-in (``POST /api/chats/{id}/answers``) next to ``POST /api/chat``, same server, same run.

For each backend: a fresh database and one real ``chatledger serve`` process
(uvicorn, ``--no-continuations``) whose responder replays one recorded text
answer of ``--deltas`` text deltas at full speed. Each round runs ``--turns``
answers each way, alternating:

* ``/api/chat``: a ``useChat`` send; the in-process responder writes the
  answer, the client reads the SSE answer to ``[DONE]``;
* stream-in: the same answer's chunks sent as the request body
  (``toUIMessageStreamResponse`` framing, one write per chunk, chunked
  encoding) after ``POST /api/chats`` and ``POST /api/chats/{id}/messages``;
  the answer request alone is timed (the two setup requests are reported
  apart);
* stream-in with the whole body in one write: the server's ceiling, with
  the client's per-chunk writes out of the way.

Per round: chunks/s through one connection (the answer request's chunks over
its wall time, summed over the round's turns) and the server process's CPU
per chunk (its user + system time from /proc, read around each answer
request, summed over the round and divided by its chunks; /proc counts in
10 ms ticks, hence answers of 1,000 chunks). Printed: the medians over the rounds,
and the load average before and after. Nothing passes or fails.

    python bench/http_stream_in.py                      # both backends, 5 rounds of 10 answers each way
    python bench/http_stream_in.py --backend sqlite --rounds 3 --turns 10 --deltas 1000
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
from backends import BACKENDS, DEFAULT_POSTGRES_URL, fresh_db, postgres_available
from http_server import RESPONDER, _free_port, _wait_for, answer, user
from stats import median

TICK = os.sysconf("SC_CLK_TCK")


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def _frames(chunks: list[dict[str, object]]) -> Iterator[bytes]:
    for chunk in chunks:
        yield f"data: {json.dumps(chunk)}\n\n".encode()
    yield b"data: [DONE]\n\n"


def _server(url: str, deltas: int, folder: Path) -> tuple[subprocess.Popen[bytes], str]:
    (folder / f"{RESPONDER}.py").write_text(
        "from chatledger.adapters.responders.scripted import ScriptedResponder\n"
        "from http_bench_answer import CHUNKS\n"
        "responder = ScriptedResponder([CHUNKS], cycle=True)\n"
    )
    (folder / "http_bench_answer.py").write_text(f"CHUNKS = {answer(deltas)!r}\n")
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": str(folder), "CHATLEDGER_TOKENS": "bench=bench"}
    command = [sys.executable, "-m", "chatledger", "serve", "--url", url, "--port", str(port)]
    command += ["--responder", f"{RESPONDER}:responder", "--log-level", "warning"]
    command += ["--no-continuations"]
    server = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    _wait_for(base, server)
    return server, base


def _chat_turn(client: httpx.Client, chat: str, i: int, expected: int) -> float:
    """One ``useChat`` send read to ``[DONE]``: its wall time (s)."""
    body = {"id": chat, "messages": [user(i)], "trigger": "submit-message"}
    started = time.perf_counter()
    events = 0
    with client.stream("POST", "/api/chat", json=body) as response:
        for line in response.iter_lines():
            events += line.startswith("data: ")
    took = time.perf_counter() - started
    if events != expected:
        raise RuntimeError(f"{chat}: {events} events, expected {expected}")
    return took


def _setup(client: httpx.Client, chat: str, i: int) -> float:
    """Start the conversation and append the user's message: the wall time (s)."""
    started = time.perf_counter()
    client.post("/api/chats", json={"id": chat}).raise_for_status()
    client.post(f"/api/chats/{chat}/messages", json={"message": user(i)}).raise_for_status()
    return time.perf_counter() - started


def _answer(
    client: httpx.Client, chat: str, chunks: list[dict[str, object]], *, whole: bool
) -> float:
    """Stream the answer in (one write per chunk, or the body in one write): the wall time (s)."""
    sending = time.perf_counter()
    response = client.post(
        f"/api/chats/{chat}/answers",
        content=b"".join(_frames(chunks)) if whole else _frames(chunks),
        headers={"content-type": "text/event-stream", "idempotency-key": f"{chat}-answer"},
    )
    took = time.perf_counter() - sending
    report = response.json()
    if report.get("outcome") != "finished" or report["chunks"]["applied"] != len(chunks):
        raise RuntimeError(f"{chat}: {report}")
    return took


def measure(url: str, rounds: int, turns: int, deltas: int) -> dict[str, list[float]]:
    """Per round: chunks/s and CPU µs per chunk, each way; setup ms per stream-in turn."""
    chunks = answer(deltas)
    per = len(chunks)
    result: dict[str, list[float]] = {
        "chat_rate": [], "chat_cpu": [], "in_rate": [], "in_cpu": [], "setup_ms": [],
        "whole_rate": [], "whole_cpu": [],
    }  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        server, base = _server(url, deltas, Path(tmp))
        headers = {"authorization": "Bearer bench"}
        try:
            with httpx.Client(base_url=base, timeout=120, headers=headers) as client:
                _chat_turn(client, "warm-chat", 0, per + 1)  # warm both paths up, not counted
                _setup(client, "warm-in", 0)
                _answer(client, "warm-in", chunks, whole=False)
                for r in range(rounds):
                    ways = ("chat", "in", "whole")
                    for way in ways if r % 2 == 0 else ways[::-1]:
                        wall = setup = spent = 0.0
                        for t in range(turns):
                            chat = f"{way}-{r}-{t}"
                            if way == "chat":
                                before = _cpu_seconds(server.pid)
                                wall += _chat_turn(client, chat, t, per + 1)
                            else:  # the setup requests' time and CPU are kept apart
                                took_setup = _setup(client, chat, t)
                                before = _cpu_seconds(server.pid)
                                took = _answer(client, chat, chunks, whole=way == "whole")
                                wall, setup = wall + took, setup + took_setup
                            spent += _cpu_seconds(server.pid) - before
                        result[f"{way}_rate"].append(per * turns / wall)
                        result[f"{way}_cpu"].append(spent / (per * turns) * 1e6)
                        if way == "in":
                            result["setup_ms"].append(setup / turns * 1000)
        finally:
            server.terminate()
            server.wait(timeout=15)
    return result


def spread(values: list[float], form: str) -> str:
    """``median (min-max)`` of the rounds' values."""
    return f"{median(values):{form}} ({min(values):{form}}-{max(values):{form}})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["all", *BACKENDS], default="all")
    parser.add_argument("--rounds", type=int, default=5, help="rounds (medians over them; >= 3)")
    parser.add_argument("--turns", type=int, default=10, help="answers each way per round")
    parser.add_argument("--deltas", type=int, default=1000, help="text deltas per answer")
    parser.add_argument("--postgres-url", default=DEFAULT_POSTGRES_URL)
    args = parser.parse_args()
    backends = list(BACKENDS) if args.backend == "all" else [args.backend]
    if "postgres" in backends and postgres_available(args.postgres_url) is not None:
        print("PostgreSQL does not answer: SQLite only", file=sys.stderr)
        backends.remove("postgres")
    load = os.getloadavg()
    print(f"load average before: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} ({os.cpu_count()} CPUs)")
    print(
        f"{args.rounds} rounds x {args.turns} answers each way, {len(answer(args.deltas))} chunks"
    )
    print("medians over the rounds, (min-max) beside them; ratios are per round, then medians")
    print(
        "| backend | POST /api/chat chunks/s | stream-in chunks/s | ratio (rate) "
        "| /api/chat server CPU µs/chunk | stream-in server CPU µs/chunk | ratio (CPU) "
        "| stream-in setup ms/turn (start + append) "
        "| stream-in, body in one write: chunks/s | its CPU µs/chunk |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|", flush=True)
    for backend in backends:
        with fresh_db(backend, args.postgres_url) as db:
            got = measure(db.url, args.rounds, args.turns, args.deltas)
        rates = [i / c for i, c in zip(got["in_rate"], got["chat_rate"], strict=True)]
        cpus = [i / c for i, c in zip(got["in_cpu"], got["chat_cpu"], strict=True)]
        print(
            f"| {backend} | {spread(got['chat_rate'], ',.0f')} | {spread(got['in_rate'], ',.0f')} "
            f"| {spread(rates, '.2f')} | {spread(got['chat_cpu'], '.0f')} "
            f"| {spread(got['in_cpu'], '.0f')} | {spread(cpus, '.2f')} "
            f"| {spread(got['setup_ms'], '.1f')} | {spread(got['whole_rate'], ',.0f')} "
            f"| {spread(got['whole_cpu'], '.0f')} |",
            flush=True,
        )
    load = os.getloadavg()
    print(f"load average after: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
