"""The ``ConversationStore`` contract, run once per backend (memory://, SQLite file, PostgreSQL)."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from chatledger import (
    ChatLedgerError,
    ConversationExistsError,
    ConversationNotFoundError,
    ConversationStore,
    NoOpenStreamError,
    StreamAlreadyOpenError,
    StreamOpenLostError,
    Verdict,
)
from chatledger.adapters.bootstrap import StoreOptions
from chatledger.adapters.store.store import open_store
from chatledger.adapters.store.streams.policy import BatchPolicy
from chatledger.domain.events import ChunksReceived
from tests.integration.conftest import Backend
from tests.support.builders import delta, text_chunks, user
from tests.support.ledger import (
    as_json,
    drop_snapshots,
    replay_from_scratch,
    stored_chunk_count,
    stored_events,
    stored_records,
    writes_blocked,
)

BOT = "agent:bot"
ALICE = "user:alice"


# A reply with reasoning, text and a static tool call whose input streams, as
# the AI SDK server sends it, and the UIMessage the SDK folds it into.
REPLY = [
    {"type": "start", "messageId": "m1"},
    {"type": "start-step"},
    {"type": "reasoning-start", "id": "r"},
    {"type": "reasoning-delta", "id": "r", "delta": "Weather question."},
    {"type": "reasoning-end", "id": "r"},
    {"type": "text-start", "id": "t"},
    delta("Let me "),
    delta("check."),
    {"type": "text-end", "id": "t"},
    {"type": "tool-input-start", "toolCallId": "c1", "toolName": "getWeather"},
    {"type": "tool-input-delta", "toolCallId": "c1", "inputTextDelta": '{"city":'},
    {"type": "tool-input-delta", "toolCallId": "c1", "inputTextDelta": '"Paris"}'},
    {
        "type": "tool-input-available",
        "toolCallId": "c1",
        "toolName": "getWeather",
        "input": {"city": "Paris"},
    },
    {"type": "tool-output-available", "toolCallId": "c1", "output": {"temp": 21}},
    {"type": "finish-step"},
    {"type": "finish", "finishReason": "stop"},
]
REPLY_MESSAGE = {
    "id": "m1",
    "role": "assistant",
    "parts": [
        {"type": "step-start"},
        {"type": "reasoning", "id": "r", "text": "Weather question.", "state": "done"},
        {"type": "text", "text": "Let me check.", "state": "done"},
        {
            "type": "tool-getWeather",
            "toolCallId": "c1",
            "state": "output-available",
            "input": {"city": "Paris"},
            "output": {"temp": 21},
        },
    ],
}


def write_turn(store: ConversationStore, chat: str, *, message_id: str = "u1") -> None:
    """A user message and the streamed REPLY to it."""
    store.append_message(chat, user(message_id), actor=ALICE)
    with store.open_stream(chat, actor=BOT) as stream:
        for chunk in copy.deepcopy(REPLY):
            stream.append(chunk)


def test_a_streamed_reply_round_trips_through_the_store(store: ConversationStore) -> None:
    """Start, append, stream and close: messages() gives back exactly what was folded."""
    store.start_conversation("chat", actor=ALICE)
    store.append_message("chat", user("u1"), actor=ALICE)
    stream = store.open_stream("chat", actor=BOT)
    received = [stream.append(chunk) for chunk in copy.deepcopy(REPLY)]
    stream.close("finished")

    assert [r.verdict for r in received] == [Verdict.APPLIED] * len(REPLY)
    assert [r.position for r in received] == list(range(len(REPLY)))
    assert all(r.error is None for r in received)
    assert as_json(store.messages("chat")) == as_json([user("u1"), REPLY_MESSAGE])
    assert as_json(stream.conversation.state.messages) == as_json(store.messages("chat"))
    events = stored_events(store, "chat")
    assert store.version("chat") == len(events)
    assert sum(len(e.chunks) for e in events if isinstance(e, ChunksReceived)) == len(REPLY)


def test_the_writer_and_ingest_report_name_the_message_written(store: ConversationStore) -> None:
    """``StreamWriter.message_id`` and ``IngestReport.message_id`` name the message that exists."""
    store.start_conversation("chat")
    store.append_message("chat", user("u1"))
    report = store.ingest("chat", copy.deepcopy(REPLY), actor=BOT)
    assert store.messages("chat")[-1]["id"] == "m1"
    assert (report.applied, report.replays, report.refused) == (len(REPLY), 0, [])
    assert report.message_id == "m1", "the report names a message that is not in the conversation"

    store.append_message("chat", user("u2"))
    with store.open_stream("chat") as stream:
        stream.append({"type": "start", "messageId": "m2"})
        stream.append({"type": "text-start", "id": "t"})
        assert stream.conversation.state.messages[-1]["id"] == "m2"
        assert stream.message_id == "m2", (
            "the writer names a message that is not in the conversation"
        )


def test_messages_survive_closing_and_reopening_the_store(durable_backend: Backend) -> None:
    """A store reopened on the same database sees every message and can go on writing."""
    first = durable_backend.open()
    first.start_conversation("chat", actor=ALICE)
    write_turn(first, "chat")
    before, version = first.messages("chat"), first.version("chat")
    first.close()

    reopened = durable_backend.open()
    assert as_json(reopened.messages("chat")) == as_json(before)
    assert reopened.version("chat") == version
    reopened.append_message("chat", user("u2", "and tomorrow?"), actor=ALICE)
    assert [m["id"] for m in reopened.messages("chat")] == ["u1", "m1", "u2"]


def test_tenants_with_the_same_chat_id_never_see_each_others_data(backend: Backend) -> None:
    """Two tenants share a chat id: each sees only its own messages, versions and streams."""
    store = backend.open()
    for tenant in ("acme", "globex"):
        store.start_conversation("support", tenant=tenant, actor=ALICE)
    store.append_message("support", user("a1", "acme secret"), tenant="acme")
    store.append_message("support", user("g1", "globex secret"), tenant="globex")
    store.append_message("support", user("g2", "more"), tenant="globex")
    acme_stream = store.open_stream("support", tenant="acme")
    with store.open_stream("support", tenant="globex") as globex_stream:  # not blocked by acme's
        globex_stream.append({"type": "text-start", "id": "t"})
    acme_stream.close()

    acme = store.messages("support", tenant="acme")
    globex = store.messages("support", tenant="globex")
    assert [m["id"] for m in acme] == ["a1", acme_stream.message_id]
    assert [m["id"] for m in globex] == ["g1", "g2", globex_stream.message_id]
    assert "globex" not in json.dumps(acme) and "acme" not in json.dumps(globex)
    assert store.version("support", tenant="acme") != store.version("support", tenant="globex")
    for stranger in (None, "initech"):
        with pytest.raises(ConversationNotFoundError):
            store.messages("support", tenant=stranger)
    if backend.durable:
        assert as_json(backend.open(tenant="acme").messages("support")) == as_json(acme)


def test_tenant_and_chat_ids_that_read_alike_stay_apart(store: ConversationStore) -> None:
    """(tenant "a/b", chat "c") and (tenant "a", chat "b/c") are two conversations."""
    store.start_conversation("c", tenant="a/b")
    store.start_conversation("b/c", tenant="a")
    store.append_message("c", user("only-in-a/b"), tenant="a/b")
    assert store.messages("b/c", tenant="a") == []
    assert [m["id"] for m in store.messages("c", tenant="a/b")] == ["only-in-a/b"]


def test_starting_a_conversation_twice_raises_conversation_exists_error(
    store: ConversationStore,
) -> None:
    """A second start with the same (tenant, chat id) is refused and changes nothing."""
    store.start_conversation("chat", actor=ALICE)
    store.append_message("chat", user("u1"))
    with pytest.raises(ConversationExistsError) as raised:
        store.start_conversation("chat", actor="user:mallory")
    assert (raised.value.tenant, raised.value.chat_id) == (store.tenant, "chat")
    assert "chat" in str(raised.value)
    assert [m["id"] for m in store.messages("chat")] == ["u1"]
    store.start_conversation("chat", tenant="other")  # same chat id, other tenant: fine


@pytest.mark.parametrize(
    "action",
    [
        pytest.param(lambda s: s.messages("ghost"), id="messages"),
        pytest.param(lambda s: s.version("ghost"), id="version"),
        pytest.param(lambda s: s.append_message("ghost", user("u1")), id="append_message"),
        pytest.param(lambda s: s.open_stream("ghost"), id="open_stream"),
        pytest.param(lambda s: s.close_stream("ghost", "s_1", "interrupted"), id="close_stream"),
        pytest.param(lambda s: s.ingest("ghost", [{"type": "start"}]), id="ingest"),
        pytest.param(lambda s: s.messages("ghost", at_version=1), id="messages_at_version"),
        pytest.param(
            lambda s: s.messages("ghost", at_time=datetime.now(UTC)), id="messages_at_time"
        ),
    ],
)
def test_using_an_unknown_conversation_raises_conversation_not_found_error(
    store: ConversationStore, action: Any
) -> None:
    """Every read and write on a chat id that was never started says so."""
    with pytest.raises(ConversationNotFoundError) as raised:
        action(store)
    assert (raised.value.tenant, raised.value.chat_id) == (store.tenant, "ghost")
    assert "ghost" in str(raised.value)


def test_only_one_stream_can_be_open_at_a_time(backend: Backend) -> None:
    """A second stream, or a whole message, is refused while a stream is open, from any store."""
    store = backend.open()
    store.start_conversation("chat")
    store.append_message("chat", user("u1"))
    first = store.open_stream("chat", actor=BOT)
    other = backend.other_store(store)

    for opener in (store, other):
        with pytest.raises(StreamAlreadyOpenError) as raised:
            opener.open_stream("chat", actor=BOT)
        assert raised.value.stream_id == first.stream_id
        assert first.stream_id in str(raised.value)
    system = {"id": "s1", "role": "system", "parts": [{"type": "text", "text": "be brief"}]}
    with pytest.raises(StreamAlreadyOpenError):
        store.append_message("chat", system)
    # AI SDK 7: a user message waits for the stream (queued as steering), it is not refused.
    store.append_message("chat", user("u2"))
    assert len(store.messages("chat")) == 2  # u1 and the open stream's message, nothing else
    assert [m["id"] for m in store.steering("chat")] == ["u2"]

    first.close("finished")
    assert store.messages("chat")[-1]["id"] == "u2"  # not taken: the next user turn
    with store.open_stream("chat") as second:
        assert second.stream_id != first.stream_id


def test_an_abandoned_stream_can_be_closed_as_interrupted(backend: Backend) -> None:
    """A stream whose writer went away is closed from outside; the old writer can write no more."""
    store = backend.open(batch_chunks=1)  # every chunk committed at once: nothing buffered
    store.start_conversation("chat")
    store.append_message("chat", user("u1"))
    abandoned = store.open_stream("chat", actor=BOT)
    abandoned.append({"type": "text-start", "id": "t"})
    abandoned.append(delta("partial"))

    closer = backend.other_store(store)
    closer.close_stream(
        "chat", abandoned.stream_id, "interrupted", reason="worker gone", actor="system"
    )
    messages = closer.messages("chat")
    assert messages[-1]["parts"] == [{"type": "text", "text": "partial", "state": "streaming"}]
    with pytest.raises(NoOpenStreamError):
        abandoned.append(delta(" late"))
    assert as_json(closer.messages("chat")) == as_json(messages)
    with closer.open_stream("chat", continuation=True) as resumed:
        resumed.append({"type": "text-start", "id": "t2"})


_CRASHING_WRITER = """
import json, os, sys
from chatledger import ConversationStore

