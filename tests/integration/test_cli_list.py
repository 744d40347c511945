"""``chatledger list``: the conversation list on the command line (run as a real process)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from chatledger import ConversationStore
from tests.integration.hitl_support import paused_turn, user


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "chatledger", *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
    )


def test_list_searches_pages_and_stays_in_its_tenant(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    with ConversationStore.open(url) as store:
        paused_turn(store, "waiting")
        store.start_conversation("greeting")
        store.append_message("greeting", user("u1", "Hello there, General Kenobi"))
        store.start_conversation("elsewhere", tenant="other")
        store.append_message("elsewhere", user("u1", "Hello from another tenant"), tenant="other")

    listed = _run(tmp_path, "list", "--url", url)
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert len(lines) == 2
    assert "greeting" in lines[0] and "Hello there, General Kenobi" in lines[0]
    assert "waiting" in lines[1] and "[1 awaiting approval]" in lines[1]

    found = _run(tmp_path, "list", "--url", url, "--query", "kenobi", "--json")
    page = json.loads(found.stdout)
    assert [row["id"] for row in page["conversations"]] == ["greeting"]
    assert page["nextCursor"] is None

    first = json.loads(_run(tmp_path, "list", "--url", url, "--limit", "1", "--json").stdout)
    second = _run(tmp_path, "list", "--url", url, "--cursor", first["nextCursor"], "--json")
    assert [r["id"] for r in json.loads(second.stdout)["conversations"]] == ["waiting"]

    none = _run(tmp_path, "list", "--url", url, "--query", "another")
    assert none.stdout.strip() == "no conversations match"

    bad = _run(tmp_path, "list", "--url", url, "--status", "busy")
    assert bad.returncode == 2 and "invalid choice: 'busy'" in bad.stderr
    broken = _run(tmp_path, "list", "--url", url, "--cursor", "nonsense")
    assert broken.returncode == 1 and "cursor" in broken.stderr
