"""Helpers for the HTTP app's tests: an in-process client, SSE parsing, useChat bodies, a live server."""

from __future__ import annotations

import copy
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette

from tests.support.builders import user  # noqa: F401  (re-exported for the HTTP tests)

REPOSITORY = Path(__file__).resolve().parents[2]
"""The repository's root: where ``chatledger serve`` runs in these tests."""

Chunk = dict[str, Any]


@asynccontextmanager
async def client_of(app: Starlette, token: str | None = None) -> AsyncIterator[httpx.AsyncClient]:
    """An HTTP client talking to ``app`` in-process (with a bearer token if given)."""
    headers = {"authorization": f"Bearer {token}"} if token else {}
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(
        transport=transport, base_url="http://localhost", headers=headers, timeout=30
    ) as client:
        yield client


def sse_events(response: httpx.Response) -> list[Chunk]:
    """The chunks of an SSE answer, checked to follow the AI SDK framing (ends with ``[DONE]``)."""
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["x-vercel-ai-ui-message-stream"] == "v1"
    assert response.headers["cache-control"] == "no-cache"
    data = []
    for event in response.text.split("\n\n"):
        lines = [line[6:] for line in event.split("\n") if line.startswith("data: ")]
        if lines:
            data.append("\n".join(lines))
    assert data and data[-1] == "[DONE]", response.text[-200:]
    return [json.loads(item) for item in data[:-1]]


def continuation_of(events: list[Chunk]) -> list[Chunk]:
    """A v7 resume of a continuation: its own chunks, after the complete replay of the message.

    AI SDK 7 clients rebuild the message from the resumed chunks alone, so the
    continuation's stream (from its ``start``) comes after the message as it
    stood when the continuation opened (another ``start`` and its parts).
    """
    starts = [i for i, event in enumerate(events) if event["type"] == "start"]
    assert len(starts) == 2 and starts[0] == 0, events
    return events[starts[1] :]


def send_body(chat_id: str, messages: list[Chunk], **extra: Any) -> dict[str, Any]:
    """The body ``DefaultChatTransport`` posts."""
    return {"id": chat_id, "messages": messages, "trigger": "submit-message", **extra}


def answer_approval(
    message: dict[str, Any], approval_id: str, approved: bool, reason: str | None = None
) -> dict[str, Any]:
    """What the SDK client's ``addToolApprovalResponse`` does to the assistant message."""
    answered = copy.deepcopy(message)
    for part in answered["parts"]:
        if part.get("state") == "approval-requested" and part["approval"]["id"] == approval_id:
            part["state"] = "approval-responded"
            part["approval"] = {**part["approval"], "approved": approved, "reason": reason}
    return answered


def add_output(message: dict[str, Any], tool_call_id: str, output: Any) -> dict[str, Any]:
    """What the SDK client's ``addToolOutput`` does to the assistant message."""
    answered = copy.deepcopy(message)
    for part in answered["parts"]:
        if part.get("toolCallId") == tool_call_id:
            part["state"] = "output-available"
            part["output"] = output
            part.pop("errorText", None)
    return answered


def error_of(response: httpx.Response, status: int, type_name: str) -> str:
    """Check a JSON error answer; returns its message."""
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["type"] == type_name, error
    assert isinstance(error["message"], str) and error["message"]
    return str(error["message"])


def text_turn(message_id: str, text: str, *, tool: Chunk | None = None) -> list[Chunk]:
    """A small answer: one text part, then optionally one tool chunk, in one step."""
    chunks: list[Chunk] = [
        {"type": "start", "messageId": message_id},
        {"type": "start-step"},
        {"type": "text-start", "id": "t1"},
        {"type": "text-delta", "id": "t1", "delta": text},
        {"type": "text-end", "id": "t1"},
    ]
    if tool is not None:
        chunks.append(tool)
    return [*chunks, {"type": "finish-step"}, {"type": "finish"}]


@contextmanager
def running_server(
    url: str, *options: str, tokens: str | None = "token-node=node-tenant"
) -> Iterator[str]:
    """``chatledger serve`` on ``url`` in a subprocess, on a free port; yields its base URL.

    The demo responder answers (``--delay 0.02`` unless ``options`` say
    otherwise); ``tokens`` go in ``$CHATLEDGER_TOKENS`` (by default the token
    ``token-node`` is tenant ``node-tenant``).
    """
    with server_process(url, *(options or ("--delay", "0.02")), tokens=tokens) as (_, base):
        yield base


@contextmanager
def server_process(
    url: str, *options: str, tokens: str | None
) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """``chatledger serve --url URL OPTIONS`` on a free port: yields the process and its base URL.

    The process is stopped at the end unless the test already ended it (a kill).
    """
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [sys.executable, "-m", "chatledger", "serve", "--url", url, "--port", str(port)]
    command += ["--log-level", "warning", *options]
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("CHATLEDGER_TOKENS", "CHATLEDGER_TOKEN_FILE")
    }
    if tokens is not None:
        env["CHATLEDGER_TOKENS"] = tokens
    # From the repository's root, so that a responder named ``tests.support...`` imports
    # wherever pytest was started.
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
        cwd=REPOSITORY,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"{base}/openapi.json", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                output = process.communicate(timeout=5)[0] if process.poll() is not None else ""
                pytest.fail(f"the server did not start:\n{output}")
            time.sleep(0.05)
        yield process, base
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
