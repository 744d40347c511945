"""Crash measurement: SIGKILL a process mid-stream, then check what a new process can load.

The child (crash_child.py) streams one reply at a steady pace and reports each
appended chunk with a CLOCK_MONOTONIC timestamp; after ``kill_after`` chunks the
parent sends SIGKILL, opens the store itself and compares what survived with
what was sent.

The **lost window** (``lost_window_ms``) is the age, at the moment of the kill,
of the oldest chunk that did not survive: the kill's CLOCK_MONOTONIC moment
(taken right before ``kill()``) minus that chunk's append moment. It is what
the batch age bounds (a chunk appended is committed when its batch is
``batch_ms`` old), so it must stay below ``batch_ms``; 0 when nothing
appended was lost. ``lost_ms`` (kept for older results) is the span from the
newest surviving chunk's append to the newest sent chunk's append.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import IO, Any

from storeapi import StoreOpener
from verify import problems, text_of
from workload import (
    DEFAULT_SEED,
    ENDLESS_HEADER,
    Conversation,
    crash_conversation,
    endless_reply,
)

CHILD = Path(__file__).with_name("crash_child.py")
TIMEOUT_S = 120.0


@dataclass
class CrashResult:
    """What one kill left behind. ``lost_ms`` is None when nothing could be measured."""

    kill_after: int
    chunks_sent: int = 0
    chunks_surviving: int = 0
    lost_ms: float | None = None
    lost_window_ms: float | None = None
    """Age at the kill of the oldest chunk lost (0: none lost); None when not measurable."""
    since_survivor_ms: float | None = None
    """From the newest surviving chunk's append to the kill."""
    batches: int | None = None
    """Chunk batches stored for the reply (each one commit, or one part of a group commit)."""
    batches_per_s: float | None = None
    """``batches`` over the span of the surviving chunks' appends: the commit rate of one stream."""
    assistant_message_present: bool = False
    user_message_survived: bool = False
    earlier_turns_survived: bool = False
    load_error: str | None = None
    notes: list[str] = field(default_factory=list)
    child_stderr: str = ""
    """The end of the child's stderr when it died on its own (in the JSON only)."""


def _read_until_kill(proc: subprocess.Popen[str], kill_after: int) -> tuple[dict[int, int], int]:
    """Read ``seq ns`` lines, SIGKILL the child after ``kill_after`` chunks, drain the pipe;
    the stamps and the kill's CLOCK_MONOTONIC moment (0 when the child ended by itself)."""
    assert proc.stdout is not None
    stamps: dict[int, int] = {}
    killed_at = 0
    while len(stamps) < kill_after:
        line = proc.stdout.readline()
        if not line:
            break  # the child died or finished on its own
        _record(line, stamps)
    else:
        killed_at = time.monotonic_ns()
        os.kill(proc.pid, signal.SIGKILL)
    for line in proc.stdout:  # lines written before the kill landed
        _record(line, stamps)
    proc.wait()
    return stamps, killed_at


def _record(line: str, stamps: dict[int, int]) -> None:
    seq, _, ns = line.strip().partition(" ")
    if seq.isdigit() and ns.isdigit():  # the kill may cut the last line short
        stamps[int(seq)] = int(ns)


def _surviving_deltas(text: str, message_id: str, seed: int, sent: int) -> int | None:
    """How many leading deltas ``text`` is made of; None if it is not such a prefix."""
    deltas = (c["delta"] for c in islice(endless_reply(message_id, seed), ENDLESS_HEADER, sent + 8))
    joined, count = "", 0
    for delta in deltas:
        if len(joined) >= len(text):
            break
        joined += delta
        count += 1
    return count if joined == text else None


def _run_child(
    store_spec: str,
    url: str,
    kill_after: int,
    pace_ms: float,
    seed: int,
    earlier: int,
    err: IO[bytes],
    src: str | None = None,
) -> tuple[dict[int, int], int, int | None]:
    flags = {"--store": store_spec, "--url": url, "--seed": seed, "--earlier-turns": earlier}
    flags["--pace-ms"] = pace_ms
    if src is not None:
        flags["--src"] = src
    cmd = [sys.executable, str(CHILD), *(str(x) for flag in flags.items() for x in flag)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, text=True, bufsize=1)
    watchdog = threading.Timer(TIMEOUT_S, proc.kill)
    watchdog.start()
    try:
        stamps, killed_at = _read_until_kill(proc, kill_after)
    finally:
        watchdog.cancel()
    return stamps, killed_at, proc.returncode


