"""Helpers for the stream-in tests: the app served by uvicorn in a thread, SSE bodies held at a gate."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import uvicorn
from starlette.applications import Starlette

Chunk = dict[str, Any]

SSE = {"content-type": "text/event-stream"}
"""The content type of a UI-message stream body."""


def frame(chunk: Any) -> bytes:
    """One SSE event of a UI-message stream (``toUIMessageStreamResponse`` framing)."""
    data = chunk if isinstance(chunk, str) else json.dumps(chunk)
    return f"data: {data}\n\n".encode()


DONE = b"data: [DONE]\n\n"


def body(chunks: list[Any], *, done: bool = True) -> bytes:
    """A whole UI-message stream body."""
    return b"".join(frame(c) for c in chunks) + (DONE if done else b"")


def gated_body(
    before: list[Any], gate: threading.Event, after: list[Any], *, done: bool = True
) -> Iterator[bytes]:
    """A body sent in pieces: ``before``, then nothing until ``gate`` is set, then ``after``."""
    for chunk in before:
        yield frame(chunk)
    assert gate.wait(60), "the test never opened the gate"
    for chunk in after:
        yield frame(chunk)
    if done:
        yield DONE


def text_answer(message_id: str, *deltas: str) -> list[Chunk]:
    """A small answer of one text part (what ``streamText`` sends for a text reply)."""
    return [
        {"type": "start", "messageId": message_id},
        {"type": "start-step"},
        {"type": "text-start", "id": "t"},
        *({"type": "text-delta", "id": "t", "delta": d} for d in deltas),
        {"type": "text-end", "id": "t"},
        {"type": "finish-step"},
        {"type": "finish", "finishReason": "stop"},
    ]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def served(app: Starlette) -> Iterator[str]:
    """``app`` served by uvicorn on a free port, in a thread of this process; yields its base URL."""
    port = free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    until(lambda: server.started, "the server did not start")
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(30)


def until(condition: Callable[[], Any], failure: str, timeout: float = 30.0) -> Any:
    """Poll ``condition`` until it is truthy (returned), failing after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        assert time.monotonic() < deadline, failure
        time.sleep(0.01)


def follow_until(
    client: httpx.Client, chat_id: str, wanted: Callable[[list[Chunk]], bool]
) -> list[Chunk]:
    """Follow the open stream (``GET /api/chat/{id}/stream``) until ``wanted(chunks so far)``.

    Returns the chunks read; the follow is left (the stream is still open).
    """
    deadline = time.monotonic() + 30
    while True:
        with client.stream("GET", f"/api/chat/{chat_id}/stream") as response:
            if response.status_code == 204:  # not open yet
                assert time.monotonic() < deadline, "the stream never opened"
                time.sleep(0.01)
                continue
            assert response.status_code == 200
            chunks: list[Chunk] = []
            for line in response.iter_lines():
                if line.startswith("data: ") and line != "data: [DONE]":
                    chunks.append(json.loads(line[6:]))
                    if wanted(chunks):
                        return chunks
            raise AssertionError(f"the stream ended before the follower saw it: {chunks}")
