"""``chatledger seal``, ``verify`` and ``rebuild`` on a tampered log, run as real processes on a SQLite file."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from chatledger import ConversationStore
from chatledger.adapters.responders import demo
from tests.integration.tamper import Tamperer

SECRET = "an operator secret of thirty-two bytes"


def chatledger(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("CHATLEDGER_")}
    return subprocess.run(
        [sys.executable, "-m", "chatledger", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=environ | (env or {}),
        timeout=60,
    )


@pytest.fixture
def url(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    with ConversationStore.open(url) as store:
        demo.record_demo(store, "done")
        store.start_conversation("other")
    return url


def test_seal_then_verify_with_the_key_from_a_file_and_from_the_environment(
    url: str, tmp_path: Path
) -> None:
    key_file = tmp_path / "seal.key"
    key_file.write_text(SECRET + "\n")
    sealed = chatledger("seal", "--url", url, "--seal-key-file", str(key_file), cwd=tmp_path)
    assert sealed.returncode == 0, sealed.stderr
    assert sealed.stdout.startswith("seal 1: 2 conversation(s) at ")
    checked = chatledger("verify", "--url", url, cwd=tmp_path, env={"CHATLEDGER_SEAL_KEY": SECRET})
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "chain: every event of 2 conversation(s)" in checked.stdout
    assert "seal 1 of " in checked.stdout and "(signature checked" in checked.stdout


def test_seal_without_a_key_or_with_a_short_one_says_how_to_give_one(
    url: str, tmp_path: Path
) -> None:
    missing = chatledger("seal", "--url", url, cwd=tmp_path)
    assert missing.returncode == 1
    assert "no seal key: pass --seal-key-file PATH" in missing.stderr
    short = chatledger("seal", "--url", url, cwd=tmp_path, env={"CHATLEDGER_SEAL_KEY": "short"})
    assert short.returncode == 1 and "too short" in short.stderr
    unreadable = chatledger("seal", "--url", url, "--seal-key-file", "nope", cwd=tmp_path)
    assert "cannot read the seal key file 'nope'" in unreadable.stderr


def test_verify_names_a_deleted_tail_and_rebuild_refuses_it_unless_told(
    url: str, tmp_path: Path
) -> None:
    env = {"CHATLEDGER_SEAL_KEY": SECRET}
    assert chatledger("seal", "--url", url, cwd=tmp_path, env=env).returncode == 0
    tamperer = Tamperer(url)
    head = tamperer.head("done")
    tamperer.run(
        "DELETE FROM stored_events WHERE originator_id = ? AND originator_version > ?",
        tamperer.key("done"),
        head - 2,
    )
    checked = chatledger("verify", "--url", url, cwd=tmp_path, env=env)
    assert checked.returncode == 1
    assert (
        f"chain: chat 'done' (tenant 'default'): truncated at version {head - 1}: seal 1 covers "
        f"it up to version {head}; the log ends at version {head - 2}"
    ) in checked.stdout
    refused = chatledger("rebuild", "--url", url, cwd=tmp_path)
    assert refused.returncode == 1
    assert "refusing to rebuild the read models" in refused.stderr
    assert "--accept-broken-chain" in refused.stderr
    forced = chatledger("rebuild", "--url", url, "--accept-broken-chain", cwd=tmp_path)
    assert forced.returncode == 0, forced.stderr
    again = chatledger("verify", "--url", url, cwd=tmp_path, env=env)
    assert "note: " in again.stdout and "rebuild the read models: done although" in again.stdout


def test_seal_every_keeps_sealing_until_terminated(url: str, tmp_path: Path) -> None:
    import signal

    environ = {k: v for k, v in os.environ.items() if not k.startswith("CHATLEDGER_")}
    process = subprocess.Popen(
        [sys.executable, "-m", "chatledger", "seal", "--url", url, "--every", "0.2s"],
        stdout=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env=environ | {"CHATLEDGER_SEAL_KEY": SECRET},
    )
    try:
        assert process.stdout is not None
        first, second = process.stdout.readline(), process.stdout.readline()
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(30) == 0
    assert first.startswith("seal 1: 2 conversation(s)")
    assert second.startswith("seal 2: 2 conversation(s)")
    checked = chatledger("verify", "--url", url, cwd=tmp_path, env={"CHATLEDGER_SEAL_KEY": SECRET})
    assert checked.returncode == 0, checked.stdout


def test_a_database_file_put_back_to_an_older_copy_fails_verify_with_a_witness(
    url: str, tmp_path: Path
) -> None:
    """The SQLite file itself copied back: alone it verifies; against the witness it does not."""
    env = {"CHATLEDGER_SEAL_KEY": SECRET}
    witness = tmp_path / "elsewhere" / "seals.jsonl"
    witness.parent.mkdir()
    first = chatledger("seal", "--url", url, "--witness", str(witness), cwd=tmp_path, env=env)
    assert first.returncode == 0, first.stderr
    database = Path(url.removeprefix("sqlite:///"))
    older = database.read_bytes()
    with ConversationStore.open(url) as store:
        store.start_conversation("later")
    second = chatledger("seal", "--url", url, "--witness", str(witness), cwd=tmp_path, env=env)
    assert second.returncode == 0, second.stderr
    digest = second.stdout.rsplit("digest ", 1)[1].strip()
    assert len(witness.read_text().splitlines()) == 2
    database.write_bytes(older)
    for wal in database.parent.glob(database.name + "-*"):
        wal.unlink()
    alone = chatledger("verify", "--url", url, cwd=tmp_path, env=env)
    assert alone.returncode == 0, alone.stdout + alone.stderr
    witnessed = chatledger("verify", "--url", url, "--witness", str(witness), cwd=tmp_path, env=env)
    assert witnessed.returncode == 1, witnessed.stdout + witnessed.stderr
    assert "records seal 2" in witnessed.stdout and "its newest seal is 1" in witnessed.stdout
    pinned = chatledger("verify", "--url", url, "--expect-seal", f"2:{digest}", cwd=tmp_path)
    assert pinned.returncode == 1 and "--expect-seal records seal 2" in pinned.stdout


def test_verify_signed_writes_names_an_event_appended_without_the_key(
    url: str, tmp_path: Path
) -> None:
    """A store written with CHATLEDGER_SIGN_WRITES=1, then a copied event appended by hand."""
    env = {"CHATLEDGER_SEAL_KEY": SECRET, "CHATLEDGER_SIGN_WRITES": "1"}
    assert chatledger("seal", "--url", url, cwd=tmp_path, env=env).returncode == 0
    signed = chatledger("demo", "--url", url, "--chat", "later", cwd=tmp_path, env=env)
    assert signed.returncode == 0, signed.stderr
    honest = chatledger("verify", "--url", url, cwd=tmp_path, env=env)
    assert honest.returncode == 0, honest.stdout + honest.stderr
    tamperer = Tamperer(url)
    added = tamperer.append_copy("later", tamperer.head("later"), b"", b"")  # the head, again
    alone = chatledger("verify", "--url", url, cwd=tmp_path, env={"CHATLEDGER_SEAL_KEY": SECRET})
    assert "unsigned-tail" not in alone.stdout  # without --signed-writes the chain holds
    checked = chatledger("verify", "--url", url, cwd=tmp_path, env=env)
    assert checked.returncode == 1
    assert "unsigned-tail" in checked.stdout and f"version {added}" in checked.stdout
