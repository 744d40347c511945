"""``chatledger.domain.timeline``: one readable audit entry per event, described from the state before it."""

from __future__ import annotations

import copy
import json
import unicodedata
from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import uuid4

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatledger.domain.aggregate import Conversation
from chatledger.domain.conversation import ConversationState
from chatledger.domain.errors import ChatLedgerError
from chatledger.domain.events import (
    ChunksReceived,
    ContinuationClaimed,
    ConversationEvent,
    MessageAppended,
    MessagesCut,
    StreamClosed,
    StreamOpened,
    ToolApprovalResponded,
    ToolOutputAdded,
)
from chatledger.domain.limits import Limits
from chatledger.domain.stream_rules import is_boundary
from chatledger.domain.timeline import KINDS, MARKS, SUMMARY_LIMIT, TimelineEntry, describe
from tests.integration.garbage import garbage
from tests.integration.strategies import FLUSH, Scenario, scenarios

LIMITS = Limits()
BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
NOW = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)


# -- building conversations through the domain API --------------------------------


def _stream(conversation: Conversation, stream_id: str, chunks: list[Any]) -> None:
    """Receive ``chunks``, committing a batch at each boundary chunk as the store's writer does."""
    for chunk in chunks:
        conversation.receive(stream_id, chunk, limits=LIMITS)
        if is_boundary(chunk):
            conversation.flush()


def _audited_conversation() -> list[ConversationEvent]:
    """A question, a streamed answer with two tool calls (one needing approval), a replayed and
    a refused chunk, a denial, a tool output, a continuation, an approval, an error, a regenerate."""
    chat = Conversation.start("acme", "chat-1", actor="user:alice")
    question = {"type": "text", "text": "What is the weather in Paris?\nAnd clean /tmp."}
    chat.append_message(
        {"id": "u1", "role": "user", "parts": [question]}, actor="user:alice", limits=LIMITS
    )
    chat.open_stream("s1", "a1", continuation=False, trigger="submit-message", actor="agent:bot")
    _stream(chat, "s1", FIRST_STREAM)
    chat.close_stream("s1", "finished", None, actor="agent:bot")
    chat.respond_to_approval(
        approval_id="ap_7",
        tool_call_id=None,
        approved=False,
        reason="not in production",
        actor="user:alice",
        auto_continue=True,
    )
    chat.add_tool_output(
        "call_1",
        state="output-available",
        output={"temp": 21, "unit": "C"},
        error_text=None,
        actor="tool-executor",
        auto_continue=True,
        limits=LIMITS,
    )  # the batch is answered: a continuation is requested
    assert chat.state.continuation is not None
    request = chat.state.continuation["requestId"]
    assert chat.claim_continuation(request, worker="worker-1", lease_seconds=60, now=NOW)
    chat.open_stream(
        "s2", "", continuation=True, trigger="continuation", actor="agent:bot", request_id=request
    )
    _stream(chat, "s2", SECOND_STREAM)
    chat.close_stream("s2", "errored", "provider timeout", actor="agent:bot")
    chat.respond_to_approval(
        approval_id=None,
        tool_call_id="call_2",
        approved=True,
        reason=None,
        actor="user:bob",
        auto_continue=False,
    )
    chat.add_tool_output(
        "call_2",
        state="output-error",
        output=None,
        error_text="search backend down",
        actor="tool-executor",
        auto_continue=False,
        limits=LIMITS,
    )
    chat.cut_messages("a1", trigger="regenerate-message", reason=None, actor="user:alice")
    return list(chat.collect_events())


FIRST_STREAM: list[Any] = [
    {"type": "start", "messageId": "a1"},
    {"type": "start-step"},
    {"type": "text-start", "id": "t1"},
    {"type": "text-delta", "id": "t1", "delta": "Let me check the weather "},
    {"type": "text-delta", "id": "t1", "delta": "and clean up the temporary files."},
    {"type": "text-end", "id": "t1"},
    {"type": "tool-input-start", "toolCallId": "call_1", "toolName": "weather"},
    {"type": "tool-input-delta", "toolCallId": "call_1", "inputTextDelta": '{"city":"Paris"}'},
    {
        "type": "tool-input-available",
        "toolCallId": "call_1",
        "toolName": "weather",
        "input": {"city": "Paris"},
    },
    {
        "type": "tool-input-available",
        "toolCallId": "call_7",
        "toolName": "delete_file",
        "input": {"path": "/tmp"},
    },
    {"type": "tool-approval-request", "toolCallId": "call_7", "approvalId": "ap_7"},
    {"type": "text-start", "id": "t2"},
    {"type": "text-delta", "id": "t2", "delta": "Waiting for your approval."},
    {"type": "tool-input-start", "toolCallId": "call_1", "toolName": "weather"},  # a replay
    {"type": "text-delta", "id": "nope", "delta": "lost"},  # refused: never opened
    {"type": "text-end", "id": "t2"},
    {"type": "finish-step"},
    {"type": "finish", "finishReason": "tool-calls"},
]

