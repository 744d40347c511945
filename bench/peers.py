"""chatledger next to its peers, in one run: ms/turn, KB/turn and load p50 on SQLite and PostgreSQL.

Each round writes the same turns (turn by turn across all conversations, so
every conversation is live at once) into a fresh database per store, in a
rotated order so drift hits every store alike, then loads sampled
conversations back on a fresh handle. Reported per store: median ms/turn,
KB/turn and load p50 over the rounds, and the median of the per-round ratios
chatledger / peer (a ratio measured within one round, on the same machine
state). The machine's load average (``os.getloadavg``) is recorded around
every round: on a shared machine absolute figures move, ratios much less.

Peers (optional; each is skipped with a message when its package is missing):
OpenAI Agents SDK ``SQLiteSession`` and ``SQLAlchemySession`` (asyncpg), each
with one ``add_items`` per turn and split the way ``Runner.run`` writes
(input, then each model response); LangGraph ``SqliteSaver`` and
``PostgresSaver`` under a one-node ``MessagesState`` graph.
``pip install -e '.[bench]'`` installs them all.

    python bench/peers.py                       # 3 rounds, 100 conversations x 8 turns, both backends
    python bench/peers.py --backend sqlite --rounds 5 --conversations 50 --turns 20
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import peer_stores as ps
from backends import BACKENDS, DEFAULT_POSTGRES_URL, FreshDb, fresh_db, postgres_available
from progress import log
from size import postgres_size, sqlite_size
from stats import median, percentile
from workload import conversation

Runner = Callable[[FreshDb, ps.WriteOrder, list[str]], ps.Timing]


def _variants() -> list[tuple[str, Runner | None, str | None]]:
    """chatledger with the open deferred, then with issue 16's commit savings taken back one by
    one, for before/after ratios.

    "open with the first batch": ``open_stream(..., commit=False)``, the open (with its user
    message) committed with the stream's first batch (a turn without tools is one
    transaction); "batches of 64": a batch also commits when 64 chunks are buffered (the
    default before batches were committed on age); "message and open apart": that, and ``append_message``
    then ``open_stream`` (two commits); "the old cadence": that, and a commit right after
    every boundary chunk (``settle=0``). The snapshot policy is today's in all of them.
    """
    return [
        (
            "chatledger, open with the first batch",
            lambda db, o, s: ps.run_chatledger(db, o, s, commit_open=False),
            None,
        ),
        (
            "chatledger, batches of 64",
            lambda db, o, s: ps.run_chatledger(db, o, s, batch_chunks=64),
            None,
        ),
        (
            "chatledger, message and open apart",
            lambda db, o, s: ps.run_chatledger(db, o, s, message_with_open=False, batch_chunks=64),
            None,
        ),
        (
            "chatledger, the old cadence",
            lambda db, o, s: ps.run_chatledger(
                db, o, s, settle=0.0, message_with_open=False, batch_chunks=64
            ),
            None,
        ),
    ]


def _stores(backend: str) -> list[tuple[str, Runner | None, str | None]]:
    """(name, runner or None when unavailable, why unavailable) for one backend."""
    agents = ps.missing("agents", "openai-agents")
    if backend == "sqlite":
        lg = ps.missing("langgraph.checkpoint.sqlite", "langgraph langgraph-checkpoint-sqlite")
        return [
            ("chatledger", ps.run_chatledger, None),
            *_variants(),
            (
                "chatledger synchronous=FULL",
                lambda db, o, s: ps.run_chatledger(db, o, s, "?synchronous=full"),
                None,
            ),
            ("SQLiteSession", lambda db, o, s: ps.run_sqlite_session(db, o, s, False), agents),
            (
                "SQLiteSession, split",
                lambda db, o, s: ps.run_sqlite_session(db, o, s, True),
                agents,
            ),
            ("LangGraph SqliteSaver", ps.run_langgraph_sqlite, lg),
        ]
    sqla = (
        agents
        or ps.missing("sqlalchemy.ext.asyncio", "sqlalchemy")
        or ps.missing("asyncpg", "asyncpg")
    )
    lg = ps.missing("langgraph.checkpoint.postgres", "langgraph langgraph-checkpoint-postgres")
    return [
        ("chatledger", ps.run_chatledger, None),
        *_variants(),
        (
            "chatledger synchronous_commit=off",
            lambda db, o, s: ps.run_chatledger(db, o, s, "&synchronous_commit=off"),
            None,
        ),
        ("SQLAlchemySession", lambda db, o, s: ps.run_sqlalchemy_session(db, o, s, False), sqla),
        (
            "SQLAlchemySession, split",
            lambda db, o, s: ps.run_sqlalchemy_session(db, o, s, True),
            sqla,
        ),
        ("LangGraph PostgresSaver", ps.run_langgraph_postgres, lg),
    ]


def _size_kb(db: FreshDb, turns: int) -> float:
    if db.sqlite_path is not None:
        return sqlite_size(db.sqlite_path).file_bytes / 1024 / turns
    assert db.postgres_url is not None and db.schema is not None
    return postgres_size(db.postgres_url, db.schema).file_bytes / 1024 / turns


def run(args: argparse.Namespace) -> dict[str, Any]:
    convs = [conversation(i, args.turns) for i in range(args.conversations)]
    order = [(c.chat_id, c.turns[t]) for t in range(args.turns) for c in convs]
    step = max(1, args.conversations // 10)
    samples = [convs[i].chat_id for i in range(0, args.conversations, step)] * 3
    backends = BACKENDS if args.backend == "all" else (args.backend,)
    result: dict[str, Any] = {
        "started": datetime.now(UTC).isoformat(timespec="seconds"),
        "conversations": args.conversations,
        "turns": args.turns,
        "rounds": [],
        "skipped": {},
    }
    for backend in backends:
        if backend == "postgres" and (why := postgres_available(args.postgres_url)):
            result["skipped"]["postgres"] = why
            log(f"PostgreSQL skipped: {why}")
            continue
        stores = _stores(backend)
        for name, runner, why in stores:
            if runner is None or why:
                result["skipped"][f"{backend}: {name}"] = why
                log(f"{backend}: {name} skipped: {why}")
        present = [(name, runner) for name, runner, why in stores if runner and not why]
        if args.stores:
            wanted = {name.strip() for name in args.stores.split(";")}
            present = [(name, runner) for name, runner in present if name in wanted]
        for _name, runner in present:  # imports and first-use work stay out of the rounds
            assert runner is not None
            with fresh_db(backend, args.postgres_url, name="warm") as db:
                runner(db, order[:2], samples[:1])
        for r in range(args.rounds):
            rotated = present[r % len(present) :] + present[: r % len(present)]
            entry: dict[str, Any] = {"backend": backend, "round": r, "load_before": os.getloadavg()}
            for name, runner in rotated:
                with fresh_db(backend, args.postgres_url, name="peer") as db:
                    assert runner is not None
                    timing = runner(db, order, samples)
                    kb = _size_kb(db, timing.turns)
                ms = timing.seconds * 1000 / timing.turns
                entry[name] = {
                    "ms_turn": ms,
                    "cpu_ms_turn": timing.cpu_seconds * 1000 / timing.turns,
                    "kb_turn": kb,
                    "load_p50": percentile(timing.load_ms, 50),
                    "load_p99": percentile(timing.load_ms, 99),
                }
                cpu_ms = entry[name]["cpu_ms_turn"]
                log(
                    f"{backend} round {r}: {name}: {ms:.2f} ms/turn ({cpu_ms:.2f} CPU), {kb:.2f} KB/turn"
                )
            entry["load_after"] = os.getloadavg()
            result["rounds"].append(entry)
    return result


def _ratio(xs: list[float]) -> str:
    return f"{median(xs):.2f} ({min(xs):.2f}-{max(xs):.2f})"


def _fmt(x: float) -> str:
    return f"{x:.2f}" if x < 100 else f"{x:,.0f}"


def markdown(result: dict[str, Any]) -> str:
    """One table per backend: medians over rounds and median per-round ratios to chatledger."""
    lines = [
        f"Run {result['started']}: {result['conversations']} conversations x {result['turns']} turns"
        " written turn by turn across all conversations.",
        "",
    ]
    for backend in BACKENDS:
        rounds = [e for e in result["rounds"] if e["backend"] == backend]
        if not rounds:
            continue
        names = [k for k in rounds[0] if isinstance(rounds[0][k], dict)]
        loads = ", ".join(f"{e['load_before'][0]:.1f}->{e['load_after'][0]:.1f}" for e in rounds)
        lines += [
            f"**{backend}**, {len(rounds)} rounds (1-min load average before->after each: {loads})",
            "",
            "| store | ms/turn | chatledger / it | CPU ms/turn (this process) | chatledger / it, CPU"
            " | KB/turn | load p50 ms | load p99 ms | load p50, chatledger / it |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for name in names:
            ms = [e[name]["ms_turn"] for e in rounds]
            ratio = [e["chatledger"]["ms_turn"] / e[name]["ms_turn"] for e in rounds]
            cpu = [e[name].get("cpu_ms_turn", 0.0) for e in rounds]
            cpu_ratio = [
                e["chatledger"].get("cpu_ms_turn", 0.0) / e[name]["cpu_ms_turn"]
                for e in rounds
                if e[name].get("cpu_ms_turn")
            ]
            kb = [e[name]["kb_turn"] for e in rounds]
            p50 = [e[name]["load_p50"] for e in rounds]
            p99 = [e[name].get("load_p99", float("nan")) for e in rounds]
            load_ratio = [e["chatledger"]["load_p50"] / e[name]["load_p50"] for e in rounds]
            lines.append(
                f"| {name} | {_fmt(median(ms))} ({_fmt(min(ms))}-{_fmt(max(ms))}) | "
                f"{median(ratio):.2f} | {_fmt(median(cpu))} | "
                f"{median(cpu_ratio) if cpu_ratio else 0:.2f} | {median(kb):.2f} | "
                f"{median(p50):.2f} ({min(p50):.2f}-{max(p50):.2f}) | {median(p99):.2f} | "
                f"{_ratio(load_ratio)} |"
            )
        lines.append("")
    for what, why in result["skipped"].items():
        lines.append(f"- skipped {what}: {why}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--backend", choices=("all", *BACKENDS), default="all")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--conversations", type=int, default=100)
    parser.add_argument("--turns", type=int, default=8)
    parser.add_argument("--postgres-url", default=DEFAULT_POSTGRES_URL)
    parser.add_argument("--json", type=Path, help="also write the raw result here")
    parser.add_argument(
        "--stores", help="only these stores (names as in the tables, separated by ';')"
    )
    args = parser.parse_args(argv)
    started = time.perf_counter()
    result = run(args)
    result["seconds"] = time.perf_counter() - started
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    print(markdown(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
