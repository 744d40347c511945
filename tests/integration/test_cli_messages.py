"""What the command line says where it used to mislead: a stopped answer, a busy port, ``demo --help``."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

from chatledger import ConversationStore


def chatledger(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("CHATLEDGER_")}
    return subprocess.run(
        [sys.executable, "-m", "chatledger", *args],
        capture_output=True,
        stdin=subprocess.DEVNULL,
        text=True,
        cwd=cwd,
        env=environ,
        timeout=60,
    )


def test_show_says_a_stopped_answer_was_stopped_not_still_streaming(tmp_path: Path) -> None:
    """Text left ``streaming`` by a stopped answer reads as stopped; only an open stream's is live."""
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    with ConversationStore.open(url) as store:
        store.start_conversation("c")
        store.append_message(
            "c", {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "hi"}]}
        )
        stream = store.open_stream("c")
        for chunk in (
            {"type": "start", "messageId": "a1"},
            {"type": "text-start", "id": "t"},
            {"type": "text-delta", "id": "t", "delta": "Hello wor"},
        ):
            stream.append(chunk)
        stream.flush()
        live = chatledger("show", "c", "--url", url, cwd=tmp_path)
        assert live.returncode == 0, live.stderr
        assert "Hello wor [still streaming]" in live.stdout
        store.close_stream("c", outcome="aborted", reason="stopped by user:alice")
    stopped = chatledger("show", "c", "--url", url, cwd=tmp_path)
    assert stopped.returncode == 0, stopped.stderr
    assert "Hello wor [unfinished: the answer was stopped]" in stopped.stdout
    assert "still streaming" not in stopped.stdout


def test_serve_on_a_busy_port_says_so_with_a_port_hint_and_creates_nothing(tmp_path: Path) -> None:
    """One line naming --port, before "serving at", and no database or token file left behind."""
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = chatledger("serve", "--port", str(port), cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"port {port} on 127.0.0.1 is already in use" in result.stderr
    assert "--port" in result.stderr and "Errno" not in result.stderr
    assert "serving" not in result.stdout
    assert sorted(path.name for path in tmp_path.iterdir()) == []


def test_demo_help_names_the_ai_sdk_version_it_records(tmp_path: Path) -> None:
    """``demo --help`` no longer says v6 while the demo conversation speaks v7."""
    shown = chatledger("demo", "--help", cwd=tmp_path)
    assert shown.returncode == 0
    assert "v7" in shown.stdout and "v6" not in shown.stdout
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    assert chatledger("demo", "--chat", "d", "--url", url, cwd=tmp_path).returncode == 0
    with ConversationStore.open(url) as store:
        assert store.ai_sdk_of("d") == 7


def test_version_prints_the_installed_version(tmp_path: Path) -> None:
    """``chatledger --version``: the version pip installed, and nothing else runs."""
    from importlib import metadata

    shown = chatledger("--version", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.strip() == f"chatledger {metadata.version('chatledger')}"
    assert list(tmp_path.iterdir()) == []
