"""The ``chatledger`` command line, run as a real process against a real SQLite file."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from chatledger import ConversationStore
from chatledger.adapters.cli.commands import main
from chatledger.adapters.responders.demo import DENIAL_REASON

Run = Callable[..., subprocess.CompletedProcess[str]]

TURN = [
    {"type": "start"},
    {"type": "start-step"},
    {"type": "text-start", "id": "t1"},
    {"type": "text-delta", "id": "t1", "delta": "Hello"},
    {"type": "text-delta", "id": "t1", "delta": ", world"},
    {"type": "text-end", "id": "t1"},
    {"type": "finish-step"},
    {"type": "finish", "finishReason": "stop"},
]


@pytest.fixture
def url(tmp_path: Path) -> str:
    """A store URL naming a SQLite file in the test's own folder."""
    return f"sqlite:///{tmp_path / 'ledger.db'}"


@pytest.fixture
def run(tmp_path: Path) -> Run:
    """Run ``python -m chatledger`` in tmp_path, with no CHATLEDGER_URL inherited."""

    def run_(
        *args: str, stdin: str | None = None, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "chatledger", *args],
            input=stdin,
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env=_environ(env),
            timeout=60,
        )

    return run_


@dataclass(frozen=True)
class Demo:
    """A demo conversation recorded once for the module by ``chatledger demo``."""

    url: str
    chat: str
    output: subprocess.CompletedProcess[str]


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Demo:
    """Run ``chatledger demo`` once into a SQLite file; tests only read it."""
    folder = tmp_path_factory.mktemp("demo")
    url = f"sqlite:///{folder / 'ledger.db'}"
    output = subprocess.run(
        [sys.executable, "-m", "chatledger", "demo", "--url", url, "--chat", "demo-1"],
        capture_output=True,
        text=True,
        cwd=folder,
        env=_environ(),
        timeout=60,
    )
    assert output.returncode == 0, output.stderr
    return Demo(url, "demo-1", output)


def _environ(extra: dict[str, str] | None = None) -> dict[str, str]:
    """This process's environment without CHATLEDGER_URL, plus ``extra``."""
    return {k: v for k, v in os.environ.items() if k != "CHATLEDGER_URL"} | (extra or {})


def _messages(url: str, chat: str, tenant: str = "default") -> list[dict[str, object]]:
    with ConversationStore.open(url, tenant=tenant) as store:
        return store.messages(chat)


def _clean_error(result: subprocess.CompletedProcess[str]) -> str:
    """The one stderr line of a failed command (and check that it is one line, no traceback)."""
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("chatledger: error: ")
    return lines[0]


# -- demo ------------------------------------------------------------------------------


def test_demo_prints_the_denied_call_with_its_reason_and_the_ignored_replays(demo: Demo) -> None:
    """The demo's printout shows the output-denied tool part, the denial reason and the replays."""
    result = demo.output
    assert "tool delete_file" in result.stdout
    assert "output-denied" in result.stdout
    assert DENIAL_REASON in result.stdout
    assert re.search(r"recorded \d+ events; 5 replayed chunks ignored", result.stdout)


def test_demo_stores_the_denial_and_the_final_answer_in_one_assistant_message(demo: Demo) -> None:
    """What the demo wrote reads back through the Python API: denied call, then the answer."""
    user, assistant = _messages(demo.url, demo.chat)
    assert user["role"] == "user"
    parts = assistant["parts"]
    assert isinstance(parts, list)
    tools = [p for p in parts if p["type"] == "tool-delete_file"]
    assert len(tools) == 1  # the provider's replay added no second part
    assert tools[0]["state"] == "output-denied"
    assert tools[0]["approval"]["approved"] is False
    assert tools[0]["approval"]["reason"] == DENIAL_REASON
    assert parts[-1]["type"] == "text" and "won't delete" in parts[-1]["text"]


