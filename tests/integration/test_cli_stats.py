"""``chatledger stats`` and ``--progress`` on the long operations, run as real processes on a SQLite file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from chatledger import ConversationStore
from chatledger.domain.seal import SealKey
from tests.integration.stats_support import seed, stamp_events


def _chatledger(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The command as a script runs it: stderr is a pipe, not a terminal."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHATLEDGER_")}
    return subprocess.run(
        [sys.executable, "-m", "chatledger", *args],
        capture_output=True,
        stdin=subprocess.DEVNULL,
        text=True,
        cwd=cwd,
        env=env,
        timeout=60,
    )


@pytest.fixture
def url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A SQLite file holding the known conversations (acme and globex), sealed."""
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    clock = stamp_events(monkeypatch)
    with ConversationStore.open(url) as store:
        seed(store, clock)
        store.operations.seal(SealKey.from_text("the operator's seal secret, 32 bytes+"))
    monkeypatch.undo()
    return url


def test_stats_prints_the_figures_for_people(url: str, tmp_path: Path) -> None:
    """Counts, rates, decision times, queues and the per-tool and per-actor tables, in lines."""
    result = _chatledger("stats", "--url", url, "--tenant", "acme", cwd=tmp_path)

    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("tenant 'acme', as of ")
    assert "conversations: 4   streams: 5" in lines
    assert "approvals answered: 3 (approved 2 = 67%, denied 1 = 33%)" in lines
    assert "time to decision: median 2 min 0 s, p90 4 min 24 s" in lines
    assert any(line.startswith("awaiting approval: 1 (oldest waiting ") for line in lines)
    assert any(line.startswith("continuation queue: 1 (oldest waiting ") for line in lines)
    assert "refused chunks: 1   replays caught: 5" in lines
    tools = lines.index("per tool:")
    assert lines[tools + 1].split() == ["deleteFile", "2", "(approved", "2", "=", "100%,",
                                        "denied", "0", "=", "0%)"]  # fmt: skip
    actors = lines.index("per actor:")
    assert lines[actors + 1].split()[:2] == ["user:bob", "2"]
    assert result.stderr == ""  # no terminal, no --progress: no bar


def test_stats_json_is_the_api_body_of_the_tenant(url: str, tmp_path: Path) -> None:
    """``--json`` prints what ``GET /api/stats`` answers, for the tenant named."""
    result = _chatledger("stats", "--url", url, "--tenant", "globex", "--json", "--days", "7",
                         cwd=tmp_path)  # fmt: skip

    assert result.returncode == 0, result.stderr
    body = json.loads(result.stdout)
    assert (body["tenant"], body["conversations"], len(body["days"])) == ("globex", 1, 7)
    assert body["approvals"]["byTool"] == {"deleteFile": {"approved": 0, "denied": 1}}
    seconds = body["approvals"]["decisionSeconds"]  # within a second: a chunk's age in its batch
    assert seconds == {"median": pytest.approx(30, abs=1), "p90": pytest.approx(30, abs=1)}


def test_a_bad_window_is_named_by_its_flag(url: str, tmp_path: Path) -> None:
    """``--days 0`` is a usage error naming the flag and the range."""
    result = _chatledger("stats", "--url", url, "--days", "0", cwd=tmp_path)

    assert result.returncode == 2
    assert "--days: between 1 and 366, got 0" in result.stderr


@pytest.mark.parametrize(
    ("command", "bar"),
    [
        (("rebuild",), "rebuilding"),
        (("verify",), "checking log"),
        (("export", "a", "--tenant", "acme", "-o", "bundle.jsonl"), "exporting"),
        (("retain", "--older-than", "1d", "--dry-run"), "checking"),
        (("stats", "--tenant", "acme"), "reading"),
    ],
    ids=lambda value: value[0] if isinstance(value, tuple) else value,
)
def test_long_operations_show_progress_off_a_terminal_only_when_asked(
    url: str, tmp_path: Path, command: tuple[str, ...], bar: str
) -> None:
    """Without a terminal they are quiet on stderr; ``--progress`` shows the bar reaching 100%."""
    quiet = _chatledger(*command, "--url", url, cwd=tmp_path)
    shown = _chatledger(*command, "--url", url, "--progress", cwd=tmp_path)

    assert quiet.returncode == shown.returncode == 0, (quiet.stderr, shown.stderr)
    assert quiet.stderr == ""
    assert f"{bar}: 100%" in shown.stderr, shown.stderr
