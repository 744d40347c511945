"""``follow(chat, after=cursor)`` (docs/behaviour.md §8): live chunks of a stream, from the durable log.

A follower yields the applied chunks of one stream in order (never replays or
refusals), waits for new ones until the stream closes, resumes from a cursor,
and sees what another process writes (SQLite by polling, PostgreSQL by
LISTEN/NOTIFY).
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest

from chatledger import ConversationStore
from chatledger.adapters.store.reads.follow import FollowedChunk, FollowTimeoutError
from chatledger.adapters.store.streams.writer import StreamWriter
from chatledger.domain.conversation import Verdict
from chatledger.domain.errors import ConversationNotFoundError, InvalidInputError
from tests.integration.conftest import Backend

Chunk = dict[str, Any]


def _user(chat: str) -> Chunk:
    return {"id": f"u-{chat}", "role": "user", "parts": [{"type": "text", "text": "hello"}]}


def _reply(deltas: int = 20) -> list[Chunk]:
    """A reply with one replayed chunk (a known tool call started again) and one refused chunk."""
    chunks: list[Chunk] = [
        {"type": "start"},
        {"type": "start-step"},
        {"type": "tool-input-start", "toolCallId": "call_1", "toolName": "search"},
        {
            "type": "tool-input-available",
            "toolCallId": "call_1",
            "toolName": "search",
            "input": {"q": "weather"},
        },
        {"type": "tool-input-start", "toolCallId": "call_1", "toolName": "search"},  # replay
        {"type": "text-start", "id": "t1"},
    ]
    for i in range(deltas):
        chunks.append({"type": "text-delta", "id": "t1", "delta": f"w{i} "})
        if i == deltas // 2:
            chunks.append({"type": "text-delta", "id": "no-such-part", "delta": "x"})  # refused
    chunks += [{"type": "text-end", "id": "t1"}, {"type": "finish-step"}, {"type": "finish"}]
    return chunks


def _new_chat(store: ConversationStore, chat: str) -> None:
    store.start_conversation(chat)
    store.append_message(chat, _user(chat))


def _write(
    stream: StreamWriter, chunks: list[Chunk], *, pause: float = 0.0
) -> list[tuple[int, Chunk]]:
    """Append ``chunks`` (``pause`` seconds apart); return (position, chunk) of the applied ones."""
    applied: list[tuple[int, Chunk]] = []
    for chunk in chunks:
        received = stream.append(chunk)
        if received.verdict is Verdict.APPLIED:
            applied.append((received.position, chunk))
        if pause:
            time.sleep(pause)
    return applied


def _seen(followed: list[FollowedChunk]) -> list[tuple[int, Chunk]]:
    return [(item.position, item.chunk) for item in followed]


def _in_thread(chunks: Iterator[FollowedChunk]) -> tuple[threading.Thread, list[FollowedChunk]]:
    got: list[FollowedChunk] = []
    thread = threading.Thread(target=lambda: got.extend(chunks), daemon=True)
    thread.start()
    return thread, got


def test_a_follower_thread_sees_the_applied_chunks_in_order_and_ends_at_close(
    backend: Backend,
) -> None:
    """A follower (through a second store where the backend allows) started once the stream is
    open yields exactly the applied chunks, in stream order, across many small commits, and
    returns when the stream closes; the replayed and the refused chunk are not yielded."""
    writer = backend.open(batch_chunks=4)
    reader = backend.other_store(writer)
    _new_chat(writer, "live")
    stream = writer.open_stream("live", commit=True)  # in the log before the follower starts
    thread, got = _in_thread(reader.follow("live", timeout=20))
    chunks = _reply()
    applied = _write(stream, chunks, pause=0.003)
    assert len(applied) == len(chunks) - 2  # one replay, one refusal
    time.sleep(0.1)
    assert thread.is_alive(), "the follower must wait while the stream is open"
    stream.close()
    thread.join(timeout=20)
    assert not thread.is_alive()
    assert _seen(got) == applied
    assert {item.stream_id for item in got} == {stream.stream_id}


def test_resume_from_a_cursor_mid_stream(backend: Backend) -> None:
    """A follower that stopped mid-batch resumes right after its last chunk and gets exactly the
    rest, including chunks committed after it stopped; any cursor works, any number of times."""
    store = backend.open(batch_chunks=64, batch_ms=10_000)  # big batches: cursors fall mid-batch
    _new_chat(store, "resume")
    chunks = _reply(40)
    stream = store.open_stream("resume")
    applied = _write(stream, chunks[:30])
    stream.flush()
    first = store.follow("resume")
    seen = [next(first) for _ in range(12)]
    first.close()
    applied += _write(stream, chunks[30:])
    stream.close()

    rest = list(store.follow("resume", after=seen[-1].cursor))
    assert _seen(seen) + _seen(rest) == applied
    everything = list(store.follow("resume"))
    for index, item in enumerate(everything):
        assert _seen(list(store.follow("resume", after=item.cursor))) == applied[index + 1 :]


def test_after_the_stream_closed_the_whole_last_stream_is_replayed(backend: Backend) -> None:
    """With no open stream, ``after=None`` replays the last stream (not earlier ones) and ends;
    a conversation without streams yields nothing."""
    store = backend.open()
    _new_chat(store, "done")
    assert list(store.follow("done")) == []
    store.ingest("done", [{"type": "start"}, *_text("first answer")])
    store.append_message("done", {**_user("done"), "id": "u2"})
    last = [{"type": "start"}, *_text("second answer")]
    store.ingest("done", last)
    followed = list(store.follow("done"))
    assert [item.chunk for item in followed] == last
    assert [item.position for item in followed] == list(range(len(last)))


def test_a_long_stream_is_read_in_pages(backend: Backend) -> None:
    """A stream of more events than one read (one event per chunk) is found and read whole,
    live and after its close, with other events in between ignored."""
    store = backend.open(batch_chunks=1)
    _new_chat(store, "long")
    stream = store.open_stream("long")
    thread, live = _in_thread(store.follow("long", timeout=20))
    applied = _write(stream, _reply(300))
    stream.close()
    thread.join(timeout=30)
    assert not thread.is_alive()
    assert _seen(live) == applied
    assert _seen(list(store.follow("long"))) == applied
    store.append_message("long", {**_user("long"), "id": "u2"})
    assert _seen(list(store.follow("long", after=live[150].cursor))) == applied[151:]


def test_unknown_chats_and_bad_cursors_are_refused_at_the_call(backend: Backend) -> None:
    store = backend.open()
    with pytest.raises(ConversationNotFoundError):
        store.follow("nobody")
    _new_chat(store, "a")
    _new_chat(store, "b")
    store.ingest("a", [{"type": "start"}, *_text("hi")])
    store.ingest("b", [{"type": "start"}, *_text("hi")])
    cursor_of_a = next(store.follow("a")).cursor
    for bad in ["", "nonsense", "s_x:1:2", cursor_of_a.replace(":0:", ":99:"), "s:1:0"]:
        with pytest.raises(InvalidInputError):
            store.follow("a", after=bad)
    with pytest.raises(InvalidInputError):
        store.follow("b", after=cursor_of_a)


def test_timeout_raises_with_the_cursor_to_resume_from(backend: Backend) -> None:
    store = backend.open(batch_chunks=1)
    _new_chat(store, "quiet")
    stream = store.open_stream("quiet")
    stream.append({"type": "start"})
    follower = store.follow("quiet", timeout=0.3)
    first = next(follower)
    started = time.monotonic()
    with pytest.raises(FollowTimeoutError) as raised:
        next(follower)
    assert 0.25 <= time.monotonic() - started < 5
    assert raised.value.cursor == first.cursor
    stream.append({"type": "text-start", "id": "t"})
    stream.close()
    resumed = list(store.follow("quiet", after=raised.value.cursor, timeout=5))
    assert [item.chunk for item in resumed] == [{"type": "text-start", "id": "t"}]


def test_the_store_method_follows() -> None:
    """``ConversationStore.follow`` replays a closed stream on the in-memory backend too."""
    with ConversationStore.open("memory://") as store:
        _new_chat(store, "mixin")
        chunks = [{"type": "start"}, *_text("hello")]
        store.ingest("mixin", chunks, continuation=False)
        assert [item.chunk for item in store.follow("mixin", timeout=5)] == chunks


_CHILD = textwrap.dedent(
    """
    import json, sys
    from chatledger import ConversationStore
    from chatledger.adapters.store.reads.follow import follow

    url, chat, poll = sys.argv[1], sys.argv[2], float(sys.argv[3])
    with ConversationStore.open(url) as store:
        chunks = store.follow(chat, timeout=30, poll_seconds=poll)
        print("ready", flush=True)
        for item in chunks:
            print(json.dumps([item.position, item.chunk]), flush=True)
    print("end", flush=True)
    """
)


def test_a_follower_in_another_process_sees_this_process_write(durable_backend: Backend) -> None:
    """A follower process sees the chunks as this process commits them and ends at the close.
    On PostgreSQL its safety re-check is 60 s, so finishing quickly proves NOTIFY woke it."""
    store = durable_backend.open(batch_chunks=1)
    _new_chat(store, "other")
    stream = store.open_stream("other")
    poll = "60" if durable_backend.name == "postgres" else "0.02"
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD, durable_backend.url, "other", poll],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "ready"
        started = time.monotonic()
        applied = _write(stream, _reply(), pause=0.005)
        stream.close()
        out, err = child.communicate(timeout=30)
    finally:
        with contextlib.suppress(ProcessLookupError):
            child.kill()
    assert child.returncode == 0, err
    lines = out.splitlines()
    assert lines[-1] == "end"
    assert [tuple(json.loads(line)) for line in lines[:-1]] == applied
    assert time.monotonic() - started < 15


def test_closing_a_follower_releases_its_listen_connection(postgres_backend: Backend) -> None:
    store = postgres_backend.open(batch_chunks=1)
    _new_chat(store, "conn")
    stream = store.open_stream("conn")
    stream.append({"type": "start"})
    before = _listeners(store)
    follower = store.follow("conn")
    assert next(follower).chunk == {"type": "start"}
    assert _listeners(store) == before + 1
    follower.close()
    _eventually(lambda: _listeners(store) == before)
    stream.close()


def _listeners(store: ConversationStore) -> int:
    """LISTEN connections (application name ``chatledger-follow``) of this process.

    Other test runs share the server, so connections are matched to this
    process by their client port (the TCP sockets this process holds).
    """
    env = store.config.env
    with psycopg.connect(
        dbname=env["POSTGRES_DBNAME"],
        host=env["POSTGRES_HOST"],
        port=int(env["POSTGRES_PORT"]),
        user=env["POSTGRES_USER"],
        autocommit=True,
    ) as connection:
        ports = connection.execute(
            "SELECT client_port FROM pg_stat_activity WHERE application_name = 'chatledger-follow'"
        ).fetchall()
    mine = _own_tcp_ports()
    return sum(1 for (port,) in ports if port in mine)


def _own_tcp_ports() -> set[int]:
    """Local ports of this process's TCP sockets (from /proc: Linux)."""
    inodes = set()
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            target = os.readlink(f"/proc/self/fd/{fd}")
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError), open(table) as lines:
            for line in list(lines)[1:]:
                fields = line.split()
                if fields[9] in inodes:
                    ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


