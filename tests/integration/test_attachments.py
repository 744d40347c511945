"""Attachments kept once: inline files and large tool outputs stored once per conversation, read back identically.

Each conversation is written twice: into the store under test and into a
``memory://`` store (which keeps every value inline): every read must agree.
On SQLite and PostgreSQL the tables are then looked at directly: one blob per
distinct file, the events and read models holding references only, and,
with a cipher key, nothing of the file in the clear. Erasure must leave no
byte of a file on disk (the canaries are inside the files).
"""

from __future__ import annotations

import base64
import json
import os
import re
from typing import Any

import pytest
from eventsourcing.cryptography import AESCipher

from chatledger import ConversationStore
from tests.integration.conftest import Backend
from tests.integration.tamper import Tamperer
from tests.integration.test_erasure_on_disk import WAIT, holding, in_store


def a_file(tag: str, size: int = 40_000) -> bytes:
    """Random bytes (incompressible) with canaries inside."""
    canary = f"CANARYFILE{tag}".encode()
    return canary + os.urandom(size // 2) + canary + os.urandom(size // 2) + canary


def data_url(data: bytes, media: str = "image/png") -> str:
    return f"data:{media};base64,{base64.b64encode(data).decode()}"


def big_output(tag: str) -> dict[str, Any]:
    return {"rows": [{"n": i, "text": f"CANARYTOOL{tag} row {i}"} for i in range(800)]}


def write(store: ConversationStore, chat: str, image: bytes, pdf: bytes, tag: str) -> None:
    """A user sends an image twice and a PDF; the answer carries a file and a large tool output."""
    store.start_conversation(chat, actor="user:alice")
    for n, parts in enumerate(
        [
            [{"type": "text", "text": "look"}, {"type": "file", "mediaType": "image/png", "url": data_url(image)}],
            [
                {"type": "text", "text": "again, and the contract"},
                {"type": "file", "mediaType": "image/png", "url": data_url(image), "filename": "a.png"},
                {"type": "file", "mediaType": "application/pdf", "url": data_url(pdf, "application/pdf")},
            ],
        ]
    ):  # fmt: skip
        store.append_message(
            chat, {"id": f"u{n}", "role": "user", "parts": parts}, actor="user:alice"
        )
    store.ingest(
        chat,
        [
            {"type": "start", "messageId": "a1"},
            {"type": "start-step"},
            {"type": "tool-input-available", "toolCallId": "call_1", "toolName": "lookup", "input": {"q": "x"}},
            {"type": "tool-output-available", "toolCallId": "call_1", "output": big_output(tag)},
            {"type": "finish-step"},
            {"type": "start-step"},
            {"type": "file", "url": data_url(image), "mediaType": "image/png"},
            {"type": "text-start", "id": "t"},
            {"type": "text-delta", "id": "t", "delta": "here it is"},
            {"type": "text-end", "id": "t"},
            {"type": "finish-step"},
            {"type": "finish"},
        ],
        actor="agent:bot",
    )  # fmt: skip


_MINTED = re.compile(r"\b(msg|s)_[0-9a-f]{16}\b|\"ageMs\": \d+")
"""Ids the store mints (streams, answers) and chunks' ages: different in each store."""


def reads(store: ConversationStore, chat: str) -> dict[str, str]:
    """Every read of the conversation, as JSON with minted ids blanked."""
    head = len(store.history(chat))
    found = {
        "messages": store.messages(chat),
        "model": store.model_messages(chat),
        "openai": store.model_messages(chat, "openai-chat"),
        "past": [store.messages(chat, at_version=v) for v in range(2, head + 1)],
        "audit": [(e.kind, e.actor, e.summary, e.details) for e in store.history(chat, full=True)],
    }
    return {what: _MINTED.sub("ID", json.dumps(value)) for what, value in found.items()}


def test_reads_are_the_same_as_with_every_value_inline(backend: Backend) -> None:
    store = backend.open()
    image, pdf = a_file("I"), a_file("P", 90_000)
    write(store, "c", image, pdf, "T")
    inline = ConversationStore.open("memory://")
    write(inline, "c", image, pdf, "T")
    got, want = reads(store, "c"), reads(inline, "c")
    assert store.messages("c")[1]["parts"][2]["url"] == data_url(pdf, "application/pdf")
    for what in want:
        assert got[what] == want[what], what
    fresh = backend.other_store(store)  # another process (nothing cached) reads the same
    assert reads(fresh, "c") == want


def _blob_rows(backend: Backend) -> list[tuple[Any, ...]]:
    return Tamperer(backend.url).run(
        "SELECT originator_id, digest, body, size FROM chatledger_blobs"
    )


@pytest.mark.parametrize("keyed", [False, True], ids=["no-key", "key"])
def test_each_file_is_stored_once_and_sealed_with_a_key(
    durable_backend: Backend, keyed: bool
) -> None:
    options: dict[str, Any] = {"cipher_key": AESCipher.create_key(32)} if keyed else {}
    store = durable_backend.open(**options)
    image, pdf = a_file("I"), a_file("P", 90_000)
    write(store, "c", image, pdf, "T")
    store.messages("c")  # the read models caught up
    rows = _blob_rows(durable_backend)
    sizes = sorted(int(row[3]) for row in rows)
    assert len(rows) == 3, sizes  # the image (sent three times), the PDF, the tool output
    assert sizes[1:] == [len(image), len(pdf)]
    raw = Tamperer(durable_backend.url).run
    table = "chatledger_events" if durable_backend.name == "postgres" else "stored_events"
    (largest,) = raw(f"SELECT max(length(state)) FROM {table}")[0]
    assert int(largest) < 5_000  # references, not files
    (messages,) = raw("SELECT sum(length(message)) FROM chatledger_messages_v2")[0]
    assert int(messages) < 5_000
    (timeline,) = raw("SELECT sum(length(body)) FROM chatledger_timeline_v2")[0]
    assert int(timeline) < 20_000  # the audit's details refer to the blobs too
    bodies = b"".join(bytes(row[2]) for row in rows)
    assert (b"CANARYFILEI" in bodies) == (not keyed)  # with a key: sealed under the data key
    assert store.messages("c")[0]["parts"][1]["url"] == data_url(image)
    other = durable_backend.other_store(store, **options)
    write(other, "d", image, pdf, "T")  # another conversation: a copy of its own (its own key)
    assert len(_blob_rows(durable_backend)) == 6


@pytest.mark.parametrize("keyed", [False, True], ids=["no-key", "key"])
@pytest.mark.timeout(120)
def test_erase_shreds_the_files(durable_backend: Backend, keyed: bool) -> None:
    options: dict[str, Any] = (
        {"cipher_key": AESCipher.create_key(32)} if keyed else {"compress": False}
    )
    store = durable_backend.open(**options)
    write(store, "gone", a_file("A"), a_file("B"), "A")
    write(store, "kept", a_file("K"), a_file("L"), "K")
    store.messages("gone")
    what = [b"CANARYFILEA", b"CANARYFILEB", b"CANARYTOOLA"]
    if keyed:
        what.append(bytes(Tamperer(durable_backend.url).run(
            "SELECT wrapped FROM chatledger_conversation_keys")[0][0]))  # fmt: skip
    else:
        assert in_store(holding(durable_backend, what), durable_backend)
    report = store.operations.erase(
        "gone", actor="operator:olga", reason="GDPR", wait_for_readers=WAIT
    )
    assert report.compaction is not None and report.compaction.done, report.compaction
    assert any("attachments" in r for r in report.removed)
    assert in_store(holding(durable_backend, what), durable_backend) == []
    assert len(_blob_rows(durable_backend)) == 3  # the kept conversation's
    assert store.messages("kept")[0]["parts"][1]["url"].startswith("data:image/png;base64,Q0FO")
    assert store.operations.verify().ok


def test_a_changed_attachment_is_named_by_verify(durable_backend: Backend) -> None:
    store = durable_backend.open()
    image = a_file("V", 5000)
    store.start_conversation("c", actor="user:alice")
    parts = [{"type": "file", "mediaType": "image/png", "url": data_url(image)}]
    store.append_message("c", {"id": "u1", "role": "user", "parts": parts}, actor="user:alice")
    store.close()
    Tamperer(durable_backend.url).run(
        "UPDATE chatledger_blobs SET body = ?", b"\x00" + os.urandom(len(image))
    )
    fresh = durable_backend.open()
    report = fresh.operations.verify()
    assert not report.ok
    assert any("does not match its SHA-256" in str(problem) for problem in report.problems)