store = ConversationStore.open(sys.argv[1], batch_chunks=1000, batch_ms=600_000)
store.start_conversation("crash", actor="user:alice")
question = {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "hi"}]}
store.append_message("crash", question)
stream = store.open_stream("crash", actor="agent:bot")
for chunk in json.loads(sys.argv[2]):
    stream.append(chunk)
print(json.dumps({"stream_id": stream.stream_id, "message_id": stream.message_id}), flush=True)
os._exit(0)  # the crash: no flush, no close, no cleanup of any kind
"""


def test_a_stream_left_open_by_a_crashed_process_can_be_closed_as_interrupted(
    durable_backend: Backend, tmp_path: Path
) -> None:
    """After a writer process dies mid-stream, a new store sees what was committed and closes it."""
    chunks = [
        {"type": "start-step"},
        {"type": "text-start", "id": "t"},
        delta("Hel"),
        delta("lo"),
        {
            "type": "tool-input-available",
            "toolCallId": "c1",
            "toolName": "search",
            "input": {"q": "x"},
        },
        delta(" lost"),  # buffered after the boundary: dies with the process
        delta(" too"),
    ]
    child = subprocess.run(
        [sys.executable, "-c", _CRASHING_WRITER, durable_backend.url, json.dumps(chunks)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        check=False,
    )
    assert child.returncode == 0, child.stderr
    crashed = json.loads(child.stdout.strip().splitlines()[-1])

    store = durable_backend.open()
    assistant = store.messages("crash")[-1]
    assert assistant["id"] == crashed["message_id"]
    assert assistant["parts"] == [
        {"type": "step-start"},
        {"type": "text", "text": "Hello", "state": "streaming"},
        {
            "type": "tool-search",
            "toolCallId": "c1",
            "state": "input-available",
            "input": {"q": "x"},
        },
    ]
    with pytest.raises(StreamAlreadyOpenError) as raised:
        store.open_stream("crash")
    assert raised.value.stream_id == crashed["stream_id"]

    version = store.version("crash")
    store.close_stream("crash", crashed["stream_id"], "interrupted", reason="worker crashed")
    assert store.version("crash") == version + 1
    assert as_json(store.messages("crash")[-1]) == as_json(assistant)
    assert as_json(durable_backend.open().messages("crash")) == as_json(store.messages("crash"))
    with store.open_stream("crash", continuation=True) as resumed:
        assert resumed.message_id == crashed["message_id"]


def test_a_new_message_cannot_take_the_id_of_an_earlier_one(store: ConversationStore) -> None:
    """``start.messageId`` naming an existing message is refused; the stream goes on under its own id."""
    store.start_conversation("chat")
    store.append_message("chat", user("u1"))
    with store.open_stream("chat", actor=BOT) as stream:
        refused = stream.append({"type": "start", "messageId": "u1"})
        assert refused.error is not None
        assert "'u1', the id of message 1" in str(refused.error)
        assert refused.error.chunk_type == "start" and refused.error.position == 0
        for chunk in [{"type": "start"}, *REPLY[1:]]:
            assert stream.append(chunk).error is None
        own_id = stream.message_id
    shown = store.messages("chat")
    assert [m["id"] for m in shown] == ["u1", own_id]
    assert shown[0] == user("u1")
    refusals = [e for e in store.history("chat") if "refused" in e.marks]
    assert len(refusals) == 1


def test_a_continuation_writes_into_the_same_assistant_message(store: ConversationStore) -> None:
    """A continuation stream extends the last assistant message and ignores ``start.messageId``."""
    store.start_conversation("chat")
    store.append_message("chat", user("u1"))
    store.ingest(
        "chat",
        [
            {"type": "start", "messageId": "m1"},
            {"type": "start-step"},
            {
                "type": "tool-input-available",
                "toolCallId": "c1",
                "toolName": "deleteFile",
                "input": {"path": "/tmp/x"},
            },
            {"type": "tool-approval-request", "approvalId": "ap1", "toolCallId": "c1"},
            {"type": "finish-step"},
            {"type": "finish", "finishReason": "tool-calls"},
        ],
    )
    first_parts = copy.deepcopy(store.messages("chat")[-1]["parts"])

    with store.open_stream("chat", continuation=True, actor=BOT) as stream:
        assert stream.message_id == "m1"
        received = [
            stream.append(chunk)
            for chunk in [
                {"type": "start", "messageId": "a-new-id-from-the-model"},
                {"type": "start-step"},
                {"type": "tool-output-available", "toolCallId": "c1", "output": {"deleted": True}},
                {"type": "text-start", "id": "t"},
                delta("Done."),
                {"type": "text-end", "id": "t"},
                {"type": "finish-step"},
                {"type": "finish", "finishReason": "stop"},
            ]
        ]
    assert all(r.verdict is Verdict.APPLIED for r in received), received

    messages = store.messages("chat")
    assert [m["id"] for m in messages] == ["u1", "m1"]
    parts = messages[-1]["parts"]
    assert len(parts) == len(first_parts) + 2
    assert parts[-2:] == [
        {"type": "step-start"},
        {"type": "text", "text": "Done.", "state": "done"},
    ]
    tool = next(p for p in parts if p.get("toolCallId") == "c1")
    assert (tool["state"], tool["output"]) == ("output-available", {"deleted": True})


def _history(store: ConversationStore) -> list[tuple[int, datetime, list[dict[str, Any]]]]:
    """Write a conversation step by step; note (version, time, messages) after each step."""
    seen: list[tuple[int, datetime, list[dict[str, Any]]]] = []

    def note() -> None:
        seen.append(
            (
                store.version("chat"),
                datetime.now(UTC),
                copy.deepcopy(store.messages("chat")),
            )
        )
        time.sleep(0.003)  # the next event is stamped strictly later than this note

    store.start_conversation("chat")
    note()
    store.append_message("chat", user("u1"))
    note()
    stream = store.open_stream("chat", actor=BOT)
    note()
    stream.append({"type": "text-start", "id": "t"})
    stream.append(delta("Hello"))
    stream.append(
        {"type": "tool-input-available", "toolCallId": "c1", "toolName": "search", "input": {}}
    )
    stream.flush()  # not waiting for the boundary to settle
    note()
    stream.append(delta(" world"))
    stream.flush()
    note()
    stream.close()
    note()
    store.append_message("chat", user("u2"))
    note()
    return seen


def test_at_version_gives_the_conversation_as_it_stood(store: ConversationStore) -> None:
    """``messages(at_version=N)`` is the conversation right after its N-th event, mid-stream too."""
    seen = _history(store)
    assert len({version for version, _, _ in seen}) == len(seen), "each step adds events"
    for version, _, messages in seen:
        assert as_json(store.messages("chat", at_version=version)) == as_json(messages), version
    assert as_json(store.messages("chat", at_version=seen[-1][0] + 50)) == as_json(seen[-1][2])


def test_at_time_gives_the_conversation_as_it_stood(store: ConversationStore) -> None:
    """``messages(at_time=T)`` is the conversation as it was at T (UTC)."""
    before = datetime.now(UTC) - timedelta(milliseconds=1)
    time.sleep(0.003)
    seen = _history(store)
    assert store.messages("chat", at_time=before) == []
    for version, moment, messages in seen:
        assert as_json(store.messages("chat", at_time=moment)) == as_json(messages), version


def test_chunks_are_committed_at_most_batch_chunks_at_a_time(backend: Backend) -> None:
    """Plain chunks are committed in batches of ``batch_chunks``; no batch is larger."""
    writer = backend.open(batch_chunks=4, batch_ms=600_000)
    reader = backend.other_store(writer)
    writer.start_conversation("chat")
    writer.append_message("chat", user("u1"))
    with writer.open_stream("chat", commit=True) as stream:  # the reader sees it at once
        stream.append({"type": "text-start", "id": "t"})
        for appended in range(2, 12):
            stream.append(delta("x"))
            committed = stored_chunk_count(reader, "chat")
            assert committed == appended - appended % 4, f"after {appended} chunks"
            text = reader.messages("chat")[-1]["parts"]
            assert (text[0]["text"] if text else "") == "x" * (committed - 1 if committed else 0)
    batches = [
        len(e.chunks) for e in stored_events(reader, "chat") if isinstance(e, ChunksReceived)
    ]
    assert batches == [4, 4, 3]  # the last, partial batch is committed on close


BOUNDARIES = [
    pytest.param(
        [],
        {"type": "tool-input-available", "toolCallId": "c1", "toolName": "search", "input": {}},
        id="tool-input-available",
    ),
    pytest.param(
        [{"type": "tool-input-available", "toolCallId": "c2", "toolName": "rm", "input": {}}],
        {"type": "tool-approval-request", "approvalId": "ap2", "toolCallId": "c2"},
        id="tool-approval-request",
    ),
    pytest.param(
        [{"type": "tool-input-available", "toolCallId": "c3", "toolName": "search", "input": {}}],
        {"type": "tool-output-available", "toolCallId": "c3", "output": [1]},
        id="tool-output-available",
    ),
    pytest.param(
        [{"type": "tool-input-available", "toolCallId": "c4", "toolName": "search", "input": {}}],
        {"type": "tool-output-error", "toolCallId": "c4", "errorText": "timeout"},
        id="tool-output-error",
    ),
    pytest.param(
        [
            {"type": "tool-input-available", "toolCallId": "c5", "toolName": "rm", "input": {}},
            {"type": "tool-approval-request", "approvalId": "ap5", "toolCallId": "c5"},
        ],
        {"type": "tool-output-denied", "toolCallId": "c5"},
        id="tool-output-denied",
    ),
    pytest.param([], {"type": "finish-step"}, id="finish-step"),
    pytest.param([], {"type": "error", "errorText": "rate limited"}, id="error"),
    pytest.param([], {"type": "abort", "reason": "user stopped"}, id="abort"),
    pytest.param([], {"type": "finish", "finishReason": "stop"}, id="finish"),
]


@pytest.mark.parametrize(("setup", "boundary"), BOUNDARIES)
def test_a_boundary_chunk_is_committed_without_waiting_for_its_batch(
    backend: Backend, setup: list[dict[str, Any]], boundary: dict[str, Any]
) -> None:
    """Chunks others act on are committed with everything buffered before them once they have
    settled (a few ms; with the next chunk or the close if one comes first), long before the
    batch would be full or old (here: 1,000 chunks, 10 minutes)."""
    writer = backend.open(batch_chunks=1000, batch_ms=600_000)
    reader = backend.other_store(writer)
    writer.start_conversation("chat")
    writer.append_message("chat", user("u1"))
    with writer.open_stream("chat") as stream:
        for chunk in setup:
            assert stream.append(chunk).verdict is Verdict.APPLIED
            stream.flush()
        committed = stored_chunk_count(reader, "chat")
        assert committed == len(setup)
        stream.append({"type": "text-start", "id": "t"})
        stream.append(delta("buffered"))
        assert stored_chunk_count(reader, "chat") == committed, "plain chunks wait for their batch"
        assert stream.append(boundary).verdict is Verdict.APPLIED
        deadline = time.monotonic() + 10
        while stored_chunk_count(reader, "chat") < committed + 3 and time.monotonic() < deadline:
            time.sleep(0.002)
        assert stored_chunk_count(reader, "chat") == committed + 3
        assert as_json(reader.messages("chat")) == as_json(stream.conversation.state.messages)


def test_the_timer_commits_buffered_chunks_when_the_model_goes_quiet(backend: Backend) -> None:
    """With no further chunk, what is buffered is committed within about ``batch_ms``."""
    writer = backend.open(batch_chunks=1000, batch_ms=150)
    reader = backend.other_store(writer)
    writer.start_conversation("chat")
    writer.append_message("chat", user("u1"))
    stream = writer.open_stream("chat")
    started = time.monotonic()
    for chunk in ({"type": "text-start", "id": "t"}, delta("still "), delta("thinking")):
        stream.append(chunk)
    assert stored_chunk_count(reader, "chat") == 0, "committed before the batch was due"
    while stored_chunk_count(reader, "chat") < 3 and time.monotonic() - started < 5:
        time.sleep(0.01)
    waited = time.monotonic() - started
    assert stored_chunk_count(reader, "chat") == 3, "the timer never committed the buffered chunks"
    assert waited < 1.5, f"committed after {waited:.2f}s, batch_ms is 0.15s"
    assert reader.messages("chat")[-1]["parts"][0]["text"] == "still thinking"
    stream.close()


def _tool_parts(kind: str) -> list[dict[str, Any]]:
    """One tool part in each of the 7 states, static (``tool-<name>``) or dynamic."""

    def part(call: str, state: str, **fields: Any) -> dict[str, Any]:
        head = (
            {"type": "tool-lookup"}
            if kind == "static"
            else {"type": "dynamic-tool", "toolName": "lookup"}
        )
        return {**head, "toolCallId": f"{kind}-{call}", "state": state, **fields}

    return [
        part("1", "input-streaming", input={"q": "par"}),
        part(
            "2",
            "input-available",
            input={"q": "paris"},
            callProviderMetadata={"openai": {"itemId": "fc_2"}},
        ),
        part("3", "approval-requested", input={"q": "rm -rf"}, approval={"id": "ap3"}),
        part(
            "4",
            "approval-responded",
            input={"q": "ls"},
            approval={"id": "ap4", "approved": True, "reason": "fine"},
        ),
        part(
            "5",
            "output-available",
            input={"q": "weather"},
            output={"temp": 21.5, "unit": "C", "ok": True, "list": [1, 1.0, None]},
            resultProviderMetadata={"openai": {"cost": 3}},
        ),
        part("6", "output-error", input={"q": "boom"}, errorText="upstream timed out"),
        part(
            "7",
            "output-denied",
            input={"q": "drop table"},
            approval={"id": "ap7", "approved": False, "reason": "no"},
        ),
    ]


IMPORTED = {
    "id": "imported-1",
    "role": "assistant",
    "metadata": {"source": "import", "tokens": 12},
    "parts": [
        {"type": "step-start"},
        {"type": "text", "text": "Calling tools.", "state": "done"},
        *_tool_parts("static"),
        {"type": "step-start"},
        *_tool_parts("dynamic"),
    ],
}


def test_an_imported_assistant_message_with_tool_parts_in_every_state_round_trips_exactly(
    backend: Backend,
) -> None:
    """Static and dynamic tool parts in all 7 states come back JSON-equal."""
    store = backend.open()
    store.start_conversation("chat")
    store.append_message("chat", user("u1"))
    store.append_message("chat", copy.deepcopy(IMPORTED), actor="system:import")
    expected = as_json([user("u1"), IMPORTED])
    assert as_json(store.messages("chat")) == expected
    assert as_json(replay_from_scratch(store, "chat").state.messages) == expected
    drop_snapshots(store)
    assert as_json(store.messages("chat")) == expected
    if backend.durable:
        assert as_json(backend.open().messages("chat")) == expected


def test_concurrent_writers_on_one_conversation_lose_nothing_and_apply_nothing_twice(
    backend: Backend,
) -> None:
    """Two stores append to one conversation at once: each message lands once, in order."""
    first = backend.open()
    second = backend.other_store(first)
    first.start_conversation("busy")
    per_writer = 30
    start = threading.Barrier(2)
    written: list[str] = []
    failures: list[BaseException] = []

    def write(store: ConversationStore, prefix: str) -> None:
        start.wait()
        for index in range(per_writer):
            message_id = f"{prefix}-{index}"
            try:
                store.append_message("busy", user(message_id, f"{prefix} says {index}"))
                written.append(message_id)
            except BaseException as error:
                failures.append(error)

    threads = [
        threading.Thread(target=write, args=(s, p)) for s, p in ((first, "a"), (second, "b"))
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    ids = [message["id"] for message in first.messages("busy")]
    assert len(ids) == len(set(ids)), "a message was applied twice"
    assert sorted(ids) == sorted(written), (
        "an acknowledged append is missing, or a refused one landed"
    )
    for prefix in ("a", "b"):
        mine = [i for i in ids if i.startswith(f"{prefix}-")]
        assert mine == sorted(mine, key=lambda i: int(i.split("-")[1])), "a writer's order changed"
    assert first.version("busy") == 1 + len(ids)
    assert as_json(replay_from_scratch(first, "busy").state.messages) == as_json(
        first.messages("busy")
    )
    # The store retries a lost race itself (docs/behaviour.md §7); two writers must not exhaust that.
    assert not failures, (
        f"{len(failures)} of {2 * per_writer} appends failed, first: {failures[0]!r}"
    )


def _open_at_once(
    stores: tuple[ConversationStore, ...], chat: str, *, commit: bool = True
) -> list[Any]:
    """Open a stream on ``chat`` from each store at once; return each one's writer or error."""
    start = threading.Barrier(len(stores))
    outcomes: list[Any] = [None] * len(stores)

    def open_one(index: int) -> None:
        start.wait()
        try:
            outcomes[index] = stores[index].open_stream(chat, actor=f"agent:{index}", commit=commit)
        except BaseException as error:  # the caller checks what each store got
            outcomes[index] = error

    threads = [threading.Thread(target=open_one, args=(i,)) for i in range(len(stores))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return outcomes


def test_racing_streams_open_exactly_one(backend: Backend) -> None:
    """Two stores opening a stream on one conversation at once, each open committed before
    ``open_stream`` returns (``commit=True``): one wins, the other is refused there."""
    first = backend.open()
    second = backend.other_store(first)
    first.start_conversation("race")
    for round_ in range(4):
        first.append_message("race", user(f"u{round_}"))
        outcomes = _open_at_once((first, second), "race", commit=True)
        winners = [o for o in outcomes if not isinstance(o, BaseException)]
        losers = [o for o in outcomes if isinstance(o, BaseException)]
        assert len(winners) == 1, outcomes
        assert len(losers) == 1 and isinstance(losers[0], StreamAlreadyOpenError), outcomes
        assert losers[0].stream_id == winners[0].stream_id
        winners[0].close()
        assert [m["role"] for m in first.messages("race")].count("assistant") == round_ + 1


def test_racing_streams_with_pending_opens_record_exactly_one(backend: Backend) -> None:
    """The same race with ``commit=False`` (the open committed with the stream's first batch): a store
    may still be refused at once (the other's open was committed by then), else both get a
    writer and exactly one of their closes goes through, the other raising
    StreamOpenLostError. Either way one stream is recorded."""
    first = backend.open()
    second = backend.other_store(first)
    first.start_conversation("race")
    for round_ in range(4):
        first.append_message("race", user(f"u{round_}"))
        outcomes = _open_at_once((first, second), "race", commit=False)
        closed, refused = [], []
        for outcome in outcomes:
            if isinstance(outcome, BaseException):
                refused.append(outcome)
                continue
            try:
                outcome.append({"type": "start"})
                outcome.close()
                closed.append(outcome)
            except NoOpenStreamError as error:
                refused.append(error)
        assert len(closed) == 1 and len(refused) == 1, outcomes
        assert isinstance(refused[0], (StreamAlreadyOpenError, StreamOpenLostError)), refused
        assert [m["role"] for m in first.messages("race")].count("assistant") == round_ + 1
    assert first.operations.verify().ok


def test_a_writer_whose_stream_was_closed_elsewhere_is_refused(backend: Backend) -> None:
    """A writer whose stream another store closed gets a chatledger error and changes nothing."""
    writer = backend.open(batch_chunks=1)
    other = backend.other_store(writer)
    writer.start_conversation("chat")
    writer.append_message("chat", user("u1"))
    stream = writer.open_stream("chat")
    stream.append({"type": "text-start", "id": "t"})
    other.close_stream("chat", stream.stream_id, "interrupted", reason="taken over")
    before = as_json(other.messages("chat"))

    with pytest.raises(ChatLedgerError) as raised:
        stream.append(delta("too late"))
    assert isinstance(raised.value, NoOpenStreamError), repr(raised.value)
    assert as_json(other.messages("chat")) == before
    assert as_json(replay_from_scratch(other, "chat").state.messages) == before
    # The writer is done: later calls are refused, closing it records nothing more.
    with pytest.raises(NoOpenStreamError):
        stream.append(delta("still too late"))
    stream.close("finished")
    (closed,) = other.history("chat", kinds=["stream-closed"])
    assert closed.summary.endswith("closed: interrupted (taken over)")
    assert other.operations.verify("chat").ok


def test_closing_a_writer_whose_flusher_found_the_stream_closed_raises(backend: Backend) -> None:
    """The background flusher, not the writer's caller, learns that the stream was closed
    elsewhere: the caller's close still says so, so an answer whose last chunks were not stored
    is never reported as finished (an HTTP turn once ended such an answer as if it had)."""
    writer = backend.open(batch_chunks=1000, batch_ms=600_000)
    other = backend.other_store(writer)
    writer.start_conversation("chat")
    writer.append_message("chat", user("u1"))
    stream = writer.open_stream("chat", commit=True)  # the other store acts on it at once
    other.close_stream("chat", stream.stream_id, "aborted", reason="stopped elsewhere")
    before = as_json(other.messages("chat"))
    for chunk in text_chunks("t", "buffered, ", "never stored"):
        stream.append(chunk)
    stream.append({"type": "finish-step"})  # a boundary: the flusher's settle timer commits it
    stream.settle()  # what the flusher thread runs (it may have run already): errors stay quiet
    with pytest.raises(NoOpenStreamError):
        stream.close("finished")
    assert as_json(other.messages("chat")) == before
    (closed,) = other.history("chat", kinds=["stream-closed"])
    assert closed.summary.endswith("closed: aborted (stopped elsewhere)")


def test_a_stream_that_lost_a_race_to_an_approval_commits_its_chunks_exactly_once(
    backend: Backend,
) -> None:
    """An approval given elsewhere mid-stream is kept; the writer's batch lands once."""
    writer_store = backend.open(batch_chunks=1000, batch_ms=600_000)
    approver = backend.other_store(writer_store)
    writer_store.start_conversation("chat")
    writer_store.append_message("chat", user("u1"))
    writer_store.ingest(
        "chat",
        [
            {"type": "tool-input-available", "toolCallId": "c1", "toolName": "rm", "input": {}},
            {"type": "tool-approval-request", "approvalId": "ap1", "toolCallId": "c1"},
        ],
    )
    # Committed at once: an approval given while an open is still pending is a change the
    # answer did not see, and loses the open (test_stream_open_pending.py).
    with writer_store.open_stream("chat", continuation=True, commit=True) as stream:
        stream.append({"type": "text-start", "id": "t"})
        stream.append(delta("a"))
        approver.respond_to_approval("chat", approval_id="ap1", approved=True, actor=ALICE)
        stream.append(delta("b"))
    parts = approver.messages("chat")[-1]["parts"]
    assert parts[0]["state"] == "approval-responded"
    assert parts[0]["approval"] == {"id": "ap1", "approved": True}
    assert parts[1] == {"type": "text", "text": "ab", "state": "streaming"}
    assert stored_chunk_count(approver, "chat") == 2 + 3
    assert as_json(replay_from_scratch(approver, "chat").state.messages) == as_json(
        approver.messages("chat")
    )


def test_a_commit_that_failed_leaves_no_gap_in_the_log_and_loses_no_chunk(
    durable_backend: Backend,
) -> None:
    """After a commit fails (the database stayed locked), the log stays contiguous and complete."""
    # No timer: the failing commit is the one carrying the stream's open and first chunks.
    store = open_store(
        durable_backend.url,
        StoreOptions(
            batch=BatchPolicy(max_chunks=1000, max_delay=600, settle=600),
            env={"SQLITE_LOCK_TIMEOUT": "1", "POSTGRES_LOCK_TIMEOUT": "1"},
        ),
    )
    durable_backend.stores.append(store)
    store.start_conversation("chat")
    store.append_message("chat", user("u1"))
    stream = store.open_stream("chat")
    stream.append({"type": "text-start", "id": "t"})
    stream.append(delta("a"))
    failed: BaseException | None = None
    with writes_blocked(store):
        try:
            stream.flush()
        except Exception as error:  # which error is not the point here
            failed = error
    assert failed is not None, "the commit went through a locked database"

    stream.append(delta("b"))
    stream.close()
    versions = [version for version, _, _ in stored_records(store, "chat")]
    assert versions == list(range(1, len(versions) + 1)), f"the log has a gap: versions {versions}"
    opened = [e for e in stored_events(store, "chat") if type(e).__name__ == "StreamOpened"]
    assert [e.stream_id for e in opened] == [stream.stream_id]
    replayed = replay_from_scratch(store, "chat").state.messages
    assert replayed[-1]["parts"] == [{"type": "text", "text": "ab", "state": "streaming"}]
    assert as_json(durable_backend.open().messages("chat")) == as_json(replayed)


def test_the_store_does_not_depend_on_statements_prepared_on_its_connections(
    postgres_backend: Backend,
) -> None:
    """The server forgets prepared statements behind psycopg's back: reads and writes go on.

    Here ``DEALLOCATE ALL`` through raw libpq does it, on a store with one
    pooled connection; under concurrent version clashes an aborted pipelined
    transaction did the same in CI ("prepared statement _pg3_2 does not
    exist"). chatledger's connections prepare no statements, so nothing is lost.
    """
    store = open_store(
        postgres_backend.url,
        StoreOptions(env={"POSTGRES_POOL_SIZE": "1", "POSTGRES_MAX_OVERFLOW": "0"}),
    )
    postgres_backend.stores.append(store)
    store.start_conversation("chat")
    for turn in range(6):  # psycopg would prepare what runs five times
        store.append_message("chat", user(f"u{turn}"))
    pool = store.log.recorder.datastore.pool
    connection = pool.getconn()
    try:
        assert connection.pgconn.exec_(b"DEALLOCATE ALL").status == 1  # COMMAND_OK
    finally:
        pool.putconn(connection)

    store.append_message("chat", user("after"))

    assert [m["id"] for m in store.messages("chat")][-2:] == ["u5", "after"]
