"""Attachments kept once: a store's bytes per turn on a workload with images and PDFs, lifted or inline.

Each conversation has ``--turns`` turns. A user message carries an image on
every ``--image-every``-th turn (a new one, or, every other time, the image
sent before: people attach the same file again), a PDF on every
``--pdf-every``-th turn; the answer streams a short text and, every
``--tool-every``-th turn, a tool output of about 20 KB of JSON. Files are
random bytes (images: incompressible) or PDF-like text (compressible).

The same workload is written with attachments lifted into the blob table
(the default) and with every value inline (``CHATLEDGER_ATTACHMENT_MIN_BYTES=0``
and ``CHATLEDGER_TOOL_OUTPUT_MIN_BYTES=0``), in alternation, ``--rounds``
times, each into a fresh database. Reported: the store's bytes per turn
(SQLite: the file after a WAL checkpoint; PostgreSQL: every relation of the
schema, TOAST and indexes included, after a VACUUM), the bytes of the
attachments given per turn, and the write time per turn, as medians with
their range over the rounds; and the load average.

    python bench/attachments.py --backend sqlite
    python bench/attachments.py --backend postgres --conversations 10 --turns 12
"""

from __future__ import annotations

import argparse
import base64
import os
import random
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

import psycopg
from backends import BACKENDS, FreshDb, fresh_db
from stats import median, median_range

from chatledger import ConversationStore

_OFF = {"CHATLEDGER_ATTACHMENT_MIN_BYTES": "0", "CHATLEDGER_TOOL_OUTPUT_MIN_BYTES": "0"}


def _url(data: bytes, media: str) -> str:
    return f"data:{media};base64,{base64.b64encode(data).decode()}"


def _pdf(rng: random.Random, size: int) -> bytes:
    words = [b"contract", b"clause", b"party", b"shall", b"payment", b"term", b"notice"]
    out = bytearray(b"%PDF-1.7\n")
    while len(out) < size:
        out += rng.choice(words) + b" " + str(rng.randrange(10**6)).encode() + b"\n"
    return bytes(out[:size])


def workload(args: argparse.Namespace, seed: int) -> list[list[tuple[dict[str, Any], list[Any]]]]:
    """Per conversation, per turn: (the user message, the answer's chunks)."""
    rng = random.Random(seed)
    chats = []
    for _ in range(args.conversations):
        turns, last_image = [], None
        for turn in range(args.turns):
            parts: list[dict[str, Any]] = [{"type": "text", "text": f"turn {turn}: what is this?"}]
            if turn % args.image_every == 0:
                if last_image is None or rng.random() < 0.5:
                    last_image = rng.randbytes(args.image_kb * 1024)
                parts.append(
                    {"type": "file", "mediaType": "image/png", "url": _url(last_image, "image/png")}
                )
            if turn % args.pdf_every == args.pdf_every - 1:
                pdf = _pdf(rng, args.pdf_kb * 1024)
                parts.append(
                    {
                        "type": "file",
                        "mediaType": "application/pdf",
                        "url": _url(pdf, "application/pdf"),
                    }
                )
            chunks: list[Any] = [{"type": "start", "messageId": f"a{turn}"}, {"type": "start-step"}]
            if turn % args.tool_every == args.tool_every - 1:
                rows = [
                    {"n": i, "name": f"item {rng.randrange(10**9)}", "ok": True} for i in range(500)
                ]
                call = f"call_{turn}"
                chunks += [
                    {"type": "tool-input-available", "toolCallId": call, "toolName": "search",
                     "input": {"q": "x"}},
                    {"type": "tool-output-available", "toolCallId": call, "output": {"rows": rows}},
                    {"type": "finish-step"},
                    {"type": "start-step"},
                ]  # fmt: skip
            chunks += [
                {"type": "text-start", "id": "t"},
                *({"type": "text-delta", "id": "t", "delta": f"word{i} "} for i in range(40)),
                {"type": "text-end", "id": "t"},
                {"type": "finish-step"},
                {"type": "finish"},
            ]
            turns.append(({"id": f"u{turn}", "role": "user", "parts": parts}, chunks))
        chats.append(turns)
    return chats


