"""Redaction on real SQLite files and PostgreSQL schemas: hidden from every view, kept in the log.

A conversation holds unique canaries in a user message, an assistant's text
and reasoning, and a tool call's input and output. After ``redact`` no view
shows them (messages now and at earlier versions, the four model formats,
the timeline compact and full, a followed stream, the inbox, the list's
search, the page) and no read-model row keeps them (the tables are read back
with SQL); the log still holds them (an operator with the store's key reads
them), its chain verifies and ``verify`` finds nothing wrong.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import httpx
import psycopg
import pytest
from eventsourcing.cryptography import AESCipher

from chatledger import ConversationStore
from chatledger.adapters.cli.commands import main
from chatledger.adapters.http.app import create_app
from chatledger.adapters.responders.scripted import demo_responder
from chatledger.domain.aggregate import conversation_id
from chatledger.domain.errors import (
    InvalidInputError,
    InvalidMessageError,
    UnknownToolCallError,
)
from chatledger.domain.events import Redacted
from chatledger.domain.redaction import REDACTED
from tests.integration.conftest import Backend, _postgres_conninfo
from tests.integration.packed_rows import unpacked

INPUT = "zqinputcanary"
OUTPUT = "zqoutputcanary"
USER = "zqusercanary"
TEXT = "zqtextcanary"
THOUGHT = "zqthoughtcanary"
KEPT = "keptvisibleword"
CANARIES = (INPUT, OUTPUT, USER, TEXT, THOUGHT)
FORMATS = ("ai-sdk", "anthropic", "openai-chat", "openai-responses")


def answer(call: str, *, approval: bool = False) -> list[dict[str, Any]]:
    """An assistant turn: reasoning, text, and a tool call (awaiting approval, or answered)."""
    chunks: list[dict[str, Any]] = [
        {"type": "start", "messageId": "a1"},
        {"type": "start-step"},
        {"type": "reasoning-start", "id": "r1"},
        {"type": "reasoning-delta", "id": "r1", "delta": f"I think {THOUGHT} "},
        {"type": "reasoning-delta", "id": "r1", "delta": "and more"},
        {"type": "reasoning-end", "id": "r1"},
        {"type": "text-start", "id": "t1"},
        {"type": "text-delta", "id": "t1", "delta": f"Looking up {TEXT}"},
        {"type": "text-end", "id": "t1"},
        {"type": "tool-input-start", "toolCallId": call, "toolName": "lookup"},
        {"type": "tool-input-delta", "toolCallId": call, "inputTextDelta": '{"q":"'},
        {"type": "tool-input-delta", "toolCallId": call, "inputTextDelta": f'{INPUT}"}}'},
        {
            "type": "tool-input-available",
            "toolCallId": call,
            "toolName": "lookup",
            "input": {"q": INPUT},
        },
    ]
    if approval:
        chunks.append({"type": "tool-approval-request", "approvalId": "ap1", "toolCallId": call})
    else:
        chunks.append(
            {"type": "tool-output-available", "toolCallId": call, "output": {"r": OUTPUT}}
        )
    return [*chunks, {"type": "finish-step"}, {"type": "finish"}]


def build(store: ConversationStore, chat: str, ai_sdk: int, *, approval: bool = False) -> int:
    """The canary conversation; returns its version before any redaction."""
    store.start_conversation(chat, ai_sdk=ai_sdk)
    store.append_message(
        chat,
        {
            "id": "u1",
            "role": "user",
            "parts": [{"type": "text", "text": f"my {USER} please, {KEPT}"}],
        },
        actor="user:alice",
    )
    store.ingest(chat, answer("call1", approval=approval))
    return store.version(chat)


def redact_all(store: ConversationStore, chat: str) -> None:
    assert store.redact(chat, tool_call_id="call1", actor="user:dpo", reason="ticket 1")
    assert store.redact(chat, message_id="a1", actor="user:dpo", reason="ticket 1")
    # Only the user's own words: a message part, by kind.
    assert store.redact(chat, message_id="u1", fields=["text"], actor="user:dpo", reason="t 2")


def leaks(value: Any, canaries: tuple[str, ...] = CANARIES) -> list[str]:
    text = json.dumps(value, default=str).lower()
    return [canary for canary in canaries if canary in text]


def read_model_rows(backend: Backend) -> Iterator[tuple[str, Any]]:
    """Every value of every table but the log's own (events, snapshots): (table, value)."""
    if backend.name == "sqlite":
        path = backend.url.removeprefix("sqlite:///")
        with contextlib.closing(sqlite3.connect(path)) as db:
            tables = [
                row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")
            ]
            for table in tables:
                if table in ("stored_events", "stored_snapshots"):
                    continue
                for row in db.execute(f'SELECT * FROM "{table}"'):
                    for value in row:
                        yield table, value
                        yield table, unpacked(value)  # compressed read-model values, opened
        return
    schema = dict(parse_qsl(urlsplit(backend.url).query))["schema"]
    with psycopg.connect(_postgres_conninfo(), autocommit=True) as db:
        tables = [
            row[0]
            for row in db.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = %s",
                (schema,),
            )
        ]
        for table in tables:
            if table in ("chatledger_events", "chatledger_snapshots"):
                continue
            for row in db.execute(f'SELECT * FROM "{schema}"."{table}"'):
                for value in row:
                    yield table, value
                    yield table, unpacked(value)


