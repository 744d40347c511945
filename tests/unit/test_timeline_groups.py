"""``chatledger.domain.timeline_groups``: a stream's chunk batches fold into one row; decisions stay rows."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from chatledger.domain.aggregate import Conversation
from chatledger.domain.conversation import ConversationState
from chatledger.domain.events import ConversationEvent
from chatledger.domain.limits import Limits
from chatledger.domain.timeline import SUMMARY_LIMIT, TimelineEntry, compact, describe
from chatledger.domain.timeline_groups import (
    DECISION_KINDS,
    LIFECYCLE_KINDS,
    group,
    is_decision,
    page,
)

LIMITS = Limits()
WORDS = ["free up", " space", " by removing", " the old", " build logs."]
TOOL = [
    {"type": "tool-input-start", "toolCallId": "call_1", "toolName": "delete_file"},
    {
        "type": "tool-input-available",
        "toolCallId": "call_1",
        "toolName": "delete_file",
        "input": {"path": "/var/log/ci"},
    },
    {"type": "tool-approval-request", "toolCallId": "call_1", "approvalId": "ap_1"},
    {"type": "finish-step"},
    {"type": "finish", "finishReason": "tool-calls"},
]


def _chunk_by_chunk(chat: Conversation, stream_id: str, chunks: list[Any]) -> None:
    """Each chunk its own batch, as a writer flushing every delta records them."""
    for chunk in chunks:
        chat.receive(stream_id, chunk, limits=LIMITS)
        chat.flush()


def _events() -> list[ConversationEvent]:
    """A question, an answer streamed delta by delta asking approval, the denial, a second answer."""
    chat = Conversation.start("acme", "c", actor="user:alice")
    question = {"type": "text", "text": "Can you delete the old build logs?"}
    chat.append_message(
        {"id": "u1", "role": "user", "parts": [question]}, actor="user:alice", limits=LIMITS
    )
    chat.open_stream("s1", "a1", continuation=False, trigger="submit-message", actor="agent:bot")
    deltas = [{"type": "text-delta", "id": "t1", "delta": word} for word in WORDS]
    start = [{"type": "start", "messageId": "a1"}, {"type": "start-step"}]
    text = [{"type": "text-start", "id": "t1"}, *deltas, {"type": "text-end", "id": "t1"}]
    _chunk_by_chunk(chat, "s1", [*start, *text, *TOOL])
    chat.close_stream("s1", "finished", None, actor="agent:bot")
    chat.respond_to_approval(
        approval_id="ap_1",
        tool_call_id=None,
        approved=False,
        reason="not on Fridays",
        actor="user:alice",
        auto_continue=False,
    )
    chat.open_stream("s2", "a2", continuation=False, trigger="submit-message", actor="agent:bot")
    _chunk_by_chunk(chat, "s2", [{"type": "start", "messageId": "a2"}, *text])
    chat.close_stream("s2", "aborted", "the user left", actor="agent:bot")
    return list(chat.collect_events())


def _timeline(events: list[ConversationEvent]) -> list[TimelineEntry]:
    """Each event described against the state before it, compact as the read model keeps it."""
    entries = []
    conversation: Any = None
    for event in events:
        state = conversation.state if conversation is not None else ConversationState("", "")
        entries.append(compact(describe(event, state)))
        conversation = event.mutate(conversation)
    return entries


@pytest.fixture(scope="module")
def timeline() -> list[TimelineEntry]:
    return _timeline(_events())


def test_each_streams_chunks_are_one_row_and_every_other_event_its_own(
    timeline: list[TimelineEntry],
) -> None:
    """Dozens of one-chunk rows become one row per stream; decisions and lifecycle stay rows."""
    rows = group(timeline)
    assert [row.kind for row in rows] == [
        "conversation-started",
        "message-appended",
        "stream-opened",
        "chunks",
        "stream-closed",
        "approval-responded",
        "stream-opened",
        "chunks",
        "stream-closed",
    ]
    first = rows[3]
    batches = [entry for entry in timeline if entry.kind == "chunks"]
    assert first.entries == tuple(batches[:14]) and rows[7].entries == tuple(batches[14:])
    assert (first.position, first.last_position) == (batches[0].position, batches[13].position)
    assert (first.time, first.last_time) == (batches[0].time, batches[13].time)
    assert first.details | {"chunkTypes": None} == {
        "streamId": "s1",
        "messageId": "a1",
        "batches": 14,
        "chunks": 14,
        "replays": 0,
        "refused": 0,
        "chunkTypes": None,
        "outcome": "finished",
    }
    assert first.details["chunkTypes"]["text-delta"] == len(WORDS)
    assert rows[7].details["outcome"] == "aborted"
    assert [row.batches for row in rows if row.kind != "chunks"] == [1] * 7
    assert all(row.covers(entry.position) for row in rows for entry in row.entries)


def test_a_runs_summary_previews_its_text_and_names_its_tool_calls_and_outcome(
    timeline: list[TimelineEntry],
) -> None:
    """One short line: the text joined across batches, the tool call's milestones, how it ended."""
    summary = group(timeline)[3].summary
    assert summary.startswith("14 chunks in 14 batches: ")
    assert 'text "free up space by removing the old build…"' in summary
    assert "`delete_file`" in summary and "approval requested" in summary
    assert summary.endswith("; closed: finished")
    assert len(summary) <= SUMMARY_LIMIT


def test_decisions_are_picked_out_and_the_kinds_are_partitioned(
    timeline: list[TimelineEntry],
) -> None:
    """Approvals and tool outputs are decisions; the other kinds but chunks are lifecycle."""
    decisions = [row for row in group(timeline) if is_decision(row)]
    assert [(row.kind, row.actor, row.marks) for row in decisions] == [
        ("approval-responded", "user:alice", ("denied",))
    ]
    assert not set(DECISION_KINDS) & set(LIFECYCLE_KINDS)
    assert "chunks" not in LIFECYCLE_KINDS and "stream-closed" in LIFECYCLE_KINDS


def test_pages_follow_each_other_by_position_without_gaps(timeline: list[TimelineEntry]) -> None:
    """``page`` cuts after ``limit`` rows; grouping what follows the cursor gives the next rows."""
    rows = group(timeline)
    seen = []
    after = 0
    while True:
        shown = page(group(e for e in timeline if e.position > after), 2)
        seen += shown.rows
        if shown.next_after is None:
            break
        assert shown.next_after == shown.rows[-1].last_position
        after = shown.next_after
    assert seen == rows
    assert page(rows, None).rows == rows and page(rows, len(rows)).next_after is None


def test_a_run_ends_at_any_other_event_and_at_another_stream(
    timeline: list[TimelineEntry],
) -> None:
    """Batches of one stream split by another entry are two rows; a run keeps its batches' marks."""
    batches = [entry for entry in timeline if entry.kind == "chunks"]
    between = timeline[0]
    rows = group([batches[0], between, batches[1], batches[14]])
    assert [(row.kind, row.batches) for row in rows] == [
        ("chunks", 1),
        ("conversation-started", 1),
        ("chunks", 1),
        ("chunks", 1),
    ]
    assert rows[0].details["outcome"] is None  # its close is not among the entries
    marked = [batches[0], replace(batches[1], marks=("replay",))]
    assert group(marked)[0].marks == ("replay",)
