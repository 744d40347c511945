"""The command line as a newcomer meets it: read-only commands, messages in CLI terms, approvals.

Run in-process through ``main()`` (the same code as the installed script)
against real SQLite files, and PostgreSQL for connection errors.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from chatledger import ConversationStore
from chatledger.adapters.cli.commands import main
from tests.integration.conftest import DEFAULT_POSTGRES_URL, POSTGRES_URL_ENV

CALL = "call_1"
PAUSED_TURN: list[dict[str, Any]] = [
    {"type": "start"},
    {"type": "start-step"},
    {
        "type": "tool-input-available",
        "toolCallId": CALL,
        "toolName": "delete_file",
        "input": {"path": "/tmp/x"},
    },
    {"type": "tool-approval-request", "approvalId": "ap_1", "toolCallId": CALL},
    {"type": "finish-step"},
    {"type": "finish", "finishReason": "tool-calls"},
]
CLIENT_TOOL_TURN: list[dict[str, Any]] = [
    {"type": "start"},
    {"type": "start-step"},
    {
        "type": "tool-input-available",
        "toolCallId": "call_w",
        "toolName": "weather",
        "input": {"city": "Paris"},
    },
    {"type": "finish-step"},
    {"type": "finish", "finishReason": "tool-calls"},
]


@pytest.fixture(autouse=True)
def _no_url_from_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("CHATLEDGER_URL", raising=False)
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'ledger.db'}"


def _paused(url: str, chat: str = "c", turn: list[dict[str, Any]] = PAUSED_TURN) -> None:
    with ConversationStore.open(url) as store:
        store.start_conversation(chat)
        store.append_message(
            chat, {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "clean up"}]}
        )
        store.ingest(chat, turn)


def _error(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(list(args)) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("chatledger: error: "), err
    return err


@pytest.mark.parametrize(
    "args",
    [["show", "c"], ["audit", "c"], ["convert", "c"], ["verify"], ["status", "c"], ["inbox"]],
)
def test_read_only_commands_never_create_a_store(
    args: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    err = _error(capsys, *args)
    assert f"sqlite:///{tmp_path / 'chatledger.db'}" in err and "--url" in err
    assert not (tmp_path / "chatledger.db").exists()
    missing = tmp_path / "other.db"
    assert "--url" in _error(capsys, *args, "--url", f"sqlite:///{missing}")
    assert not missing.exists()


def test_a_missing_conversation_names_the_store_and_suggests_url(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _paused(url, "there")
    for command in ("show", "audit", "convert", "status"):
        err = _error(capsys, command, "ghost", "--url", url)
        assert "'ghost'" in err and url in err and "--url" in err
        assert "start_conversation" not in err and "()" not in err


def test_converting_a_paused_turn_names_the_flag_not_the_python_option(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _paused(url)
    err = _error(capsys, "convert", "c", "--format", "anthropic", "--url", url)
    assert "--omit-unanswered" in err and "unanswered=" not in err
    assert main(["convert", "c", "--format", "anthropic", "--omit-unanswered", "--url", url]) == 0


@pytest.mark.parametrize("command", ["show", "convert"])
def test_at_version_past_the_end_is_an_error(
    command: str, url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _paused(url)
    with ConversationStore.open(url) as store:
        version = store.version("c")
    assert main([command, "c", "--at-version", str(version), "--url", url]) in (0, 1)
    capsys.readouterr()
    err = _error(capsys, command, "c", "--at-version", str(version + 1), "--url", url)
    assert f"--at-version {version + 1} is past the end" in err and f"version {version}" in err


def test_status_inbox_and_approve_from_the_shell(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _paused(url)
    assert main(["status", "c", "--url", url]) == 0
    shown = capsys.readouterr().out
    assert "awaiting-approval" in shown and f"chatledger approve c {CALL}" in shown
    assert main(["inbox", "--url", url]) == 0
    shown = capsys.readouterr().out
    assert f"c  {CALL}  delete_file" in shown
    assert main(["inbox", "--json", "--url", url]) == 0
    assert [item["toolCallId"] for item in json.loads(capsys.readouterr().out)] == [CALL]

    assert main(["approve", "c", CALL, "--actor", "user:ann", "--url", url]) == 0
    assert "approved tool call call_1" in capsys.readouterr().out
    assert main(["approve", "c", CALL, "--url", url]) == 0  # the same answer again: nothing
    assert "nothing recorded" in capsys.readouterr().out
    assert "already approved" in _error(capsys, "deny", "c", CALL, "--url", url)
    assert main(["inbox", "--url", url]) == 0
    assert "no tool call awaits approval" in capsys.readouterr().out
    with ConversationStore.open(url) as store:
        decision = store.history("c", kinds=["approval-responded"])[-1]
        assert decision.actor == "user:ann"
        assert store.status("c").status == "ready-to-continue"
    assert main(["status", "c", "--json", "--url", url]) == 0
    assert json.loads(capsys.readouterr().out)["status"] == "ready-to-continue"


def test_deny_with_a_reason_and_no_continuation(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _paused(url)
    assert main(["deny", "c", CALL, "--reason", "not today", "--no-continue", "--url", url]) == 0
    assert "denied tool call call_1" in capsys.readouterr().out
    with ConversationStore.open(url) as store:
        part = store.messages("c")[-1]["parts"][-1]
        assert part["state"] == "output-denied" and part["approval"]["reason"] == "not today"
        assert store.pending_continuations() == []


def test_tool_output_gives_a_client_tool_its_result(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _paused(url, turn=CLIENT_TOOL_TURN)
    assert main(["status", "c", "--url", url]) == 0
    assert "chatledger tool-output c call_w --json VALUE" in capsys.readouterr().out
    assert "--json is not JSON" in _error(
        capsys, "tool-output", "c", "call_w", "--json", "{nope", "--url", url
    )
    assert main(["tool-output", "c", "call_w", "--json", '{"temp": 21}', "--url", url]) == 0
    assert "continuation is queued" in capsys.readouterr().out
    with ConversationStore.open(url) as store:
        assert store.messages("c")[-1]["parts"][-1]["output"] == {"temp": 21}
    assert "no tool call" in _error(
        capsys, "tool-output", "c", "nope", "--error", "x", "--url", url
    )


def _postgres(**changes: str) -> str:
    from urllib.parse import urlsplit, urlunsplit

    base = urlsplit(os.environ.get(POSTGRES_URL_ENV) or DEFAULT_POSTGRES_URL)
    netloc = changes.get("netloc", base.netloc)
    path = changes.get("path", base.path)
    return urlunsplit(base._replace(netloc=netloc, path=path, query=""))


@pytest.mark.postgres
def test_postgres_connection_errors_say_the_cause(
    postgres_server: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from urllib.parse import urlsplit

    base = urlsplit(_postgres())
    refused = _postgres(netloc=f"{base.username}@{base.hostname}:1")
    assert "connection refused by" in _error(capsys, "demo", "--url", refused)
    nodb = _postgres(path="/chatledger_no_such_database")
    err = _error(capsys, "demo", "--url", nodb)
    assert "database 'chatledger_no_such_database' does not exist" in err
    nouser = _postgres(netloc=f"chatledger_no_such_user@{base.hostname}:{base.port or 5432}")
    err = _error(capsys, "inbox", "--url", nouser)
    assert "chatledger_no_such_user" in err and "does not exist" in err
    assert "couldn't get a connection" not in err


TURN: list[dict[str, Any]] = [
    {"type": "start"},
    {"type": "start-step"},
    {"type": "text-start", "id": "t1"},
    {"type": "text-delta", "id": "t1", "delta": "Hello"},
    {"type": "text-end", "id": "t1"},
    {"type": "finish-step"},
    {"type": "finish", "finishReason": "stop"},
]


def _ingest(url: str, tmp_path: Path, text: str, *extra: str) -> int:
    (tmp_path / "capture.txt").write_text(text)
    return main(["ingest", "c", "capture.txt", "--url", url, "--create", *extra])


def test_ingest_exits_non_zero_when_a_chunk_is_refused(
    url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _ingest(url, tmp_path, json.dumps({"type": "text-delta", "id": "x", "delta": "y"})) == 1
    assert "1 chunk refused" in capsys.readouterr().err
    assert _ingest(url, tmp_path, "\n".join(json.dumps(c) for c in CLIENT_TOOL_TURN)) == 0
    replay = json.dumps(CLIENT_TOOL_TURN[2])  # the same call again: recorded, changes nothing
    assert _ingest(url, tmp_path, replay, "--continuation") == 1
    assert "no chunk was applied" in capsys.readouterr().err


def test_a_capture_without_finish_closes_as_interrupted(
    url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _ingest(url, tmp_path, "\n".join(json.dumps(c) for c in TURN[:4])) == 0
    assert "closed as interrupted" in capsys.readouterr().out
    with ConversationStore.open(url) as store:
        closed = store.history("c", kinds=["stream-closed"])[-1]
        assert closed.details["outcome"] == "interrupted"
        assert store.status("c").last_outcome == "interrupted"


def test_an_sse_capture_without_blank_lines_is_read_per_data_line(
    url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capture = "".join(f"data: {json.dumps(c)}\n" for c in TURN) + "data: [DONE]\n"
    assert _ingest(url, tmp_path, capture) == 0
    assert "7 applied, 0 replayed, 0 refused" in capsys.readouterr().out
    broken = [f"data: {json.dumps(c)}" for c in TURN]
    broken[3] = 'data: {"type": "text-delta", oops'
    assert _ingest(url, tmp_path, "\n".join(broken), "--continuation") == 1
    out = capsys.readouterr().out
    assert "line 4: not valid JSON" in out