SECOND_STREAM: list[Any] = [
    {"type": "start-step"},
    {"type": "text-start", "id": "t3"},
    {"type": "text-delta", "id": "t3", "delta": "It is 21 °C in Paris."},
    {"type": "text-end", "id": "t3"},
    {
        "type": "tool-input-available",
        "toolCallId": "call_2",
        "toolName": "search",
        "dynamic": True,
        "input": {"q": "tmp policy"},
    },
    {"type": "tool-approval-request", "toolCallId": "call_2", "approvalId": "ap_2"},
]


def _fold(events: list[ConversationEvent]) -> ConversationState:
    """The state after ``events``, folded from scratch (the empty state before the first)."""
    conversation: Any = None
    for event in events:
        conversation = event.mutate(conversation)
    return conversation.state if conversation is not None else ConversationState("", "")


def _timeline(events: list[ConversationEvent]) -> list[TimelineEntry]:
    """Each event described against the state folded from scratch from the events before it."""
    return [describe(event, _fold(events[:index])) for index, event in enumerate(events)]


@pytest.fixture(scope="module")
def events() -> list[ConversationEvent]:
    """The events of the audited conversation."""
    return _audited_conversation()


@pytest.fixture(scope="module")
def timeline(events: list[ConversationEvent]) -> list[TimelineEntry]:
    """Its timeline."""
    return _timeline(events)


# -- the audited conversation -----------------------------------------------------


def test_every_event_reads_as_one_precise_line(
    events: list[ConversationEvent], timeline: list[TimelineEntry]
) -> None:
    """Kinds, actors, summaries and marks of a whole conversation, event by event."""
    request = next(e.request_id for e in events if isinstance(e, ContinuationClaimed))
    refusal = "text-delta: no open text part with id 'nope' (send text-sta…"
    assert [(e.kind, e.actor, e.summary, e.marks) for e in timeline] == [
        ("conversation-started", "user:alice", "conversation chat-1 started in tenant acme", ()),
        (
            "message-appended",
            "user:alice",
            'user message u1: "What is the weather in Paris? And clean /tmp."',
            (),
        ),
        ("stream-opened", "agent:bot", "stream s1 opened for a new assistant message", ()),
        (
            "chunks",
            "agent:bot",
            '9 chunks: start of message a1, text "Let me check the weather and …", tool call '
            "`weather` (call_1) input ready",
            (),
        ),
        ("chunks", "agent:bot", "1 chunk: tool call `delete_file` (call_7) input ready", ()),
        ("chunks", "agent:bot", "1 chunk: tool call `delete_file` (call_7) approval requested", ()),
        (
            "chunks",
            "agent:bot",
            f'6 chunks: text "Waiting for your approval."; 1 replay ignored (call_1); '
            f"1 refused ({refusal})",
            ("replay", "refused"),
        ),
        ("chunks", "agent:bot", "1 chunk: finish (tool-calls)", ()),
        ("stream-closed", "agent:bot", "stream s1 closed: finished", ()),
        (
            "approval-responded",
            "user:alice",
            "user:alice denied `delete_file` (call_7): not in production",
            ("denied",),
        ),
        (
            "tool-output-added",
            "tool-executor",
            'tool-executor added output for `weather` (call_1): {"temp":21,"unit":"C"}',
            (),
        ),
        (
            "continuation-requested",
            "tool-executor",
            f"continuation {request} requested for message a1: output of call_1",
            (),
        ),
        (
            "continuation-claimed",
            "worker-1",
            f"worker-1 claimed continuation {request} (lease 60 s)",
            (),
        ),
        (
            "stream-opened",
            "agent:bot",
            f"stream s2 opened continuing message a1 (continuation request {request})",
            (),
        ),
        (
            "chunks",
            "agent:bot",
            '5 chunks: text "It is 21 °C in Paris.", tool call `search` (call_2) input ready',
            (),
        ),
        ("chunks", "agent:bot", "1 chunk: tool call `search` (call_2) approval requested", ()),
        ("stream-closed", "agent:bot", "stream s2 closed: errored (provider timeout)", ("error",)),
        ("approval-responded", "user:bob", "user:bob approved `search` (call_2)", ()),
        (
            "tool-output-added",
            "tool-executor",
            "tool-executor added error for `search` (call_2): search backend down",
            ("error",),
        ),
        ("messages-cut", "user:alice", "regenerate: cut 1 message after u1 (a1)", ()),
    ]


