"""The read models (docs/behaviour.md §5): consistent with the aggregate at every version, rebuildable, exactly-once."""

from __future__ import annotations

import io
import json
import threading
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given

from chatledger import ConversationStore
from chatledger.adapters.persistence.keys import PLAIN
from chatledger.adapters.persistence.packing import pack, unpack
from chatledger.adapters.persistence.read_models import memory_read_models
from chatledger.adapters.store.audit import write_jsonl
from chatledger.domain.aggregate import conversation_id
from chatledger.domain.errors import InvalidInputError
from chatledger.domain.timeline import KINDS
from chatledger.projections.projector import Projector
from chatledger.projections.read_models import HistoryQuery, ReadModelView
from tests.integration.conftest import Backend
from tests.integration.strategies import Scenario, scenarios
from tests.integration.test_store_properties import _examples, _new_chat, _write
from tests.support.ledger import as_json


def _snapshot(store: ConversationStore, view: ReadModelView, chats: list[str]) -> str:
    """Everything the read models hold for ``chats``, as canonical JSON."""
    found: dict[str, Any] = {}
    for chat in chats:
        key = conversation_id(store.tenant, chat)
        row = view.conversation(key)
        found[chat] = {
            "row": None
            if row is None
            else [row.version, json.loads(row.messages_json), row.status],
            "timeline": [entry.to_json() for entry in view.history(key, HistoryQuery())],
        }
    found["approvals"] = [repr(a) for a in view.pending_approvals(store.tenant)]
    found["continuations"] = [repr(c) for c in view.pending_continuations(store.tenant)]
    return as_json(found)


def test_the_read_model_equals_the_aggregate_at_every_version(backend: Backend) -> None:
    """Projected one event at a time, the messages row always equals the conversation at that version."""
    store = backend.open(batch_chunks=8, batch_ms=600_000)

    @_examples(backend, 0.3)
    @given(scenario=scenarios())
    def check(scenario: Scenario) -> None:
        chat = _new_chat()
        _write(store, chat, scenario)
        key = conversation_id(store.tenant, chat)
        view = memory_read_models()  # a fresh view, fed from the store's log one event at a time
        projector = Projector(store.log, view, page_size=1)
        notifications = store.log.recorder.select_notifications(start=1, limit=10_000)
        for notification in notifications:
            projector.catch_up(until=notification.id)
            if notification.originator_id != key:
                continue
            row = view.conversation(key)
            assert row is not None
            assert row.version == notification.originator_version
            at_version = store.messages(chat, at_version=row.version)
            assert json.loads(row.messages_json) == at_version
            assert row.status == _status_at(store, chat, row.version)
        history = view.history(key, HistoryQuery())
        assert [entry.position for entry in history] == list(range(1, store.version(chat) + 1))

    check()


def _status_at(store: ConversationStore, chat: str, version: int) -> str:
    from chatledger.domain.continuation import status_of

    return status_of(store.conversation(chat, at_version=version).state).status


def test_a_rebuild_gives_exactly_what_the_live_projection_gave(backend: Backend) -> None:
    """Projected as the events came, then rebuilt from scratch: the same rows, in every read model."""
    store = backend.open(batch_chunks=8, batch_ms=600_000)
    chats: list[str] = []

    @_examples(backend, 0.3)
    @given(scenario=scenarios())
    def write(scenario: Scenario) -> None:
        chat = _new_chat()
        chats.append(chat)
        _write(store, chat, scenario)
        store.messages(chat)  # reads catch the read models up as the conversations are written

    write()
    store.operations.catch_up()
    live = _snapshot(store, store.read_models, chats)
    applied = store.operations.rebuild()
    assert applied == len(store.log.recorder.select_notifications(start=1, limit=1_000_000))
    assert _snapshot(store, store.read_models, chats) == live