def row_leaks(backend: Backend) -> list[tuple[str, str]]:
    found = []
    for table, value in read_model_rows(backend):
        raw = value if isinstance(value, bytes) else str(value).encode("utf-8", "replace")
        found += [(table, c) for c in CANARIES if c.encode() in raw.lower()]
    return sorted(set(found))


@pytest.mark.parametrize("ai_sdk", [6, 7])
def test_redacted_content_is_in_no_view_and_no_read_model_row(
    durable_backend: Backend, ai_sdk: int
) -> None:
    store = durable_backend.open()
    before = build(store, "c", ai_sdk)
    assert set(leaks(store.messages("c"))) == set(CANARIES)
    assert row_leaks(durable_backend)  # the read models hold the canaries before

    redact_all(store, "c")

    reader = durable_backend.open()  # another process's view: from the database alone
    for each in (store, reader):
        messages = each.messages("c")
        assert leaks(messages) == []
        assert KEPT not in json.dumps(messages)  # the user's text part is hidden whole...
        assert messages[0]["parts"] == [{"type": "text", "text": REDACTED}]
        tool = messages[1]["parts"][-1]
        assert (tool["input"], tool["output"], tool["state"]) == (
            REDACTED,
            REDACTED,
            "output-available",
        )  # ...the rest is readable: ids, tool name, state
        assert tool["toolCallId"] == "call1" and tool["type"] == "tool-lookup"
        for version in (2, before, each.version("c")):
            assert leaks(each.messages("c", at_version=version)) == [], version
        for form in FORMATS:
            assert leaks(each.model_messages("c", form)) == [], form
            assert leaks(each.model_messages("c", form, at_version=before)) == [], form
        assert leaks([e.to_json() for e in each.history("c")]) == []
        assert leaks([e.to_json() for e in each.history("c", full=True)]) == []
        followed = [f.chunk for f in each.follow("c")]
        assert leaks(followed) == [] and len(followed) == len(answer("call1"))
        assert each.list_conversations(query=USER).conversations == []
        assert [c.chat_id for c in each.list_conversations(query="please").conversations] == []
    assert row_leaks(durable_backend) == []
    report = reader.operations.verify()
    assert report.ok, report.problems
    # The log is untouched: the original events still decode (for whoever holds the key).
    logged = json.dumps([e.model_dump(mode="json") for e in store.log.events.get(_key("c"))])
    assert all(canary in logged.lower() for canary in CANARIES)
    redactions = [e for e in store.log.events.get(_key("c")) if isinstance(e, Redacted)]
    assert [(r.actor, r.reason) for r in redactions] == [("user:dpo", "ticket 1")] * 2 + [
        ("user:dpo", "t 2")
    ]