def test_entries_keep_the_events_position_and_utc_time(
    events: list[ConversationEvent], timeline: list[TimelineEntry]
) -> None:
    """Position is the event's version; time is its timestamp, in UTC."""
    assert [entry.position for entry in timeline] == list(range(1, len(events) + 1))
    assert [entry.time for entry in timeline] == [event.timestamp for event in events]
    assert all(entry.time.utcoffset() == timedelta(0) for entry in timeline)


def test_a_batch_lists_every_chunk_with_its_position_verdict_and_refusal_reason(
    timeline: list[TimelineEntry],
) -> None:
    """Replayed and refused chunks stay visible in the details, marked, with the reason."""
    batch = timeline[6].details
    assert (batch["streamId"], batch["messageId"], batch["firstSeq"]) == ("s1", "a1", 11)
    assert (batch["count"], batch["replays"], batch["refused"]) == (6, 1, 1)
    rows = batch["chunks"]
    assert [row["position"] for row in rows] == list(range(11, 17))
    assert [row["verdict"] for row in rows] == [
        "applied",
        "applied",
        "replay",
        "refused",
        "applied",
        "applied",
    ]
    assert [row["chunk"] for row in rows] == FIRST_STREAM[11:17]
    assert rows[3]["reason"].startswith("no open text part with id 'nope'")
    assert all("reason" not in row for row in rows if row["verdict"] != "refused")
    assert all(isinstance(row["ageMs"], int) for row in rows)


def test_answers_carry_what_was_answered(timeline: list[TimelineEntry]) -> None:
    """An approval's details name the tool and its input, as the state before the answer held."""
    assert timeline[9].details == {
        "toolCallId": "call_7",
        "approvalId": "ap_7",
        "approved": False,
        "reason": "not in production",
        "autoContinue": True,
        "toolName": "delete_file",
        "messageId": "a1",
        "input": {"path": "/tmp"},
    }
    assert timeline[18].details["errorText"] == "search backend down"
    assert timeline[18].details["toolName"] == "search"


def test_a_cut_shows_the_messages_it_cut(
    events: list[ConversationEvent], timeline: list[TimelineEntry]
) -> None:
    """docs/behaviour.md §4.5: the cut messages stay in the log, and the audit shows them."""
    cut = timeline[-1].details
    assert cut["fromMessageId"] == "a1" and cut["count"] == 1
    assert cut["cutMessages"] == _fold(events[:-1]).messages[1:]


def test_the_export_is_json_and_every_summary_one_short_line(timeline: list[TimelineEntry]) -> None:
    """``to_json()`` survives strict JSON; summaries are single lines within the limit."""
    for entry in timeline:
        exported = entry.to_json()
        assert json.loads(json.dumps(exported, allow_nan=False)) == exported
        assert datetime.fromisoformat(exported["time"]) == entry.time
        assert exported["marks"] == list(entry.marks)
        _assert_well_formed(entry)


def test_describing_leaves_the_state_before_unchanged(events: list[ConversationEvent]) -> None:
    """``describe`` only reads: the projector folds the very same state right after."""
    for index, event in enumerate(events):
        before = _fold(events[:index])
        seen = copy.deepcopy(before.to_json())
        describe(event, before)
        assert before.to_json() == seen


# -- events that do not fit the state ---------------------------------------------


def _event(cls: type[ConversationEvent], **fields: Any) -> Any:
    return cls(originator_id=uuid4(), originator_version=2, timestamp=NOW, actor="x", **fields)