def test_demo_starts_a_fresh_conversation_on_each_run(run: Run, url: str) -> None:
    """Without --chat, two runs give two conversations, both kept."""
    ids = []
    for _ in range(2):
        result = run("demo", "--url", url)
        assert result.returncode == 0, result.stderr
        match = re.search(r"Recorded demo conversation '([^']+)'", result.stdout)
        assert match is not None
        ids.append(match.group(1))
    assert ids[0] != ids[1]
    assert all(len(_messages(url, chat)) == 2 for chat in ids)


def test_demo_refuses_a_chat_id_that_already_exists(run: Run, url: str) -> None:
    """--chat naming an existing conversation is a clear error, not a silent overwrite."""
    assert run("demo", "--url", url, "--chat", "taken").returncode == 0
    assert "already exists" in _clean_error(run("demo", "--url", url, "--chat", "taken"))


def test_installed_script_records_the_demo_in_the_default_sqlite_file(tmp_path: Path) -> None:
    """The ``chatledger`` console script works, and defaults to ./chatledger.db."""
    script = Path(sys.executable).parent / "chatledger"
    found = str(script) if script.exists() else shutil.which("chatledger")
    if found is None:
        pytest.skip("the chatledger console script is not installed")
    result = subprocess.run(
        [found, "demo", "--chat", "d"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=_environ(),
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "chatledger.db").is_file()
    assert len(_messages(f"sqlite:///{tmp_path / 'chatledger.db'}", "d")) == 2


# -- show ------------------------------------------------------------------------------


def test_show_json_gives_back_exactly_the_stored_messages(run: Run, demo: Demo) -> None:
    """``show --json`` prints the UIMessages the store holds, JSON-equal."""
    result = run("show", demo.chat, "--url", demo.url, "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == _messages(demo.url, demo.chat)


def test_show_at_a_version_gives_the_conversation_as_it_stood_then(run: Run, demo: Demo) -> None:
    """At version 2 (created, user message) only the question is there."""
    result = run("show", demo.chat, "--url", demo.url, "--json", "--at-version", "2")
    assert result.returncode == 0, result.stderr
    assert [m["role"] for m in json.loads(result.stdout)] == ["user"]


def test_show_before_the_conversation_existed_gives_no_messages(run: Run, demo: Demo) -> None:
    """--at-time before the first event shows an empty conversation."""
    result = run(
        "show", demo.chat, "--url", demo.url, "--json", "--at-time", "2000-01-01T00:00:00Z"
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == []


def test_show_reads_the_url_from_the_environment(run: Run, demo: Demo) -> None:
    """CHATLEDGER_URL is used when --url is not given; the default view is readable text."""
    result = run("show", demo.chat, env={"CHATLEDGER_URL": demo.url})
    assert result.returncode == 0, result.stderr
    assert "[assistant]" in result.stdout and "output-denied" in result.stdout


# -- ingest ----------------------------------------------------------------------------


def test_ingest_of_a_jsonl_file_reports_counts_and_the_bad_lines(
    run: Run, url: str, tmp_path: Path
) -> None:
    """Good lines are applied; a malformed line is refused, named by its line number."""
    lines = [json.dumps(c) for c in TURN]
    lines.insert(4, '{"type": "text-delta", oops')  # becomes line 5
    (tmp_path / "turn.jsonl").write_text("\n".join(lines) + "\n")
    result = run("ingest", "c", "turn.jsonl", "--url", url, "--create", "--actor", "agent:bot")
    assert result.returncode == 1, result.stderr  # a line was refused
    assert "1 chunk refused" in result.stderr
    assert "9 chunks (jsonl)" in result.stdout
    assert "8 applied, 0 replayed, 1 refused" in result.stdout
    assert "line 5: not valid JSON" in result.stdout
    [message] = _messages(url, "c")
    assert [p.get("text") for p in message["parts"] if p["type"] == "text"] == ["Hello, world"]


def test_ingest_of_an_sse_capture_from_stdin(run: Run, url: str) -> None:
    """An SSE capture (comments, CRLF, [DONE]) read from ``-`` folds like the JSONL."""
    capture = ": stream-open\r\n\r\n" + "".join(f"data: {json.dumps(c)}\r\n\r\n" for c in TURN)
    capture += "data: [DONE]\r\n\r\n"
    result = run("ingest", "c", "-", "--url", url, "--create", stdin=capture)
    assert result.returncode == 0, result.stderr
    assert "8 chunks (sse)" in result.stdout
    assert "8 applied, 0 replayed, 0 refused" in result.stdout
    [message] = _messages(url, "c")
    assert message["parts"][1] == {"type": "text", "text": "Hello, world", "state": "done"}


def test_ingest_continuation_extends_the_last_assistant_message(
    run: Run, url: str, tmp_path: Path
) -> None:
    """--continuation writes into the same message instead of a new one."""
    (tmp_path / "a.jsonl").write_text("\n".join(json.dumps(c) for c in TURN))
    assert run("ingest", "c", "a.jsonl", "--url", url, "--create").returncode == 0
    result = run("ingest", "c", "a.jsonl", "--url", url, "--continuation")
    assert result.returncode == 0, result.stderr
    [message] = _messages(url, "c")
    assert sum(p["type"] == "text" for p in message["parts"]) == 2


def test_ingest_reports_chunks_the_store_refuses_with_their_reason(
    run: Run, url: str, tmp_path: Path
) -> None:
    """A well-formed but invalid chunk is refused with the store's reason and its line."""
    chunks = [*TURN[:3], {"type": "text-delta", "id": "nope", "delta": "x"}, *TURN[3:]]
    (tmp_path / "a.jsonl").write_text("\n".join(json.dumps(c) for c in chunks))
    result = run("ingest", "c", "a.jsonl", "--url", url, "--create")
    assert result.returncode == 1, result.stderr
    assert "line 4: 'text-delta' chunk at position 3 refused" in result.stdout


# -- errors ----------------------------------------------------------------------------


def test_a_bad_url_is_one_clear_line_and_exit_code_1(run: Run) -> None:
    """An unsupported scheme names the URL and the accepted forms."""
    line = _clean_error(run("show", "c", "--url", "ftp://example.com/x"))
    assert "ftp://example.com/x" in line and "sqlite:///" in line


def test_a_sqlite_file_in_a_missing_folder_is_a_clear_error(run: Run, tmp_path: Path) -> None:
    """The folder that does not exist is named."""
    line = _clean_error(run("demo", "--url", f"sqlite:///{tmp_path / 'no' / 'x.db'}"))
    assert "does not exist" in line


def test_showing_a_missing_conversation_is_a_clear_error(run: Run, url: str) -> None:
    """The missing chat id is named, with exit code 1 (and a missing store is said as such)."""
    assert "no chatledger store at" in _clean_error(run("show", "ghost", "--url", url))
    ConversationStore.open(url).close()
    assert "'ghost'" in _clean_error(run("show", "ghost", "--url", url))


def test_ingest_into_a_missing_conversation_suggests_create(
    run: Run, url: str, tmp_path: Path
) -> None:
    """Without --create, a missing conversation is an error that says how to fix it."""
    (tmp_path / "a.jsonl").write_text(json.dumps(TURN[0]))
    assert "--create" in _clean_error(run("ingest", "ghost", "a.jsonl", "--url", url))


def test_ingest_of_a_missing_file_is_a_clear_error(run: Run, url: str) -> None:
    """An unreadable FILE is reported as such, not as a traceback."""
    assert "cannot read missing.jsonl" in _clean_error(
        run("ingest", "c", "missing.jsonl", "--url", url)
    )


def test_tenants_do_not_see_each_others_conversations(run: Run, url: str, tmp_path: Path) -> None:
    """A chat created under one --tenant is missing under another."""
    (tmp_path / "a.jsonl").write_text("\n".join(json.dumps(c) for c in TURN))
    assert (
        run("--tenant", "acme", "ingest", "c", "a.jsonl", "--url", url, "--create").returncode == 0
    )
    assert run("show", "c", "--url", url, "--tenant", "acme").returncode == 0
    _clean_error(run("show", "c", "--url", url, "--tenant", "other"))


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["frobnicate"],
        ["show"],
        ["show", "c", "--at-version", "zero"],
        ["show", "c", "--at-time", "noon"],
    ],
)
def test_bad_usage_exits_with_code_2(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """Missing or malformed arguments are usage errors (exit 2) with argparse's message."""
    assert main(args) == 2
    assert "usage:" in capsys.readouterr().err


def test_bad_usage_exits_with_code_2_from_the_real_process(run: Run) -> None:
    """The process exit status is main()'s return value."""
    result = run("show")
    assert result.returncode == 2
    assert "the following arguments are required: CHAT" in result.stderr


@pytest.mark.parametrize(
    "command",
    ["serve", "demo", "show", "ingest", "audit", "convert", "rebuild", "project", "verify"],
)
def test_every_command_has_help(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    """``COMMAND --help`` explains the command and its store options."""
    assert main([command, "--help"]) == 0
    shown = capsys.readouterr().out
    assert "--url" in shown and "--tenant" in shown and "CHATLEDGER_URL" in shown


def test_audit_prints_one_line_per_event_with_the_denial_and_its_reason(
    run: Run, demo: Demo
) -> None:
    """The timeline names who denied which tool and why; batches with replays are marked.

    A line per event, but each stream's run of chunk batches on one line (one per batch with
    --every-event: this test counted a line per event before the timeline was grouped).
    """
    result = run("audit", demo.chat, "--url", demo.url)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    every = run("audit", demo.chat, "--url", demo.url, "--every-event").stdout.splitlines()
    with ConversationStore.open(demo.url) as store:
        assert len(every) == store.version(demo.chat)
        assert len(lines) == len(store.timeline(demo.chat).rows) < len(every)
    denial = [line for line in lines if "approval-responded" in line]
    assert len(denial) == 1
    assert "denied `delete_file`" in denial[0] and DENIAL_REASON[:30] in denial[0]
    assert any("[replay]" in line for line in lines)


def test_audit_jsonl_exports_every_entry_and_filters_by_kind(run: Run, demo: Demo) -> None:
    """--jsonl gives one JSON object per line; --kind keeps only that kind."""
    result = run("audit", demo.chat, "--url", demo.url, "--jsonl", "--kind", "stream-opened")
    assert result.returncode == 0, result.stderr
    entries = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(entries) == 2
    assert {entry["kind"] for entry in entries} == {"stream-opened"}
    bad = run("audit", demo.chat, "--url", demo.url, "--kind", "nonsense")
    assert bad.returncode == 1 and "unknown timeline kind" in bad.stderr


def test_rebuild_reports_what_it_rebuilt_and_changes_no_read(run: Run, demo: Demo) -> None:
    """A rebuild replays the whole log into the read models; reads give the same answers."""
    before = run("show", demo.chat, "--url", demo.url, "--json").stdout
    audit_before = run("audit", demo.chat, "--url", demo.url, "--jsonl").stdout
    result = run("rebuild", "--url", demo.url)
    assert result.returncode == 0, result.stderr
    assert re.search(r"rebuilt the read models from \d+ events", result.stdout)
    assert "1 conversation," in result.stdout
    assert run("show", demo.chat, "--url", demo.url, "--json").stdout == before
    assert run("audit", demo.chat, "--url", demo.url, "--jsonl").stdout == audit_before


def test_project_once_catches_up_and_says_how_much(run: Run, url: str) -> None:
    """`project --once` applies what is pending and exits."""
    with ConversationStore.open(url) as store:
        store.start_conversation("c1")
    result = run("project", "--url", url, "--once")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "applied 1 event"
    assert run("project", "--url", url, "--once").stdout.strip() == "applied 0 events"


def test_convert_prints_the_denial_as_an_anthropic_tool_result(run: Run, demo: Demo) -> None:
    """The denied call of the demo reaches the model as an error result carrying the reason."""
    result = run("convert", demo.chat, "--url", demo.url, "--format", "anthropic")
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    results = [
        block
        for message in payload["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]
    assert len(results) == 1
    assert results[0]["is_error"] is True
    assert DENIAL_REASON in json.dumps(results[0]["content"])


# -- serve -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "names"),
    [
        (["--token", "t=acme"], "a token on the command line is visible to every local user"),
        (["--responder", "nowhere"], "--responder takes 'demo' or MODULE:NAME, got 'nowhere'"),
        (
            ["--responder", "no_such_module_x:bot"],
            "--responder no_such_module_x:bot: cannot import",
        ),
        (["--responder", "json:dumps"], "json:dumps: calling it to make the responder failed"),
        (["--responder", "os:sep"], "str is not a responder"),
    ],
)
def test_serve_refuses_bad_options_in_one_line(
    run: Run, url: str, args: list[str], names: str
) -> None:
    """A bad token pair or responder is one clear line before anything listens."""
    result = run("serve", "--url", url, "--port", "1", *args)
    assert names in _clean_error(result)


def test_serve_loads_a_responder_by_name(tmp_path: Path) -> None:
    """``--responder MODULE:NAME`` takes a responder object or a function returning one."""
    from chatledger.adapters.cli.common import load_responder
    from chatledger.adapters.responders.pydantic_ai import PydanticAIResponder
    from chatledger.adapters.responders.scripted import DemoResponder, ScriptedResponder

    (tmp_path / "my_bot.py").write_text(
        "from chatledger.adapters.responders.scripted import ScriptedResponder\n"
        "bot = ScriptedResponder([[{'type': 'start'}]])\n"
        "def make():\n    return ScriptedResponder([], actor='agent:made')\n"
        "from pydantic_ai import Agent\n"
        "from pydantic_ai.models.test import TestModel\n"
        "agent = Agent(TestModel(), name='ops')\n"
    )
    sys.path.insert(0, str(tmp_path))
    try:
        made = load_responder("my_bot:make", 0.0)
        assert isinstance(made, ScriptedResponder) and made.actor == "agent:made"
        loaded = load_responder("my_bot:bot", 0.0)
        assert isinstance(loaded, ScriptedResponder) and loaded.scripts == [[{"type": "start"}]]
        wrapped = load_responder("my_bot:agent", 0.0)
        assert isinstance(wrapped, PydanticAIResponder) and wrapped.agent.name == "ops"
        demo = load_responder("demo", 0.25)
        assert isinstance(demo, DemoResponder) and demo.delay == 0.25
    finally:
        sys.path.remove(str(tmp_path))


# -- verify ----------------------------------------------------------------------------


def test_verify_says_all_agrees_or_lists_each_problem(run: Run, url: str, tmp_path: Path) -> None:
    """Exit 0 and one line when the store agrees with its log; exit 1 and each problem otherwise."""
    assert run("demo", "--url", url, "--chat", "d").returncode == 0
    with ConversationStore.open(url) as store:
        events = store.version("d")  # the demo's count depends on when its batches committed
    clean = run("verify", "--url", url)
    assert clean.returncode == 0, clean.stderr
    assert clean.stdout.strip().splitlines() == [
        "chain: every event of 1 conversation(s)",
        "seals: none yet ('chatledger seal' makes one)",
        f"verified 1 conversation, {events} events: everything agrees with the event log",
    ]
    with sqlite3.connect(tmp_path / "ledger.db", isolation_level=None) as db:
        db.execute("UPDATE chatledger_conversations_v2 SET status = 'idle-ish'")
    broken = run("verify", "d", "--url", url)
    assert broken.returncode == 1
    lines = broken.stdout.strip().splitlines()
    assert lines[0] == (
        "read-model: chat 'd' (tenant 'default'): status 'idle-ish', expected 'idle'"
    )
    assert lines[-1].startswith(f"verified 1 conversation, {events} events: 1 problem.")
    assert "chatledger rebuild" in lines[-1]
    assert run("rebuild", "--url", url).returncode == 0
    assert run("verify", "--url", url).returncode == 0


def test_serve_on_a_port_in_use_says_so_and_exits_cleanly(run: Run, url: str) -> None:
    """The server cannot bind: it says why and exits with an error status (no crash at shutdown)."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run("serve", "--url", url, "--port", str(port))
    assert result.returncode not in (0, -11, 139), result
    assert "is already in use" in result.stderr and "--port" in result.stderr
    assert "Fatal Python error" not in result.stderr
