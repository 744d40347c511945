"""Turns a results document (what run.py writes as JSON) into tables, plain or Markdown.

Everything is computed from the JSON alone, so ``run.py --from-json FILE``
re-renders an old run exactly.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from stats import median, median_range, percentile
from targets import (
    CRASH_LOST_MS,
    INGEST_CHUNKS_PER_S,
    LOAD_MS,
    LOAD_PEERS_MS,
    SIZE_BYTES_PER_TURN,
    SIZE_PEERS_KB_PER_TURN,
)

Doc = dict[str, Any]
Table = tuple[str, list[str], list[list[str]]]
KB = 1024


def _yes(ok: bool | None) -> str:
    return "-" if ok is None else ("yes" if ok else "**no**")


def _ratio(a: float, b: float) -> str:
    return "-" if not (a and b) or math.isnan(a) or math.isnan(b) else f"{a / b:.2f}"


def _rates(runs: list[Doc]) -> list[float]:
    return [r["chunks"] / r["seconds"] for r in runs if r["seconds"]]


def ingest_table(doc: Doc) -> Table:
    """Chunks/s of the store and the raw baselines, median (min-max) over runs."""
    rows = []
    for backend, res in doc.get("ingest", {}).items():
        store, turn, cadence = (_rates(res.get(k, [])) for k in ("store", "raw_turn", "raw_store"))
        target = INGEST_CHUNKS_PER_S[backend]
        rows.append(
            [
                backend,
                median_range(store),
                median_range(turn),
                _ratio(median(store), median(turn)),
                median_range(cadence),
                _ratio(median(store), median(cadence)),
                f"≥ {target:,}",
                _yes(median(store) >= target if store else None),
            ]
        )
    headers = [
        "backend",
        "store chunks/s",
        "raw, txn/turn",
        "store/raw",
        "raw, store cadence",
        "store/raw",
        "target",
        "meets",
    ]
    return "Ingest (chunks/s, median (min-max))", headers, rows


def _per_turn(runs: list[Doc], key: str) -> list[float]:
    return [r[key] / r["turns"] / KB for r in runs if r.get("turns")]


def size_table(doc: Doc) -> Table:
    """KB per turn on disk after ingest, store and raw rows side by side."""
    rows = []
    for backend, res in doc.get("size", {}).items():
        store = res.get("store", [])
        files = _per_turn(store, "file_bytes")
        target = SIZE_BYTES_PER_TURN.get(backend)
        rows.append(
            [
                backend,
                median_range(files, "{:.2f}"),
                median_range(_per_turn(store, "live_bytes"), "{:.2f}"),
                median_range(_per_turn(res.get("raw", []), "file_bytes"), "{:.2f}"),
                f"≤ {target / KB:.0f}" if target else "-",
                _yes(median(files) <= target / KB if target and files else None),
            ]
        )
    rows += [
        [f"peer: {name}", value, "-", "-", "-", "(published)"]
        for name, value in SIZE_PEERS_KB_PER_TURN
    ]
    headers = [
        "backend",
        "store KB/turn (file+WAL)",
        "store KB/turn (live pages)",
        "raw KB/turn",
        "target KB",
        "meets",
    ]
    return "Size on disk (KB = 1,024 bytes; PostgreSQL: heap+TOAST+indexes)", headers, rows


def _ms(values: Sequence[float], q: float) -> str:
    return f"{percentile(values, q):.2f}" if values else "-"


def load_table(doc: Doc) -> Table:
    """``messages()`` latency percentiles, fresh store and warm store."""
    rows = []
    for backend, results in doc.get("load", {}).items():
        for r in results:
            fresh, warm = r["fresh_ms"], r["warm_ms"]
            meets = (percentile(fresh, 50) <= LOAD_MS, percentile(warm, 50) <= LOAD_MS)
            rows.append(
                [
                    backend,
                    f"{r['label']} ({r['turns']} turns)",
                    f"{r['chunks']:,}",
                    _ms(fresh, 50),
                    _ms(fresh, 90),
                    _ms(warm, 50),
                    _ms(warm, 90),
                    _ms(r["open_ms"], 50),
                    f"fresh {_yes(meets[0])}, warm {_yes(meets[1])}",
                    "ok" if not r["problems"] else "; ".join(r["problems"][:2]),
                ]
            )
    rows += [
        [f"peer: {name}", "20 turns", "-", value, "-", "-", "-", "-", "(published)", "-"]
        for name, value in LOAD_PEERS_MS
    ]
    headers = [
        "backend",
        "conversation",
        "chunk events",
        "fresh p50",
        "fresh p90",
        "warm p50",
        "warm p90",
        "open p50",
        f"p50 ≤ {LOAD_MS:g} ms",
        "check",
    ]
    return "Load: store.messages(chat_id) in ms", headers, rows


def crash_table(doc: Doc) -> Table:
    """One row per kill: what was sent, what survived, and how much time was lost."""
    rows = []
    for backend, trials in doc.get("crash", {}).items():
        for t in trials:
            lost = _window(t)
            ok = (
                t["load_error"] is None
                and t["user_message_survived"]
                and t["earlier_turns_survived"]
                and lost is not None
                and lost <= CRASH_LOST_MS
            )
            rows.append(
                [
                    backend,
                    str(t["kill_after"]),
                    str(t["chunks_sent"]),
                    str(t["chunks_surviving"]),
                    str(t["chunks_sent"] - t["chunks_surviving"]),
                    "-" if lost is None else f"{lost:.1f}",
                    _yes(t["user_message_survived"]),
                    _yes(t["earlier_turns_survived"]),
                    _yes(t["assistant_message_present"]),
                    t["load_error"] or "ok",
                    _yes(ok),
                    "; ".join(t["notes"]) or "",
                ]
            )
    headers = [
        "backend",
        "kill after",
        "sent",
        "surviving",
        "lost chunks",
        "lost window ms",
        "user msg",
        "earlier turns",
        "partial reply",
        "load",
        f"≤ {CRASH_LOST_MS:g} ms",
        "notes",
    ]
    return "Crash: SIGKILL mid-stream, then load in a new process", headers, rows


def _window(t: Doc) -> float | None:
    """The lost window of one trial: the oldest lost chunk's age at the kill (older results:
    the span from the last surviving to the last sent chunk)."""
    value = t.get("lost_window_ms", t["lost_ms"])
    return None if value is None else float(value)


def crash_summary_table(doc: Doc) -> Table:
    """Per backend: the lost window over all kills, median, p99 and max."""
    rows = []
    for backend, trials in doc.get("crash", {}).items():
        windows = [w for t in trials if (w := _window(t)) is not None]
        rows.append(
            [
                backend,
                str(len(trials)),
                str(len(windows)),
                _ms(windows, 50),
                _ms(windows, 99),
                "-" if not windows else f"{max(windows):.1f}",
                str(sum(w <= CRASH_LOST_MS for w in windows)),
                median_range([r for t in trials if (r := t.get("batches_per_s")) is not None]),
                median_range([x for t in trials if (x := t.get("load")) is not None], "{:.2f}"),
            ]
        )
    headers = [
        "backend",
        "kills",
        "measured",
        "lost window p50 ms",
        "p99 ms",
        "max ms",
        f"≤ {CRASH_LOST_MS:g} ms",
        "commits/s of the stream",
        "load (1 min)",
    ]
    title = "Crash window: age at the kill of the oldest chunk lost"
    return title, headers, rows


def errors_table(doc: Doc) -> Table:
    """Measurements that failed with an exception (the run went on without them)."""
    return (
        "Errors",
        ["measurement", "error"],
        [[e["what"], e["error"]] for e in doc.get("errors", [])],
    )


def render(title: str, headers: list[str], rows: list[list[str]], markdown: bool) -> str:
    """One table as Markdown or as aligned plain text."""
    rows = [[" ".join(cell.split()) for cell in row] for row in rows]  # one line per row
    if markdown:
        rows = [[cell.replace("|", "\\|") for cell in row] for row in rows]
        lines = [
            f"### {title}",
            "",
            "| " + " | ".join(headers) + " |",
            "|" + "|".join("---" for _ in headers) + "|",
        ]
        lines += ["| " + " | ".join(row) + " |" for row in rows]
        return "\n".join(lines)
    cells = [[h.replace("**", "") for h in headers]] + [
        [c.replace("**", "") for c in r] for r in rows
    ]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    out = [title, "=" * len(title)]
    for n, row in enumerate(cells):
        out.append("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
        if n == 0:
            out.append("  ".join("-" * w for w in widths))
    return "\n".join(out)


def summary(doc: Doc) -> str:
    """A one-paragraph description of the machine, versions and workload."""
    m = doc["meta"]
    w = m["workload"]
    versions = ", ".join(f"{k} {v}" for k, v in m["versions"].items())
    match = {True: "matches", False: "DIFFERS from the reference", None: "not the reference"}[
        w["fingerprint_matches"]
    ]
    return (
        f"Run {m['timestamp']} ({m['git']}), {m['cpus']} CPUs, {m['platform']}; {versions}. "
        f"Workload: {w['conversations']} conversations x {w['turns']} turns, seed {w['seed']}, "
        f"{w['chunks']:,} chunks; fingerprint {w['fingerprint'][:12]} ({match}). "
        f"Runs: {m['runs']}. Raw SQLite baseline: WAL, "
        f"synchronous={m.get('raw_sqlite_synchronous', 'FULL')}."
    )


def render_all(doc: Doc, markdown: bool) -> str:
    """Every table that has rows, preceded by the run summary."""
    tables = [
        ingest_table(doc),
        size_table(doc),
        load_table(doc),
        crash_table(doc),
        crash_summary_table(doc),
        errors_table(doc),
    ]
    parts = [summary(doc)]
    for title, headers, rows in tables:
        if any(not row[0].startswith("peer:") for row in rows):
            parts.append(render(title, headers, rows, markdown))
    return "\n\n".join(parts) + "\n"
