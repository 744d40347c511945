"""Benchmark the read models and the converter (issue 4): rebuild throughput, messages() from the
read model at 1k / 20k / 100k events, and converting a 200-message conversation.

Each figure comes with a baseline measured in the same run:

- rebuild: reading and decoding the same notifications without projecting them (the floor);
- messages(): rebuilding the conversation from the log (snapshot + events after it), which is
  what reads did before the read model; the read model's p50 should stay flat as events grow;
- converter: a JSON round trip of the same messages (``json.loads(json.dumps(...))``).

Run: ``python bench/projections.py [--backend sqlite|postgres|all] [--quick] [--markdown]``.
Progress goes to stderr, the tables to stdout. Nothing here is a pass/fail test.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from backends import DEFAULT_POSTGRES_URL, fresh_db, postgres_available
from ingest import write_conversation
from progress import log
from stats import median, percentile
from workload import conversation

from chatledger import ConversationStore
from chatledger.domain.aggregate import conversation_id
from chatledger.domain.convert import FORMATS, to_model_messages
from chatledger.domain.limits import Limits

EVENT_SIZES = (1_000, 20_000, 100_000)


@contextmanager
def _store(backend: str, pg_url: str) -> Iterator[ConversationStore]:
    with fresh_db(backend, pg_url) as db:
        store = ConversationStore.open(db.url)
        try:
            yield store
        finally:
            store.close()


def _timed(fn: Callable[[], Any]) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


# -- rebuild ----------------------------------------------------------------------------------


def measure_rebuild(store: ConversationStore, conversations: int, turns: int) -> dict[str, Any]:
    """Write the workload, then time a full rebuild against a plain read of the same log."""
    chunks = 0
    for index in range(conversations):
        conv = conversation(index, turns)
        chunks += conv.chunk_count
        write_conversation(store, conv)
    log_ = store.log
    events = len(log_.recorder.select_notifications(start=1, limit=10_000_000))

    def read_only() -> None:
        position = 0
        while True:
            page = log_.recorder.select_notifications(
                start=position, limit=500, inclusive_of_start=False
            )
            if not page:
                return
            for notification in page:
                log_.mapper.to_domain_event(notification)
            position = page[-1].id

    read_seconds = _timed(read_only)
    rebuild_seconds = _timed(store.operations.rebuild)
    return {
        "events": events,
        "chunks": chunks,
        "rebuild_s": rebuild_seconds,
        "rebuild_chunks_per_s": chunks / rebuild_seconds,
        "rebuild_events_per_s": events / rebuild_seconds,
        "read_s": read_seconds,
        "read_events_per_s": events / read_seconds,
    }


# -- messages() at 1k / 20k / 100k events ------------------------------------------------------


def write_events(store: ConversationStore, chat: str, target: int) -> int:
    """A conversation of about ``target`` events: turns whose every chunk is its own event.

    Written through the aggregate, many events per transaction, to keep the set-up short; the
    events are exactly those a store with ``batch_chunks=1`` records.
    """
    store.start_conversation(chat, actor="user:bench")
    limits = Limits()
    turn = 0
    while True:
        conv = store.conversation(chat)
        if conv.version >= target:
            return conv.version
        source = conversation(turn % 50, turn // 50 + 1).turns[-1]
        user = dict(source.user_message, id=f"u{turn}")
        conv.append_message(user, actor="user:bench", limits=limits)
        stream = f"s{turn}"
        conv.open_stream(
            stream, f"a{turn}", continuation=False, trigger="submit-message", actor="agent:bench"
        )
        for chunk in source.chunks:
            if chunk.get("type") == "start":
                chunk = {**chunk, "messageId": f"a{turn}"}
            conv.receive(stream, chunk, limits=limits)
            conv.flush()
        conv.close_stream(stream, "finished", None, actor="agent:bench")
        store.log.record(conv, snapshot=True)
        turn += 1


def measure_messages(
    store: ConversationStore, sizes: tuple[int, ...], calls: int
) -> list[dict[str, Any]]:
    """p50 of messages() from the read model, and of a rebuild from the log, per conversation size."""
    rows = []
    for size in sizes:
        chat = f"long-{size}"
        log(f"  writing a conversation of {size:,} events")
        events = write_events(store, chat, size)
        store.operations.catch_up()
        key = conversation_id(store.tenant, chat)
        raw = store.read_models.conversation(key)
        assert raw is not None
        read = partial(store.messages, chat)
        load = partial(store.log.load, key, store.tenant, chat)

        def uncached(chat: str = chat) -> None:
            store.operations.forget_cached()  # the row is fetched from the database again
            store.messages(chat)

        read_model = [_timed(read) for _ in range(calls)]
        read_model_fetch = [_timed(uncached) for _ in range(calls)]
        from_log = [_timed(load) for _ in range(max(5, calls // 10))]
        rows.append(
            {
                "events": events,
                "messages": len(store.messages(chat)),
                "json_kb": len(raw.messages_json) / 1024,
                "read_model_p50_ms": median(read_model) * 1000,
                "read_model_p99_ms": percentile(read_model, 99) * 1000,
                "read_model_fetch_p50_ms": median(read_model_fetch) * 1000,
                "from_log_p50_ms": median(from_log) * 1000,
            }
        )
    return rows


# -- converter --------------------------------------------------------------------------------


def measure_converter(calls: int) -> list[dict[str, Any]]:
    """Convert a 200-message conversation (100 turns, with tool calls) to every format."""
    with _store("sqlite", DEFAULT_POSTGRES_URL) as store:
        conv = conversation(0, 100)
        write_conversation(store, conv)
        messages = store.messages(conv.chat_id)
    assert len(messages) == 200, len(messages)
    baseline = [_timed(lambda: json.loads(json.dumps(messages))) for _ in range(calls)]
    rows = [{"format": "json round trip (baseline)", "p50_ms": median(baseline) * 1000}]
    for fmt in FORMATS:
        samples = [_timed(lambda fmt=fmt: to_model_messages(messages, fmt)) for _ in range(calls)]
        rows.append({"format": fmt, "p50_ms": median(samples) * 1000})
    return rows


# -- report -----------------------------------------------------------------------------------


def _table(title: str, headers: list[str], rows: list[list[str]], markdown: bool) -> str:
    if markdown:
        lines = [f"**{title}**", "", "| " + " | ".join(headers) + " |"]
        lines.append("|" + "|".join("---" for _ in headers) + "|")
        lines += ["| " + " | ".join(row) + " |" for row in rows]
        return "\n".join(lines) + "\n"
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    lines = [title, "  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True))]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python bench/projections.py",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--backend", choices=["sqlite", "postgres", "all"], default="all")
    parser.add_argument("--quick", action="store_true", help="smaller workload, fewer calls")
    parser.add_argument("--markdown", action="store_true", help="print Markdown tables")
    parser.add_argument("--postgres-url", default=DEFAULT_POSTGRES_URL)
    args = parser.parse_args(argv)
    backends = ["sqlite", "postgres"] if args.backend == "all" else [args.backend]
    if "postgres" in backends and postgres_available(args.postgres_url) is not None:
        log("PostgreSQL is not reachable: SQLite only")
        backends.remove("postgres")
    conversations, turns = (5, 20) if args.quick else (50, 20)
    sizes = EVENT_SIZES[:2] if args.quick else EVENT_SIZES
    calls = 50 if args.quick else 200
    rebuild_rows, message_rows = [], []
    for backend in backends:
        log(f"{backend}: rebuild of {conversations} conversations x {turns} turns")
        with _store(backend, args.postgres_url) as store:
            r = measure_rebuild(store, conversations, turns)
        rebuild_rows.append(
            [
                backend,
                f"{r['events']:,}",
                f"{r['chunks']:,}",
                f"{r['rebuild_events_per_s']:,.0f}",
                f"{r['rebuild_chunks_per_s']:,.0f}",
                f"{r['read_events_per_s']:,.0f}",
                f"{r['rebuild_events_per_s'] / r['read_events_per_s']:.2f}",
            ]
        )
        log(f"{backend}: messages() at {', '.join(f'{s:,}' for s in sizes)} events")
        with _store(backend, args.postgres_url) as store:
            for m in measure_messages(store, sizes, calls):
                message_rows.append(
                    [
                        backend,
                        f"{m['events']:,}",
                        f"{m['messages']:,}",
                        f"{m['json_kb']:,.0f}",
                        f"{m['read_model_p50_ms']:.2f}",
                        f"{m['read_model_p99_ms']:.2f}",
                        f"{m['read_model_fetch_p50_ms']:.2f}",
                        f"{m['from_log_p50_ms']:.2f}",
                        f"{m['read_model_p50_ms'] / m['from_log_p50_ms']:.2f}",
                    ]
                )
    log("converter: 200 messages")
    converter_rows = [[r["format"], f"{r['p50_ms']:.2f}"] for r in measure_converter(calls)]
    print(
        _table(
            "Rebuild throughput (events/s)",
            [
                "backend",
                "events",
                "chunks in them",
                "rebuild events/s",
                "rebuild chunks/s",
                "read+decode only events/s (baseline)",
                "ratio",
            ],
            rebuild_rows,
            args.markdown,
        )
    )
    print(
        _table(
            "messages() p50 from the read model vs. rebuilt from the log (ms)",
            [
                "backend",
                "events",
                "messages",
                "JSON KB",
                "read model p50",
                "read model p99",
                "read model p50, row not cached",
                "from log p50 (baseline)",
                "ratio",
            ],
            message_rows,
            args.markdown,
        )
    )
    print(
        _table(
            "Converter, 200 messages (p50 ms)", ["format", "p50 ms"], converter_rows, args.markdown
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