def _inspect(
    result: CrashResult,
    messages: list[dict[str, Any]],
    conv: Conversation,
    stamps: dict[int, int],
    seed: int,
    killed_at: int = 0,
) -> None:
    *earlier, last = conv.turns
    done = 2 * len(earlier)
    result.earlier_turns_survived = not problems(
        messages[:done], Conversation(conv.chat_id, earlier)
    )
    result.user_message_survived = len(messages) > done and text_of(messages[done]) == text_of(
        last.user_message
    )
    reply = messages[done + 1] if len(messages) > done + 1 else None
    result.assistant_message_present = reply is not None and reply.get("role") == "assistant"
    if len(messages) > done + 2:
        result.notes.append(f"{len(messages) - done - 2} unexpected extra messages")
    deltas = 0
    if reply is not None:
        found = _surviving_deltas(text_of(reply), last.message_id, seed, len(stamps))
        if found is None:
            result.notes.append("stored text is not a prefix of the text sent")
        deltas = found or 0
    last_seq = ENDLESS_HEADER - 1 + deltas if deltas else -1
    result.chunks_surviving = last_seq + 1
    if stamps:
        sent_last = max(stamps)
        since = stamps.get(last_seq, min(stamps.values()))
        result.lost_ms = (stamps[sent_last] - since) / 1e6
        if killed_at:
            lost = [ns for seq, ns in stamps.items() if seq > last_seq]
            result.lost_window_ms = (killed_at - min(lost)) / 1e6 if lost else 0.0
            result.since_survivor_ms = (killed_at - since) / 1e6


def _reply_batches(store: Any, chat_id: str) -> int | None:
    """Chunk batches of the conversation's last stream (None: the store has no ``history``)."""
    history = getattr(store, "history", None)
    if history is None:
        return None
    entries = history(chat_id, kinds=["stream-opened", "chunks"])
    last_open = max(e.position for e in entries if e.kind == "stream-opened")
    return sum(e.kind == "chunks" and e.position > last_open for e in entries)


def _log_messages(store: Any, chat_id: str) -> list[dict[str, Any]] | None:
    """The messages as folded from the log itself (None: the store cannot say)."""
    load = getattr(store, "conversation", None)
    return None if load is None else list(load(chat_id).state.messages)


def measure_crash(
    opener: StoreOpener,
    store_spec: str,
    url: str,
    *,
    kill_after: int,
    pace_ms: float = 1.0,
    earlier_turns: int = 2,
    seed: int = DEFAULT_SEED,
    src: str | None = None,
) -> CrashResult:
    """Kill a streaming child after ``kill_after`` chunks and report what survived at ``url``.

    ``src``: the child imports chatledger from there (``installs.py``'s layout of another
    source tree) instead of the installed one; this process reads with the installed one."""
    result = CrashResult(kill_after)
    with tempfile.TemporaryFile() as err:
        stamps, killed_at, code = _run_child(
            store_spec, url, kill_after, pace_ms, seed, earlier_turns, err, src
        )
        err.seek(0)
        child_err = err.read().decode(errors="replace").strip()
    result.chunks_sent = max(stamps) + 1 if stamps else 0
    if code != -signal.SIGKILL:
        last_line = child_err.splitlines()[-1] if child_err else "no output"
        result.notes.append(f"child exited with {code} before the kill: {last_line}")
        result.child_stderr = child_err[-4000:]
    try:
        store = opener(url)
        try:
            chat_id = crash_conversation(earlier_turns, seed).chat_id
            messages = store.messages(chat_id)
            batches = _reply_batches(store, chat_id)
            logged = _log_messages(store, chat_id)
        finally:
            store.close()
    except Exception as exc:  # the point is to report any failure to load, whatever it is
        result.load_error = f"{type(exc).__name__}: {exc}"
        return result
    _inspect(result, messages, crash_conversation(earlier_turns, seed), stamps, seed, killed_at)
    if logged is not None and text_of(logged[-1]) != text_of(messages[-1]):
        result.notes.append(
            f"the log holds {len(text_of(logged[-1]))} characters of the reply, the read model "
            f"{len(text_of(messages[-1]))}"
        )
    result.batches = batches
    if batches is None:
        return result
    span = [ns for seq, ns in stamps.items() if seq < result.chunks_surviving]
    if len(span) > 1 and result.batches > 0:
        result.batches_per_s = result.batches / ((max(span) - min(span)) / 1e9)
    return result