ODD_EVENTS = [
    _event(ChunksReceived, stream_id="s9", first_seq=0, chunks=[]),
    _event(
        ChunksReceived,
        stream_id="s9",
        first_seq=5,
        chunks=["not a chunk", None, {"type": 3}, {"type": "tool-output-available"}],
        ages_ms=[1],
        replays=[1, 9],
        refusals=[(0, "not an object"), (7, "out of range"), (2, "")],
    ),
    _event(ToolApprovalResponded, tool_call_id="gone", approval_id="ap", approved=False),
    _event(ToolOutputAdded, tool_call_id="gone", state="output-error"),
    _event(ToolOutputAdded, tool_call_id="gone", state="output-available", output=[1] * 500),
    _event(MessagesCut, from_message_id="gone", count=3, trigger="edit"),
    _event(StreamClosed, stream_id="s9", outcome="interrupted"),
    _event(StreamOpened, stream_id="s9", message_id="m", continuation=False, trigger="odd"),
    _event(ContinuationClaimed, request_id="r", worker="w", lease_seconds=1e300),
    _event(
        MessageAppended,
        message={
            "id": "m\n2",
            "role": "user",
            "parts": [{"type": "text", "text": "a\u202eb\x1bc\ud800"}],
        },
    ),
]


@pytest.mark.parametrize("event", ODD_EVENTS, ids=lambda event: type(event).__name__)
def test_events_that_do_not_fit_the_state_are_still_described(event: ConversationEvent) -> None:
    """Unknown calls and messages, empty or malformed batches, absurd leases: no exception."""
    entry = describe(event, ConversationState("", ""))
    _assert_well_formed(entry)
    assert "no summary" not in entry.summary


def test_odd_values_are_described_as_they_are() -> None:
    """Unknown tool calls are named by id; the default error text is shown for what it is."""
    empty = ConversationState("", "")
    assert describe(ODD_EVENTS[0], empty).summary == "0 chunks"
    odd_batch = describe(ODD_EVENTS[1], empty)
    assert odd_batch.marks == ("replay", "refused")
    assert odd_batch.summary == (
        "4 chunks: tool-output-available; 1 replay ignored; 2 refused (not an object; +1 more)"
    )
    assert [row["verdict"] for row in odd_batch.details["chunks"]] == [
        "refused",
        "replay",
        "refused",
        "applied",
    ]
    assert [row["ageMs"] for row in odd_batch.details["chunks"]] == [1, None, None, None]
    assert describe(ODD_EVENTS[2], empty).summary == "x denied gone"
    assert describe(ODD_EVENTS[3], empty).summary == (
        "x added error for gone: Tool execution denied by user. (default text)"
    )
    assert describe(ODD_EVENTS[5], empty).summary == "edit: cut 3 messages from gone"
    message = describe(ODD_EVENTS[-1], empty).summary
    assert message == 'user message m 2: "a\ufffdb\ufffdc?"'


def test_long_texts_are_elided_to_one_short_line() -> None:
    """A long reason is cut at the limit with an ellipsis; long message texts sooner."""
    empty = ConversationState("", "")
    denial = _event(
        ToolApprovalResponded, tool_call_id="c", approval_id="a", approved=False, reason="no " * 99
    )
    summary = describe(denial, empty).summary
    assert len(summary) == SUMMARY_LIMIT and summary.startswith("x denied c: no no")
    assert summary.endswith("no …")
    message = {"id": "u", "role": "user", "parts": [{"type": "text", "text": "ab\n" * 99}]}
    summary = describe(_event(MessageAppended, message=message), empty).summary
    assert summary == f'user message u: "{"ab " * 19}ab…"'


def test_a_start_that_renames_the_message_is_shown_and_bare_steps_are_listed() -> None:
    """``start`` with another messageId renames the new message: the audit says so."""
    chat = Conversation.start("acme", "chat-2", actor="system")
    chat.open_stream("s1", "a1", continuation=False, trigger="submit-message", actor="agent:bot")
    _stream(chat, "s1", [{"type": "start", "messageId": "msg-9"}, {"type": "start-step"}])
    chat.flush()
    _stream(chat, "s1", [{"type": "start-step"}, {"type": "finish-step"}])
    chat.close_stream("s1", "aborted", None, actor="user:alice")
    timeline = _timeline(list(chat.collect_events()))
    assert [entry.summary for entry in timeline[2:]] == [
        "2 chunks: start of message msg-9",
        "2 chunks: start-step, finish-step",
        "stream s1 closed: aborted",
    ]
    assert timeline[-1].actor == "user:alice"
    assert timeline[-1].details["messageId"] == "msg-9"


