"""Verifiable export: a bundle written from a real store verifies offline, and any flipped byte is named by line."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519

from chatledger import ConversationStore
from chatledger.adapters.responders import demo
from chatledger.domain.bundle import verify_bundle
from chatledger.domain.errors import InvalidInputError
from chatledger.domain.seal import SealKey
from tests.integration.conftest import Backend

KEY = SealKey.from_text("an operator secret of thirty-two bytes")


def filled(url: str, key: SealKey = KEY) -> int:
    """The demo conversation 'done' and another, sealed; returns how many events 'done' has."""
    with ConversationStore.open(url) as store:
        events = demo.record_demo(store, "done").events
        store.start_conversation("other")
        store.operations.seal(key)
    return events


def bundle(url: str, at_version: int | None = None) -> bytes:
    out = io.StringIO()
    with ConversationStore.open(url) as store:
        store.operations.export("done", out, at_version=at_version)
    return out.getvalue().encode("ascii")


def test_an_exported_conversation_verifies_offline(durable_backend: Backend) -> None:
    events = filled(durable_backend.url)
    raw = bundle(durable_backend.url)
    report = verify_bundle(raw, KEY)
    assert report.ok, report.problem
    assert (report.chat_id, report.version, report.sealed) == ("done", events, events)
    lines = [json.loads(line) for line in raw.splitlines()]
    assert [line["type"] for line in lines] == ["header", *["event"] * events, "seal", "end"]
    started = json.loads(lines[1]["content"])
    assert started["chat_id"] == "done"  # the stored JSON itself, readable
    assert not verify_bundle(raw, SealKey.from_text("somebody else's secret, 32 b")).ok


def test_an_export_at_an_earlier_version_carries_the_chain_to_the_seal(
    durable_backend: Backend,
) -> None:
    events = filled(durable_backend.url)
    raw = bundle(durable_backend.url, at_version=5)
    report = verify_bundle(raw, KEY)
    assert report.ok, report.problem
    assert (report.version, report.sealed) == (5, 5)
    types = [json.loads(line)["type"] for line in raw.splitlines()]
    assert types == ["header", *["event"] * 5, *["link"] * (events - 5), "seal", "end"]
    later = b"\n".join(raw.splitlines()[6 : 6 + events - 5])
    assert b'"content"' not in later  # later content withheld


def test_flipping_any_byte_fails_verification_naming_its_line(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    filled(url)
    raw = bundle(url)
    starts = [0]
    for index, byte in enumerate(raw):
        if byte == 0x0A:
            starts.append(index + 1)
    step = max(1, len(raw) // 600)
    positions = sorted({*range(0, len(raw), step), *range(starts[-2] - 300, len(raw))})
    for position in positions:
        if position >= len(raw):
            continue
        flipped = bytearray(raw)
        flipped[position] ^= 0x01
        report = verify_bundle(bytes(flipped), KEY)
        line = sum(1 for start in starts if start <= position)
        assert not report.ok, f"byte {position} (line {line}) flipped, yet the bundle verifies"
        assert f"line {line}" in str(report) or (
            raw[position] == 0x0A and f"line {line + 1}" in str(report)
        ), (position, line, str(report))


def test_export_needs_a_seal_and_a_version_inside_the_conversation(tmp_path: Path) -> None:
    with ConversationStore.open(f"sqlite:///{tmp_path / 'ledger.db'}") as store:
        events = demo.record_demo(store, "done").events
        with pytest.raises(InvalidInputError, match="no seal covers conversation 'done'"):
            store.operations.export("done", io.StringIO())
        store.operations.seal(KEY)
        with pytest.raises(InvalidInputError, match=rf"--at-version 99 is outside .* 1-{events}"):
            store.operations.export("done", io.StringIO(), at_version=99)


def test_the_cli_exports_and_verifies_with_an_ed25519_key_pair(tmp_path: Path) -> None:
    private = ed25519.Ed25519PrivateKey.generate()
    (tmp_path / "seal.pem").write_bytes(
        private.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    (tmp_path / "seal.pub").write_bytes(
        private.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    with ConversationStore.open(url) as store:
        events = demo.record_demo(store, "done").events
    environ = {k: v for k, v in os.environ.items() if not k.startswith("CHATLEDGER_")}

    def chatledger(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "chatledger", *args],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env=environ,
            timeout=60,
        )

    assert chatledger("seal", "--url", url, "--seal-key-file", "seal.pem").returncode == 0
    exported = chatledger("export", "done", "--url", url, "-o", "done.jsonl")
    assert exported.returncode == 0, exported.stderr
    checked = chatledger("verify-export", "done.jsonl", "--seal-key-file", "seal.pub")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert f"chat 'done' (tenant 'default') up to version {events}: verified" in checked.stdout
    text = (tmp_path / "done.jsonl").read_text()
    (tmp_path / "edited.jsonl").write_text(text.replace("old build logs", "new build logs", 1))
    edited = chatledger("verify-export", "edited.jsonl", "--seal-key-file", "seal.pub")
    assert edited.returncode == 1
    assert edited.stdout == (
        "edited.jsonl: line 3: event 2: its content, type or version does not match its link\n"
    )