def _eventually(condition: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.02)


def _text(text: str) -> list[Chunk]:
    return [
        {"type": "text-start", "id": "t"},
        *({"type": "text-delta", "id": "t", "delta": word} for word in text.split()),
        {"type": "text-end", "id": "t"},
        {"type": "finish"},
    ]


def _follow_all(
    store: ConversationStore, chats: list[str]
) -> tuple[list[threading.Thread], list[list[FollowedChunk]]]:
    """One follower thread per entry of ``chats``, each waiting (its first chunk seen) on return."""
    seen: list[list[FollowedChunk]] = [[] for _ in chats]
    threads = []
    for index, chat in enumerate(chats):
        started = threading.Event()

        def run(
            chat: str = chat,
            got: list[FollowedChunk] = seen[index],
            started: threading.Event = started,
        ) -> None:
            for item in store.follow(chat, timeout=60):
                got.append(item)
                started.set()

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        threads.append(thread)
        assert started.wait(30), f"the follower of {chat} saw no first chunk"
    return threads, seen


def test_followers_share_one_listen_connection_and_each_sees_every_chunk_once(
    postgres_backend: Backend,
) -> None:
    """Twelve followers (three per conversation) through one store hold one LISTEN connection
    between them; each sees exactly the applied chunks of its stream, once, in order, while the
    four streams are written interleaved; the connection goes once the last follower is done."""
    writer = postgres_backend.open(batch_chunks=3)
    reader = postgres_backend.other_store(writer)
    chats = ["a", "b", "c", "d"]
    streams = {}
    for chat in chats:
        _new_chat(writer, chat)
        streams[chat] = writer.open_stream(chat)
        streams[chat].append({"type": "start"})
        streams[chat].flush()
    before = _listeners(writer)
    followed = chats * 3
    threads, seen = _follow_all(reader, followed)
    assert _listeners(writer) == before + 1, "one LISTEN connection for all followers of a store"
    applied = {chat: [(0, {"type": "start"})] for chat in chats}
    reply = _reply(6)[1:]
    for start in range(0, len(reply), 4):  # the four streams written interleaved
        for chat in chats:
            applied[chat] += _write(streams[chat], reply[start : start + 4])
    for chat in chats:
        streams[chat].close()
    for thread in threads:
        thread.join(timeout=30)
        assert not thread.is_alive()
    for chat, got in zip(followed, seen, strict=True):
        assert _seen(got) == applied[chat], chat
    _eventually(lambda: _listeners(writer) == before)


def test_followers_of_a_store_wait_on_one_watcher_thread(durable_backend: Backend) -> None:
    """However many followers a store has, one thread watches the log for them (no polling
    loop per follower): with the default one-second re-check of each follower, the chunks
    still arrive well within it, so the watcher woke them; it is gone after the last one."""
    store = durable_backend.open(batch_chunks=1)
    chats = ["x", "y"]
    streams = {}
    for chat in chats:
        _new_chat(store, chat)
        streams[chat] = store.open_stream(chat)
        streams[chat].append({"type": "start"})
    followed = chats * 4
    threads, seen = _follow_all(store, followed)
    watchers = [t for t in threading.enumerate() if t.name == "chatledger-news"]
    assert len(watchers) == 1
    assert store._services.news.followers == len(followed)
    started = time.monotonic()
    for chat in chats:
        streams[chat].append({"type": "start-step"})
    _eventually(lambda: all(len(got) == 2 for got in seen), timeout=0.9)
    assert time.monotonic() - started < 0.9, "woken by the watcher, not by the re-check"
    for chat in chats:
        streams[chat].close()
    for thread in threads:
        thread.join(timeout=30)
    _eventually(lambda: not any(t.name == "chatledger-news" for t in threading.enumerate()))