def test_a_rebuild_and_a_fresh_store_keep_hiding_it(durable_backend: Backend) -> None:
    store = durable_backend.open()
    build(store, "c", 7)
    redact_all(store, "c")
    store.operations.rebuild()  # the whole log again: redacted rows come back redacted
    assert row_leaks(durable_backend) == []
    fresh = durable_backend.open()
    assert leaks(fresh.messages("c", at_version=3)) == []
    assert fresh.operations.verify().ok


def test_a_call_awaiting_approval_shows_redacted_in_the_inbox_and_can_still_be_answered(
    durable_backend: Backend,
) -> None:
    store = durable_backend.open()
    build(store, "c", 7, approval=True)
    store.redact("c", tool_call_id="call1", fields=["input"], actor="user:dpo", reason="pii")
    pending = store.pending_approvals()
    assert [(p.tool_call_id, p.input) for p in pending] == [("call1", REDACTED)]
    assert [call.input for call in store.status("c").waiting_for] == [REDACTED]
    store.respond_to_approval("c", approval_id="ap1", approved=True, actor="user:bob")
    store.add_tool_output("c", "call1", output={"r": OUTPUT}, actor="agent:runner")
    part = store.messages("c")[1]["parts"][-1]
    assert part["input"] == REDACTED and part["output"] == {"r": OUTPUT}  # only the input
    found = {canary for _, canary in row_leaks(durable_backend)}
    assert INPUT not in found and OUTPUT in found


def test_bad_redactions_are_refused_naming_what_is_valid_and_record_nothing(
    durable_backend: Backend,
) -> None:
    store = durable_backend.open()
    build(store, "c", 7)
    version = store.version("c")
    with pytest.raises(UnknownToolCallError, match="'nope'"):
        store.redact("c", tool_call_id="nope", actor="a", reason="r")
    with pytest.raises(InvalidMessageError, match="'nope'"):
        store.redact("c", message_id="nope", actor="a", reason="r")
    with pytest.raises(InvalidInputError, match="its fields are input, output"):
        store.redact("c", tool_call_id="call1", fields=["arguments"], actor="a", reason="r")
    with pytest.raises(InvalidInputError, match="its fields are reasoning, text"):
        store.redact("c", message_id="a1", fields=["txt"], actor="a", reason="r")
    with pytest.raises(InvalidInputError, match="exactly one"):
        store.redact("c", tool_call_id="call1", message_id="a1", actor="a", reason="r")
    with pytest.raises(InvalidInputError, match="exactly one"):
        store.redact("c", actor="a", reason="r")
    with pytest.raises(InvalidInputError, match="reason"):
        store.redact("c", tool_call_id="call1", actor="a", reason="  ")
    assert store.version("c") == version
    assert store.redact("c", tool_call_id="call1", actor="a", reason="r")
    assert not store.redact("c", tool_call_id="call1", fields=["output"], actor="a", reason="r")
    assert store.version("c") == version + 1  # the same redaction again records nothing


def test_the_redaction_is_in_the_timeline_with_its_actor_and_reason(
    durable_backend: Backend,
) -> None:
    store = durable_backend.open()
    build(store, "c", 7)
    store.redact("c", tool_call_id="call1", fields=["output"], actor="user:dpo", reason="t 9")
    entry = store.history("c", kinds=["redacted"])[-1]
    assert (entry.actor, entry.details["fields"], entry.details["reason"]) == (
        "user:dpo",
        ["output"],
        "t 9",
    )
    assert "user:dpo redacted the output of `lookup` (call1): t 9" in entry.summary
    hidden = [e.kind for e in store.history("c") if "redacted" in e.marks]
    assert hidden == ["chunks"]  # the batch holding the output, marked where it is hidden


