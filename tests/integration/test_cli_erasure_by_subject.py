"""``chatledger erase --subject`` and ``chatledger export --subject``, run as real processes on a SQLite file."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatledger import ConversationStore
from tests.integration.test_cli_erasure import chatledger, log_rows, on_a_terminal
from tests.integration.test_erasure import SEAL
from tests.integration.test_erasure_by_subject import YAN, ZED, world


@pytest.fixture
def url(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    with ConversationStore.open(url) as store:
        world(store)
        store.operations.seal(SEAL)
    return url


def test_erase_subject_dry_run_asks_then_erases_with_progress(url: str, tmp_path: Path) -> None:
    """--dry-run lists and changes nothing; no terminal needs --yes; 'no' keeps it; --yes erases."""
    acme = ("--url", url, "--tenant", "acme", "erase", "--subject", ZED)
    who = ("--actor", "ops:olga", "--reason", "DSR 42")
    before = log_rows(url)
    dry = chatledger(*acme, *who, "--dry-run", cwd=tmp_path)
    assert dry.returncode == 0, dry.stderr
    assert "would erase: 'a-both'" in dry.stdout and "would erase: 'a-zed'" in dry.stdout
    assert "would pseudonymise: erased conversation" in dry.stdout
    assert "'a-yan'" not in dry.stdout and "'g-zed'" not in dry.stdout
    assert "dry run: 3 conversation(s) of 'user:zed-Q7X' in tenant 'acme'" in dry.stdout
    refused = chatledger(*acme, *who, cwd=tmp_path)
    assert refused.returncode == 1 and "--yes" in refused.stderr
    declined = on_a_terminal(*acme, *who, answer="no\n", cwd=tmp_path)
    assert declined.returncode == 1 and "would erase: 'a-zed'" in declined.stderr
    assert log_rows(url) == before

    done = chatledger(*acme, *who, "--yes", "--progress", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "erased: 'a-both'" in done.stdout and "erased: 'a-zed'" in done.stdout
    assert "erased 2 conversation(s) of 'user:zed-Q7X' in tenant 'acme'" in done.stdout
    assert "3/3" in done.stderr  # the progress bar
    audit = chatledger("--url", url, "--tenant", "acme", "audit", "a-zed", cwd=tmp_path)
    assert audit.returncode == 0 and ZED not in audit.stdout and "subject:" in audit.stdout
    with ConversationStore.open(url) as store:
        assert store.messages("a-yan", tenant="acme") and store.messages("g-zed", tenant="globex")
    assert chatledger("--url", url, "verify", cwd=tmp_path).returncode == 0

    both = chatledger("--url", url, "erase", "a-yan", "--subject", YAN, *who, cwd=tmp_path)
    assert both.returncode == 1 and "not both" in both.stderr
    named = chatledger(*acme[:-1], YAN, "--actor", "o", "--reason", YAN, "--yes", cwd=tmp_path)
    assert named.returncode == 1 and "reason names the subject" in named.stderr


def test_export_subject_writes_a_bundle_per_conversation(url: str, tmp_path: Path) -> None:
    out = tmp_path / "yan"
    acme = ("--url", url, "--tenant", "acme", "export", "--subject", YAN)
    done = chatledger(*acme, "--output", str(out), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "exported 'a-both'" in done.stdout and "exported 'a-yan'" in done.stdout
    assert "exported 2 conversation(s)" in done.stdout
    assert len(list(out.iterdir())) == 2
    key = tmp_path / "seal.key"
    key.write_text("an operator secret of thirty-two bytes")
    for bundle in out.iterdir():
        checked = chatledger(
            "verify-export", str(bundle), "--seal-key-file", str(key), cwd=tmp_path
        )
        assert checked.returncode == 0, checked.stdout + checked.stderr
    nowhere = chatledger(*acme, cwd=tmp_path)
    assert nowhere.returncode == 1 and "--output DIR" in nowhere.stderr