def given_bytes(chats: list[Any]) -> int:
    """The bytes of the files' data URLs and tool outputs as sent."""
    total = 0
    for turns in chats:
        for message, chunks in turns:
            total += sum(len(p["url"]) for p in message["parts"] if p["type"] == "file")
            total += sum(len(str(c["output"])) for c in chunks if "output" in c)
    return total


def store_bytes(db: FreshDb) -> int:
    """The store's size on disk once its writes are settled."""
    if db.sqlite_path is not None:
        with sqlite3.connect(db.sqlite_path) as conn:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        wal = Path(str(db.sqlite_path) + "-wal")
        return db.sqlite_path.stat().st_size + (wal.stat().st_size if wal.exists() else 0)
    assert db.postgres_url is not None
    with psycopg.connect(db.postgres_url, autocommit=True) as conn:
        tables = conn.execute(
            "SELECT c.oid::regclass::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE n.nspname = %s AND c.relkind = 'r'",
            (db.schema,),
        ).fetchall()
        for (table,) in tables:
            conn.execute(f"VACUUM {table}")
        (size,) = conn.execute(
            "SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c"
            " JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = %s AND c.relkind = 'r'",
            (db.schema,),
        ).fetchone()
    return int(size)


def one_run(backend: str, chats: list[Any], lifted: bool) -> tuple[int, float]:
    """(store bytes, seconds spent writing) for the workload in a fresh database."""
    saved = {name: os.environ.get(name) for name in _OFF}
    if not lifted:
        os.environ.update(_OFF)
    try:
        with fresh_db(backend) as db:  # type: ignore[arg-type]
            store = ConversationStore.open(db.url)
            took = 0.0
            for number, turns in enumerate(chats):
                chat = f"chat-{number}"
                store.start_conversation(chat, actor="user:u")
                for message, chunks in turns:
                    began = time.perf_counter()
                    store.append_message(chat, message, actor="user:u")
                    store.ingest(chat, chunks, actor="agent:bot")
                    took += time.perf_counter() - began
                store.messages(chat)  # the read models caught up
            store.close()
            return store_bytes(db), took
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--backend", choices=BACKENDS, default="sqlite")
    parser.add_argument("--conversations", type=int, default=5)
    parser.add_argument("--turns", type=int, default=12)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--image-every", type=int, default=2)
    parser.add_argument("--image-kb", type=int, default=200)
    parser.add_argument("--pdf-every", type=int, default=4)
    parser.add_argument("--pdf-kb", type=int, default=300)
    parser.add_argument("--tool-every", type=int, default=3)
    args = parser.parse_args()
    turns = args.conversations * args.turns
    sizes: dict[bool, list[float]] = {True: [], False: []}
    times: dict[bool, list[float]] = {True: [], False: []}
    given: list[float] = []
    for round_ in range(args.rounds):
        chats = workload(args, seed=round_)
        given.append(given_bytes(chats) / turns)
        for lifted in (True, False) if round_ % 2 == 0 else (False, True):
            size, took = one_run(args.backend, chats, lifted)
            sizes[lifted].append(size / turns)
            times[lifted].append(took / turns * 1000)
        print(
            f"round {round_ + 1}: inline {sizes[False][-1]:,.0f} B/turn, kept once "
            f"{sizes[True][-1]:,.0f} B/turn",
            file=sys.stderr,
        )
    ratios = [a / b for a, b in zip(sizes[False], sizes[True], strict=True)]
    print(
        f"backend {args.backend}: {args.conversations} conversations x {args.turns} turns, {args.rounds} rounds"
    )
    print(f"attachments given:      {median_range(given)} B/turn")
    print(f"store, inline:          {median_range(sizes[False])} B/turn")
    print(f"store, kept once:       {median_range(sizes[True])} B/turn")
    print(f"inline / kept once:     {median_range(ratios, '{:.2f}')}x")
    print(f"write, inline:          {median_range(times[False], '{:.1f}')} ms/turn")
    print(f"write, kept once:       {median_range(times[True], '{:.1f}')} ms/turn")
    print(f"median saving:          {1 - median(sizes[True]) / median(sizes[False]):.0%}")
    print(f"load average:           {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
