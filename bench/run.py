"""Run the chatledger benchmarks: ingest, size, load and crash, on SQLite and/or PostgreSQL.

Progress goes to stderr; the results table to stdout; the full results to
bench/results/<timestamp>.json. See bench/README.md for how to read them.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
import os
import platform
import sqlite3
import subprocess
import sys
import tempfile
import traceback
from collections.abc import Callable
from contextlib import AbstractContextManager, suppress
from functools import partial
from importlib import metadata
from pathlib import Path
from typing import Any

import psycopg
from backends import BACKENDS, DEFAULT_POSTGRES_URL, Backend, FreshDb, fresh_db, postgres_available
from baseline import CADENCES, ingest_raw_postgres, ingest_raw_sqlite
from crash import measure_crash
from ingest import IngestResult, ingest_store
from load import measure_load
from progress import log
from report import Doc, render_all
from size import SizeResult, postgres_size, sqlite_size
from storeapi import DEFAULT_STORE, StoreOpener, load_opener
from verify import check_store
from workload import (
    EXPECTED_FINGERPRINT,
    Conversation,
    WorkloadSpec,
    conversation,
    fingerprint,
    long_conversation,
)

MEASUREMENTS = ("ingest", "size", "load", "crash")
RESULTS_DIR = Path(__file__).with_name("results")
LONG_CHUNKS = 20_000


def _args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python bench/run.py",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--backend",
        choices=[*BACKENDS, "all"],
        default="all",
        help="which database(s) to measure (default: all)",
    )
    p.add_argument(
        "--runs", type=int, default=5, help="ingest runs per backend, and crash trials (default: 5)"
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="smoke run: 1 run, 10 conversations, fewer load calls and one crash trial",
    )
    p.add_argument(
        "--only",
        default=",".join(MEASUREMENTS),
        help="comma-separated subset of: " + ", ".join(MEASUREMENTS),
    )
    p.add_argument(
        "--raw-only", action="store_true", help="measure only the raw baselines (no store needed)"
    )
    p.add_argument("--markdown", action="store_true", help="print the tables as Markdown")
    p.add_argument(
        "--from-json",
        type=Path,
        metavar="FILE",
        help="measure nothing: re-print the tables of an earlier results file",
    )
    p.add_argument("--conversations", type=int, help="override the workload size (default: 100)")
    p.add_argument("--turns", type=int, default=20, help="turns per conversation (default: 20)")
    p.add_argument("--seed", type=int, default=WorkloadSpec().seed, help="workload seed")
    p.add_argument(
        "--postgres-url",
        default=DEFAULT_POSTGRES_URL,
        help="PostgreSQL to use (env CHATLEDGER_BENCH_POSTGRES_URL; default %(default)s)",
    )
    p.add_argument(
        "--store", default=DEFAULT_STORE, help="store class as module:attr (default: %(default)s)"
    )
    p.add_argument(
        "--kills",
        type=int,
        help="crash trials (SIGKILLs) per backend; >= 30 gives a meaningful p99 (default: --runs)",
    )
    p.add_argument(
        "--crash-before",
        type=Path,
        metavar="DIR",
        help=(
            "also kill a writer running the source tree DIR (git archive of the baseline) at "
            "each trial, alternating with the installed one, reported as '<backend> before'"
        ),
    )
    p.add_argument(
        "--crash-pace-ms",
        type=float,
        default=1.0,
        help="crash child: one chunk every N ms (default: 1)",
    )
    p.add_argument(
        "--raw-sqlite-synchronous",
        default="NORMAL",
        choices=["FULL", "NORMAL"],
        help=(
            "PRAGMA synchronous for the raw SQLite baseline "
            "(default: NORMAL, as the store; FULL matches a store URL with ?synchronous=full)"
        ),
    )
    p.add_argument("--results-dir", type=Path, default=RESULTS_DIR, help="where to write JSON")
    args = p.parse_args(argv)
    if args.runs < 1:
        p.error("--runs must be at least 1")
    args.only = [m.strip() for m in args.only.split(",") if m.strip()]
    if unknown := set(args.only) - set(MEASUREMENTS):
        p.error(f"unknown measurement(s): {', '.join(sorted(unknown))}")
    if args.kills is not None and args.kills < 1:
        p.error("--kills must be at least 1")
    if args.quick:
        args.runs = 1
        args.conversations = args.conversations or 10
    args.conversations = args.conversations or 100
    return args


def _versions(pg_url: str | None) -> dict[str, str]:
    found = {"python": platform.python_version(), "sqlite": sqlite3.sqlite_version}
    for dist in ("chatledger", "eventsourcing", "psycopg", "psycopg-binary"):
        with suppress(metadata.PackageNotFoundError):
            found[dist] = metadata.version(dist)
    if pg_url:
        with suppress(psycopg.Error), psycopg.connect(pg_url) as conn:
            row = conn.execute("SHOW server_version").fetchone()
            found["postgresql"] = str(row[0]).split()[0] if row else "?"
    return found


def _git() -> str:
    root = Path(__file__).resolve().parent.parent
    try:
        head = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "no git"
    return f"{head}{' + uncommitted changes' if dirty else ''}"


def _meta(args: argparse.Namespace, spec: WorkloadSpec, backends: list[Backend]) -> Doc:
    log("fingerprinting the workload")
    digest = fingerprint(spec.generate())
    full = (spec.conversations, spec.turns, spec.seed) == (100, 20, WorkloadSpec().seed)
    if full and digest != EXPECTED_FINGERPRINT:
        log("warning: the workload differs from the reference one; figures are not comparable")
    return {
        "timestamp": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "git": _git(),
        "cpus": os.cpu_count(),
        "platform": platform.platform(terse=True),
        "versions": _versions(args.postgres_url if "postgres" in backends else None),
        "runs": args.runs,
        "backends": backends,
        "measurements": args.only,
        "store": args.store,
        "raw_sqlite_synchronous": args.raw_sqlite_synchronous,
        "workload": {
            "conversations": spec.conversations,
            "turns": spec.turns,
            "seed": spec.seed,
            "chunks": spec.chunk_count,
            "fingerprint": digest,
            "fingerprint_matches": digest == EXPECTED_FINGERPRINT if full else None,
        },
    }


class Runner:
    """Runs the selected measurements and collects everything into one results document."""

    def __init__(self, args: argparse.Namespace, spec: WorkloadSpec, opener: StoreOpener | None):
        self.args, self.spec, self.opener = args, spec, opener
        self.doc: Doc = {"errors": []}
        self._before: str | None = None
        self.points: dict[str, list[list[int]]] = {}
        """The last store run's commit points per backend (the raw "store cadence" replays them)."""

    def guard(self, what: str, fn: Callable[[], None]) -> None:
        """Run one measurement; record (and print) an exception instead of stopping the run."""
        try:
            fn()
        except Exception as exc:
            log(f"ERROR in {what}: {exc!r}")
            traceback.print_exc(file=sys.stderr)
            self.doc["errors"].append({"what": what, "error": f"{type(exc).__name__}: {exc}"})

    def add(self, section: str, backend: str, key: str | None, value: Any) -> None:
        """Append one result under ``doc[section][backend][key]`` (or ``[backend]``)."""
        slot = self.doc.setdefault(section, {}).setdefault(backend, {} if key else [])
        (slot.setdefault(key, []) if key else slot).append(value)

    def db(self, backend: Backend, name: str = "store") -> AbstractContextManager[FreshDb]:
        """A fresh database context manager for ``backend``."""
        return fresh_db(backend, self.args.postgres_url, name)

    def size_of(self, db: FreshDb) -> SizeResult:
        """Bytes on disk of a database written and closed."""
        if db.sqlite_path is not None:
            return sqlite_size(db.sqlite_path)
        assert db.postgres_url and db.schema
        return postgres_size(db.postgres_url, db.schema)

    def store_run(self, backend: Backend, first: bool) -> None:
        """One timed ingest through the store, then its size, then (first run) the load timings."""
        assert self.opener is not None
        with self.db(backend) as db:
            log(f"{backend}: store ingest")
            res = ingest_store(self.opener, db.url, self.spec.generate())
            self.points[backend] = res.points
            log(
                f"{backend}: store {res.chunks_per_s:,.0f} chunks/s, "
                f"{res.commits / max(res.turns, 1):.2f} commits/turn"
            )
            self.add("ingest", backend, "store", _asdict(res))
            if "size" in self.args.only:
                self.add(
                    "size", backend, "store", {**_asdict(self.size_of(db)), "turns": res.turns}
                )
            # Refused chunks are returned, not raised: check what was stored before trusting it.
            last = self.spec.conversations - 1
            probe = [conversation(i, self.spec.turns, self.spec.seed) for i in {0, last}]
            if found := check_store(self.opener, db.url, probe):
                raise AssertionError(f"stored messages differ from the workload: {found}")
            if first and "load" in self.args.only:
                self.guard(f"{backend} load", lambda: self.load_run(backend, db.url))

    def raw_run(self, backend: Backend) -> None:
        """One raw-baseline ingest per commit cadence, each into a fresh database."""
        for cadence in CADENCES:
            with self.db(backend, "raw") as db:
                log(f"{backend}: raw baseline, commit per {cadence}")
                convs = self.spec.generate()
                points = self.points.get(backend) if cadence == "store" else None
                if db.sqlite_path is not None:
                    sync = self.args.raw_sqlite_synchronous
                    res = ingest_raw_sqlite(db.sqlite_path, convs, cadence, sync, points)
                else:
                    assert db.postgres_url and db.schema
                    res = ingest_raw_postgres(db.postgres_url, db.schema, convs, cadence, points)
                log(f"{backend}: raw/{cadence} {res.chunks_per_s:,.0f} chunks/s")
                self.add("ingest", backend, f"raw_{cadence}", _asdict(res))
                if cadence == "turn" and "size" in self.args.only:
                    self.add(
                        "size", backend, "raw", {**_asdict(self.size_of(db)), "turns": res.turns}
                    )

    def load_run(self, backend: Backend, url: str) -> None:
        """``messages()`` timings on the ingested workload, then on one ~20,000-chunk chat."""
        n, quick = self.spec.conversations, self.args.quick
        step = max(1, n // 10)
        sample = [conversation(i, self.spec.turns, self.spec.seed) for i in range(0, n, step)]
        log(f"{backend}: load, {len(sample[:10])} chats of {self.spec.turns} turns")
        self.load_one(backend, url, sample[:10], "workload chat", (10, 50) if quick else (30, 200))
        long = long_conversation(LONG_CHUNKS, self.spec.seed)
        with self.db(backend, "long") as db:
            log(f"{backend}: load, one chat of {long.chunk_count:,} chunks (writing it first)")
            assert self.opener is not None
            ingest_store(self.opener, db.url, [long])
            label = f"{LONG_CHUNKS:,}-chunk chat"
            self.load_one(backend, db.url, [long], label, (3, 10) if quick else (10, 50))

    def load_one(
        self,
        backend: Backend,
        url: str,
        convs: list[Conversation],
        label: str,
        calls: tuple[int, int],
    ) -> None:
        """One load measurement: ``calls`` = (fresh calls, warm calls)."""
        assert self.opener is not None
        fresh, warm = calls
        res = measure_load(self.opener, url, convs, label=label, fresh_calls=fresh, warm_calls=warm)
        self.add("load", backend, None, _asdict(res))

    @property
    def before(self) -> str | None:
        """The baseline tree laid out as an importable ``chatledger`` (``--crash-before``)."""
        if self.args.crash_before is None:
            return None
        if self._before is None:
            from installs import _layout

            into = Path(tempfile.mkdtemp(prefix="chatledger-crash-before-"))
            self._before = str(_layout(self.args.crash_before.resolve(), into))
        return self._before

    def crash_runs(self, backend: Backend) -> None:
        """``kills`` (default ``runs``) kills at different points of the stream, each on a
        fresh database."""
        assert self.opener is not None
        kills = self.args.kills or self.args.runs
        for trial in range(kills):
            # Varied (97 is prime to any batch size), so the kill lands at different batch phases.
            kill_after = 300 + 97 * (trial % 29) + trial // 29
            trees: list[tuple[str, str | None]] = [(backend, None)]
            if self.before is not None:
                trees.append((f"{backend} before", self.before))
            for label, src in trees if trial % 2 == 0 else trees[::-1]:
                with self.db(backend, "crash") as db:
                    log(f"{label}: crash trial {trial + 1}/{kills}, kill after {kill_after} chunks")
                    res = measure_crash(
                        self.opener,
                        self.args.store,
                        db.url,
                        kill_after=kill_after,
                        pace_ms=self.args.crash_pace_ms,
                        seed=self.spec.seed,
                        src=src,
                    )
                    log(
                        f"{label}: sent {res.chunks_sent}, surviving {res.chunks_surviving}, "
                        f"lost window {res.lost_window_ms} ms, {res.batches_per_s} commits/s"
                    )
                    self.add("crash", label, None, {**_asdict(res), "load": os.getloadavg()[0]})

    def backend(self, backend: Backend) -> None:
        """Every selected measurement on one backend."""
        only = self.args.only
        if {"ingest", "size", "load"} & set(only):
            runs = self.args.runs if "ingest" in only else 1
            for r in range(runs):
                log(f"{backend}: run {r + 1}/{runs}")
                steps: list[Callable[[], None]] = []
                if self.opener is not None:
                    steps.append(partial(self.store_run, backend, r == 0))
                if {"ingest", "size"} & set(only):  # load alone needs no baselines
                    steps.append(partial(self.raw_run, backend))
                # Alternate the order so slow drift (checkpoints, autovacuum) hits both sides.
                for step in steps if r % 2 == 0 else steps[::-1]:
                    self.guard(f"{backend} ingest run {r + 1}", step)
        if "crash" in only and self.opener is not None:
            self.guard(f"{backend} crash", lambda: self.crash_runs(backend))


def _asdict(obj: Any) -> Doc:
    out = dataclasses.asdict(obj)
    if isinstance(obj, IngestResult):
        out["chunks_per_s"] = obj.chunks_per_s
        out.pop("points", None)  # thousands of lists; the commit count says enough
    return out


def _backends(args: argparse.Namespace) -> list[Backend]:
    wanted: list[Backend] = list(BACKENDS) if args.backend == "all" else [args.backend]
    if "postgres" in wanted and (why := postgres_available(args.postgres_url)):
        if args.backend == "postgres":
            sys.exit(f"PostgreSQL at {args.postgres_url} is not reachable: {why}")
        log(f"warning: skipping PostgreSQL ({why})")
        wanted.remove("postgres")
    return wanted


def _opener(spec: str) -> StoreOpener | None:
    try:
        return load_opener(spec)
    except (ImportError, AttributeError) as exc:
        log(f"warning: cannot load the store {spec} ({exc}); measuring the raw baselines only")
        return None


def main(argv: list[str] | None = None) -> int:
    """Entry point: measure (or re-render ``--from-json``), save JSON, print the tables."""
    args = _args(argv)
    if args.from_json:
        print(render_all(json.loads(args.from_json.read_text()), args.markdown), end="")
        return 0
    spec = WorkloadSpec(args.conversations, args.turns, args.seed)
    backends = _backends(args)
    opener = None if args.raw_only else _opener(args.store)
    runner = Runner(args, spec, opener)
    runner.doc = doc = {"meta": _meta(args, spec, backends), **runner.doc}
    if opener is None and not args.raw_only:
        doc["errors"].append({"what": "store", "error": f"cannot import {args.store}"})
    for backend in backends:
        runner.backend(backend)
    args.results_dir.mkdir(parents=True, exist_ok=True)
    out = args.results_dir / (doc["meta"]["timestamp"].replace(":", "").replace("-", "") + ".json")
    out.write_text(json.dumps(doc, indent=1) + "\n")
    log(f"results written to {out}")
    print(render_all(doc, args.markdown), end="")
    return 1 if doc["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