def test_an_event_class_added_later_gets_a_generic_entry() -> None:
    """A future event type is listed (kebab-case kind, raw details) rather than crashing the audit."""

    class BudgetExceeded(ConversationEvent):
        limit: int

    entry = describe(_event(BudgetExceeded, limit=3), ConversationState("", ""))
    assert (entry.kind, entry.summary, entry.details) == (
        "budget-exceeded",
        "BudgetExceeded event",
        {"limit": 3},
    )


# -- properties -------------------------------------------------------------------


def _assert_well_formed(entry: TimelineEntry) -> None:
    assert entry.summary and entry.summary.splitlines() == [entry.summary]
    assert len(entry.summary) <= SUMMARY_LIMIT
    unsafe = [c for c in entry.summary if unicodedata.category(c) in ("Cc", "Cs") or c in BIDI]
    assert unsafe == []  # no control characters, lone surrogates or bidi overrides
    assert set(entry.marks) <= set(MARKS)
    json.dumps(entry.to_json())


def _write(scenario: Scenario, refused: list[Any]) -> list[ConversationEvent]:
    """Drive a conversation through the aggregate as the store would, with extra refused input."""
    chat = Conversation.start("t", "c", actor="system")
    for number, step in enumerate(scenario.steps):
        if step.kind == "user":
            chat.append_message(copy.deepcopy(step.message), actor="user:alice", limits=LIMITS)
        elif step.kind in ("approve", "output"):
            _act(chat, step)
        else:
            _stream_step(chat, f"s{number}", step, refused)
    if chat.state.stream is None and len(chat.state.messages) > 1:
        chat.cut_messages(
            chat.state.messages[1]["id"], trigger="edit", reason="changed", actor="user:alice"
        )
    return list(chat.collect_events())


def _act(chat: Conversation, step: Any) -> None:
    try:
        if step.kind == "approve":
            chat.respond_to_approval(
                approval_id=None,
                tool_call_id=step.call,
                approved=step.approved,
                reason="scripted",
                actor="user:bob",
                auto_continue=True,
            )
        else:
            chat.add_tool_output(
                step.call,
                state="output-available" if step.error_text is None else "output-error",
                output=copy.deepcopy(step.output),
                error_text=step.error_text,
                actor="tool-executor",
                auto_continue=True,
                limits=LIMITS,
            )
    except ChatLedgerError:
        pass  # the generator's model of tool states is rough
    pending = chat.state.continuation
    if pending is not None and "claimedBy" not in pending:
        chat.claim_continuation(pending["requestId"], worker="w1", lease_seconds=30, now=NOW)


def _stream_step(chat: Conversation, stream_id: str, step: Any, refused: list[Any]) -> None:
    pending = chat.state.continuation
    request = pending["requestId"] if step.continuation and pending else None
    chat.open_stream(
        stream_id,
        f"m-{stream_id}",
        continuation=step.continuation,
        trigger="continuation" if step.continuation else "submit-message",
        actor="agent:bot",
        request_id=request,
    )
    for chunk in [*step.chunks, *refused]:
        if chunk is FLUSH:
            chat.flush()
        else:
            chat.receive(stream_id, copy.deepcopy(chunk), limits=LIMITS)
    if step.outcome is None:
        chat.flush()
    else:
        chat.close_stream(stream_id, step.outcome, None, actor="agent:bot")


@given(scenario=scenarios(), refused=st.lists(garbage(), max_size=2))
def test_any_conversation_is_described_event_by_event(
    scenario: Scenario, refused: list[Any]
) -> None:
    """Generated conversations (with garbage mixed in): one well-formed entry per event."""
    events = _write(scenario, refused)
    conversation: Any = None
    for event in events:
        before = conversation.state if conversation is not None else ConversationState("", "")
        entry = describe(event, before)
        _assert_well_formed(entry)
        assert entry.kind in KINDS
        assert "no summary" not in entry.summary
        assert entry.position == event.originator_version
        if isinstance(event, ChunksReceived):
            verdicts = {row["verdict"] for row in entry.details["chunks"]}
            assert ("replay" in entry.marks) == ("replay" in verdicts)
            assert ("refused" in entry.marks) == ("refused" in verdicts)
            assert len(entry.details["chunks"]) == len(event.chunks)
        conversation = event.mutate(conversation)