def test_two_projectors_racing_apply_each_event_exactly_once(durable_backend: Backend) -> None:
    """Two stores (own projectors, own caches) catch up the same read models at the same time."""
    writer = durable_backend.open()
    readers = [durable_backend.open(), durable_backend.open()]
    chats = [f"race-{i}" for i in range(6)]
    for chat in chats:
        writer.start_conversation(chat)
    stop = threading.Event()
    errors: list[BaseException] = []

    def project(store: ConversationStore) -> None:
        try:
            while not stop.is_set():
                store.operations.catch_up()
        except BaseException as error:  # reported below
            errors.append(error)

    threads = [threading.Thread(target=project, args=(reader,)) for reader in readers]
    for thread in threads:
        thread.start()
    try:
        for turn in range(15):
            for chat in chats:
                writer.append_message(
                    chat,
                    {"id": f"u{turn}", "role": "user", "parts": [{"type": "text", "text": "x"}]},
                )
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    assert not errors
    readers[0].operations.catch_up()
    for chat in chats:
        history = readers[0].history(chat)
        assert [entry.position for entry in history] == list(range(1, writer.version(chat) + 1))
        assert readers[1].messages(chat) == writer.messages(chat, at_version=writer.version(chat))


def test_history_filters_and_exports_json_lines(store: ConversationStore) -> None:
    """kinds= and actor= filter; every entry is one line; the export is one JSON object per line."""
    chat = "audited"
    store.start_conversation(chat, actor="user:alice")
    store.append_message(
        chat,
        {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "hi"}]},
        actor="user:alice",
    )
    store.ingest(
        chat,
        [
            {"type": "start", "messageId": "a1"},
            {"type": "text-start", "id": "t"},
            {"type": "text-delta", "id": "t", "delta": "hello"},
            {"type": "text-delta", "id": "nope", "delta": "refused"},
            {"type": "text-end", "id": "t"},
            {"type": "finish"},
        ],
    )
    everything = store.history(chat)
    assert [entry.position for entry in everything] == list(range(1, store.version(chat) + 1))
    assert all("\n" not in entry.summary for entry in everything)
    assert {entry.kind for entry in everything} <= set(KINDS)
    alice = store.history(chat, actor="user:alice")
    assert alice and all(entry.actor == "user:alice" for entry in alice)
    chunks = store.history(chat, kinds=["chunks"])
    assert chunks and all(entry.kind == "chunks" for entry in chunks)
    batch = next(entry for entry in chunks if "refused" in entry.marks)
    assert [row["verdict"] for row in batch.details["chunks"]] == ["refused"]  # compact
    assert sum(batch.details["chunkTypes"].values()) == batch.details["count"]
    full = {entry.position: entry for entry in store.history(chat, kinds=["chunks"], full=True)}
    assert len(full) == len(chunks)
    whole = full[batch.position]
    assert [row["position"] for row in whole.details["chunks"]] == list(
        range(whole.details["firstSeq"], whole.details["firstSeq"] + whole.details["count"])
    )
    assert whole.summary == batch.summary and whole.marks == batch.marks
    out = io.StringIO()
    assert write_jsonl(everything, out) == len(everything)
    lines = out.getvalue().splitlines()
    assert [json.loads(line)["position"] for line in lines] == [e.position for e in everything]
    with pytest.raises(InvalidInputError, match="unknown timeline kind"):
        store.history(chat, kinds=["no-such-kind"])


def test_history_of_an_unknown_chat_is_refused(store: ConversationStore) -> None:
    """The timeline of a conversation that was never started is an error, not an empty list."""
    from chatledger import ConversationNotFoundError

    with pytest.raises(ConversationNotFoundError):
        store.history(f"missing-{uuid.uuid4().hex}")


def test_forget_cached_makes_reads_fetch_the_row_again(tmp_path: Path) -> None:
    """A row changed behind the store's back (a restore) shows only after ``forget_cached``."""
    import sqlite3

    path = tmp_path / "chatledger.db"
    with ConversationStore.open(f"sqlite:///{path}") as store:
        store.start_conversation("c")
        store.append_message(
            "c", {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "before"}]}
        )
        assert "before" in json.dumps(store.messages("c"))
        with sqlite3.connect(path) as raw:
            (packed,) = raw.execute("SELECT message FROM chatledger_messages_v2").fetchone()
            edited = pack(PLAIN, unpack(PLAIN, packed).replace("before", "after"))
            raw.execute("UPDATE chatledger_messages_v2 SET message = ?", (edited,))
        assert "before" in json.dumps(store.messages("c"))  # served from this process's cache
        store.operations.forget_cached()
        assert "after" in json.dumps(store.messages("c"))
