"""``chatledger project`` as a process of its own on PostgreSQL: it keeps up, and resumes where it stopped."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable

import pytest

from chatledger import ConversationStore
from chatledger.domain.aggregate import conversation_id
from chatledger.projections.read_models import HistoryQuery
from tests.integration.conftest import Backend

pytestmark = pytest.mark.postgres


def _user(turn: int) -> dict[str, object]:
    return {"id": f"u{turn}", "role": "user", "parts": [{"type": "text", "text": f"turn {turn}"}]}


def _position(store: ConversationStore) -> int:
    return store.projector.position()


def _head(store: ConversationStore) -> int:
    return int(store.log.recorder.max_notification_id() or 0)


def _wait_for(condition: Callable[[], bool], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("the projection process did not catch up in time")
        time.sleep(0.02)


def _start(url: str) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "chatledger", "project", "--url", url, "--poll", "5"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert process.stdout is not None
    assert "projecting" in process.stdout.readline()
    return process


def test_a_projection_process_keeps_up_and_resumes_after_a_kill(
    postgres_backend: Backend,
) -> None:
    """Writes through one store are projected by another process promptly (woken by NOTIFY, not
    its 5 s poll); after kill -9 and more writes, a restarted process applies exactly the rest."""
    writer = postgres_backend.open()
    observer = postgres_backend.open()
    chats = ["p1", "p2", "p3"]
    for chat in chats:
        writer.start_conversation(chat)
    process = _start(postgres_backend.url)
    try:
        _wait_for(lambda: _position(observer) == _head(writer))
        started = time.monotonic()
        writer.append_message("p1", _user(0))
        _wait_for(lambda: _position(observer) == _head(writer))
        assert time.monotonic() - started < 2.5, "woken by the write, not by polling"
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
    for turn in range(1, 6):
        for chat in chats:
            writer.append_message(chat, _user(turn))
    assert _position(observer) < _head(writer)
    process = _start(postgres_backend.url)
    try:
        _wait_for(lambda: _position(observer) == _head(writer))
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=10) == 0
    for chat in chats:
        history = observer.read_models.history(
            conversation_id(observer.tenant, chat), HistoryQuery()
        )
        assert [entry.position for entry in history] == list(range(1, writer.version(chat) + 1))
        row = observer.read_models.conversation(conversation_id(observer.tenant, chat))
        assert row is not None
        assert json.loads(row.messages_json) == writer.messages(
            chat, at_version=writer.version(chat)
        )