def test_cli_redact(durable_backend: Backend, capsys: pytest.CaptureFixture[str]) -> None:
    with durable_backend.open() as store:
        build(store, "c", 7)
    url = ["--url", durable_backend.url]
    ok = ["redact", "c", "--message", "a1", "--field", "text", "--actor", "u:x", "--reason", "r"]
    assert main([*url, *ok]) == 0
    assert "redacted message a1 of c" in capsys.readouterr().out
    assert main([*url, *ok]) == 0
    assert "already redacted" in capsys.readouterr().out
    bad = ["redact", "c", "--tool-call", "call1", "--field", "x", "--actor", "u", "--reason", "r"]
    assert main([*url, *bad]) == 1
    assert "its fields are input, output" in capsys.readouterr().err
    assert main([*url, "redact", "c", "--tool-call", "call1", "--reason", "r"]) == 2
    with durable_backend.open() as store:
        assert leaks(store.messages("c")) == [INPUT, OUTPUT, USER, THOUGHT]


@pytest.mark.anyio
async def test_the_conversation_page_shows_redacted(durable_backend: Backend) -> None:
    store = durable_backend.open()
    before = build(store, "c", 7)
    redact_all(store, "c")
    app = create_app(store, responder=demo_responder())
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
        for params in ({"id": "c"}, {"id": "c", "at": str(before)}):
            page = await client.get("/ui/conversation", params=params)
            assert page.status_code == 200
            assert REDACTED in page.text and leaks(page.text) == []
        stream = await client.get("/api/chat/c/stream")
        assert leaks(stream.text) == []


def test_with_a_store_key_the_original_stays_readable_to_the_key_holder(tmp_path: Any) -> None:
    key = AESCipher.create_key(32)
    url = f"sqlite:///{tmp_path / 'keyed.db'}"
    with ConversationStore.open(url, cipher_key=key) as store:
        build(store, "c", 7)
        redact_all(store, "c")
        assert leaks(store.messages("c")) == []
        logged = [e.model_dump(mode="json") for e in store.log.events.get(_key("c"))]
        assert leaks(logged) != []  # the key holder can read the original events
    raw = (tmp_path / "keyed.db").read_bytes().lower()
    assert not any(canary.encode() in raw for canary in CANARIES)  # nobody else can


def _key(chat: str) -> Any:
    return conversation_id("default", chat)


def test_otel_content_export_sends_redacted_arguments_and_results(
    durable_backend: Backend,
) -> None:
    from tests.integration.test_otel_export import Receiver, attributes

    store = durable_backend.open()
    build(store, "c", 7)
    store.redact("c", tool_call_id="call1", actor="user:dpo", reason="pii")
    receiver = Receiver()
    try:
        exporter = store.operations.otel_exporter(receiver.url, content=True)
        exporter.run_once()
        exporter.close()
    finally:
        receiver.close()
    (tool,) = [span for span in receiver.spans if span.name.startswith("execute_tool")]
    values = attributes(tool)
    assert values["gen_ai.tool.call.arguments"] == f'"{REDACTED}"'
    assert values["gen_ai.tool.call.result"] == f'"{REDACTED}"'
    assert leaks([str(span) for span in receiver.spans]) == []


def test_a_queued_steering_message_can_be_redacted(durable_backend: Backend) -> None:
    store = durable_backend.open()
    store.start_conversation("c", ai_sdk=7)
    writer = store.open_stream("c", actor="agent:bot")
    writer.append({"type": "start"})
    steer = {"id": "s1", "role": "user", "parts": [{"type": "text", "text": f"use {USER}"}]}
    store.append_message("c", steer, actor="user:alice")  # queued while the answer streams
    assert store.redact("c", message_id="s1", actor="user:dpo", reason="pii")
    assert store.steering("c")[0]["parts"] == [{"type": "text", "text": REDACTED}]
    writer.close("finished")  # not taken: it becomes the next user message
    assert leaks(store.messages("c")) == [] and leaks(store.history("c", full=True)) == []
    assert row_leaks(durable_backend) == []
