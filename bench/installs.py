"""Two (or more) chatledger source trees side by side, in the same run: ms/turn before and after a change.

Each tree is a checkout of the repository (``git archive COMMIT | tar -x -C DIR``
makes one without touching any work tree). Every measurement runs in a fresh
process that imports chatledger from that tree (the editable install is set
aside), writes the peers' workload (``peers.py``: turn by turn across all
conversations, the store's defaults) into a fresh database, and reports
ms/turn and its own CPU ms/turn; the order of the trees rotates each round.
``peer`` adds the best per-turn peer of the backend (OpenAI Agents
``SQLiteSession`` / ``SQLAlchemySession``). Reported: medians over rounds and
the per-round ratios of every entry to the first one, and to the peer; then
the same for loads (every tenth conversation read three times on a fresh
handle after the writes: ``messages()``, or the peer's ``get_items``), p50
and p99.

    git archive 0fe99f3 | (mkdir -p /tmp/before && tar -x -C /tmp/before)
    python bench/installs.py --backend sqlite --rounds 5 before=/tmp/before after=. peer
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from stats import median, percentile

PACKAGES = ("adapters", "domain", "projections")
"""The directories installed as ``chatledger.<name>`` (see pyproject's package-dir)."""


def _layout(tree: Path, into: Path) -> Path:
    """An importable ``chatledger`` package made of symlinks into ``tree`` (returns its parent)."""
    package = into / "chatledger"
    package.mkdir(parents=True)
    for item in (tree / "chatledger").iterdir():
        (package / item.name).symlink_to(item.resolve())
    for name in PACKAGES:
        (package / name).symlink_to((tree / name).resolve())
    return into


def _child(args: argparse.Namespace) -> int:
    if args.src:
        sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f).lower()]
        sys.path.insert(0, args.src)
    import peer_stores as ps
    from backends import fresh_db
    from workload import conversation

    convs = [conversation(i, args.turns) for i in range(args.conversations)]
    order = [(c.chat_id, c.turns[t]) for t in range(args.turns) for c in convs]

    step = max(1, args.conversations // 10)
    samples = [convs[i].chat_id for i in range(0, args.conversations, step)] * 3

    def run(part: ps.WriteOrder, loads: list[str]) -> ps.Timing:
        with fresh_db(args.backend, args.postgres_url, name="installs") as db:
            if args.peer:
                if args.backend == "sqlite":
                    return ps.run_sqlite_session(db, part, loads, False)
                return ps.run_sqlalchemy_session(db, part, loads, False)
            return ps.run_chatledger(db, part, loads)

    run(order[:4], [order[0][0]])  # imports and first use stay out of the measurement
    timing = run(order, samples)
    import importlib

    # by import path, like storeapi: mypy does not see the editable install
    codec: Any = importlib.import_module("chatledger.adapters.persistence.codec")
    print(
        json.dumps(
            {
                "ms": timing.seconds * 1000 / timing.turns,
                "cpu": timing.cpu_seconds * 1000 / timing.turns,
                "load": os.getloadavg()[0],
                "load_p50": percentile(timing.load_ms, 50),
                "load_p99": percentile(timing.load_ms, 99),
                "imported": str(Path(codec.__file__).resolve().parents[2]),
            }
        )
    )
    return 0


def _measure(args: argparse.Namespace, src: str | None, peer: bool) -> dict[str, Any]:
    command = [sys.executable, __file__, "--child", "--backend", args.backend]
    command += ["--conversations", str(args.conversations), "--turns", str(args.turns)]
    command += ["--postgres-url", args.postgres_url]
    command += ["--src", src] if src else []
    command += ["--peer"] if peer else []
    out = subprocess.run(command, capture_output=True, text=True, check=False)
    lines = [line for line in out.stdout.splitlines() if line.startswith("{")]
    if out.returncode or not lines:
        raise SystemExit(f"measurement failed:\n{out.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(lines[-1])
    return result


def _ratio(xs: list[float]) -> str:
    return f"{median(xs):.2f} ({min(xs):.2f}-{max(xs):.2f})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("entries", nargs="*", help="NAME=SOURCE_TREE ..., and 'peer'")
    parser.add_argument("--backend", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--conversations", type=int, default=100)
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--postgres-url", default="postgresql://root@127.0.0.1:5432/test")
    parser.add_argument("--json", type=Path, help="also write the raw result here")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--src", help=argparse.SUPPRESS)
    parser.add_argument("--peer", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return _child(args)
    entries = [entry.split("=", 1) if "=" in entry else [entry, ""] for entry in args.entries]
    if len(entries) < 2:
        parser.error("give at least two entries (NAME=SOURCE_TREE or peer)")
    results: dict[str, list[dict[str, Any]]] = {name: [] for name, _ in entries}
    with tempfile.TemporaryDirectory(prefix="chatledger-installs-") as tmp:
        sources = {
            name: str(_layout(Path(tree), Path(tmp) / name)) if tree else None
            for name, tree in entries
        }
        for r in range(args.rounds):
            rotated = entries[r % len(entries) :] + entries[: r % len(entries)]
            for name, _tree in rotated:
                results[name].append(_measure(args, sources[name], name == "peer"))
            print(
                f"round {r}: "
                + ", ".join(
                    f"{n} {v[-1]['ms']:.2f} ms ({v[-1]['cpu']:.2f} CPU, load {v[-1]['load']:.1f})"
                    for n, v in results.items()
                ),
                file=sys.stderr,
                flush=True,
            )
    first = entries[0][0]
    print(
        f"{args.backend}, {args.conversations} conversations x {args.turns} turns, {args.rounds}"
        " rounds; ratios per round, then median (min-max)\n"
    )
    print(f"| entry | ms/turn | CPU ms/turn | / {first} | / {first}, CPU | / peer | / peer, CPU |")
    print("|---|---|---|---|---|---|---|")
    for name, _ in entries:
        rows = results[name]
        ms, cpu = [x["ms"] for x in rows], [x["cpu"] for x in rows]
        cells = [
            f"{median(ms):.2f} ({min(ms):.2f}-{max(ms):.2f})",
            f"{median(cpu):.2f} ({min(cpu):.2f}-{max(cpu):.2f})",
        ]
        for other in (first, "peer"):
            if other in results:
                base = results[other]
                cells.append(_ratio([a["ms"] / b["ms"] for a, b in zip(rows, base, strict=True)]))
                cells.append(_ratio([a["cpu"] / b["cpu"] for a, b in zip(rows, base, strict=True)]))
            else:
                cells += ["-", "-"]
        print(f"| {name} | " + " | ".join(cells) + " |")
    print(
        f"\nLoad (each of {min(args.conversations, 10)} conversations read 3 times on a fresh"
        " handle after the writes): ms, median (min-max) over rounds, and ratios per round\n"
    )
    print(f"| entry | load p50 ms | load p99 ms | p50 / {first} | p50 / peer |")
    print("|---|---|---|---|---|")
    for name, _ in entries:
        rows = results[name]
        p50, p99 = [x["load_p50"] for x in rows], [x["load_p99"] for x in rows]
        cells = [
            f"{median(p50):.3f} ({min(p50):.3f}-{max(p50):.3f})",
            f"{median(p99):.3f} ({min(p99):.3f}-{max(p99):.3f})",
        ]
        for other in (first, "peer"):
            if other in results:
                base = results[other]
                cells.append(
                    _ratio([a["load_p50"] / b["load_p50"] for a, b in zip(rows, base, strict=True)])
                )
            else:
                cells.append("-")
        print(f"| {name} | " + " | ".join(cells) + " |")
    loads = [x["load"] for rows in results.values() for x in rows]
    print(f"\n1-minute load average at the measurements: {min(loads):.1f}-{max(loads):.1f}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
