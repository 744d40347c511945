"""``chatledger serve --message-concurrency``: checked before anything listens, applied by the server."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx

from chatledger import ConversationStore
from tests.integration.http_support import send_body, server_process, user
from tests.integration.test_http_steering import _running


def test_a_bad_policy_is_one_line_naming_the_option(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'x.db'}"
    result = subprocess.run(
        [sys.executable, "-m", "chatledger", "serve", "--url", url, "--no-auth",
         "--message-concurrency", "newest"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert result.returncode != 0
    assert "--message-concurrency must be one of queue, latest, merge, drop, debounce" in (
        result.stderr
    )
    assert not (tmp_path / "x.db").exists()  # refused before the store was opened


def test_the_server_applies_its_policy(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'x.db'}"
    store = ConversationStore.open(url)
    store.start_conversation("c", ai_sdk=7, tenant="node-tenant")
    store.append_message("c", user("u1", "hi"), tenant="node-tenant")
    with server_process(url, "--message-concurrency", "drop", tokens="token-node=node-tenant") as (
        _,
        base,
    ):
        stream = _running(_InTenant(store), "c")
        seen = [user("u1", "hi"), {"id": "a1", "role": "assistant", "parts": []}]
        sent = httpx.post(
            f"{base}/api/chat",
            json=send_body("c", [*seen, user("u2", "x")]),
            headers={"authorization": "Bearer token-node"},
            timeout=30,
        )
        assert sent.status_code == 409 and sent.json()["error"]["type"] == "MessageDroppedError"
        stream.close()
    [entry] = store.history("c", tenant="node-tenant", kinds=["mid-answer-message"])
    assert entry.details["outcome"] == "dropped"


class _InTenant:
    """``open_stream`` of ``store`` in the tenant the served token names."""

    def __init__(self, store: ConversationStore) -> None:
        self.store = store

    def open_stream(self, chat: str, *, actor: str) -> object:
        return self.store.open_stream(chat, actor=actor, tenant="node-tenant")
