"""Racing client actions (docs/behaviour.md §4.2, §4.3, §7): one answer, one continuation, one claim.

Each race is repeated ROUNDS times on fresh conversations: threads sharing one
store (memory://, SQLite file, PostgreSQL), and two store instances on one
database (SQLite file, PostgreSQL).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from chatledger import ApprovalConflictError, ConcurrentWriteError, ConversationStore
from chatledger.domain.events import ContinuationClaimed, StreamClosed, ToolApprovalResponded
from tests.integration.conftest import Backend
from tests.integration.hitl_support import (
    ALICE,
    BOB,
    BOT,
    DELETE,
    Call,
    continuation_requests,
    events,
    events_of,
    new_chat,
    part,
    paused_turn,
    race,
    stream_chunks,
    text_chunks,
    tool_input_chunks,
)
from tests.support.ledger import as_json, replay_from_scratch

ROUNDS = 20


def _race_answers(first: ConversationStore, second: ConversationStore, answers: str) -> None:
    """ROUNDS times: two actors answer one approval at once (same or opposite answers)."""
    for round_ in range(ROUNDS):
        _answer_race(first, second, f"race-{round_}", second_approves=answers == "same")


def _answer_race(
    first: ConversationStore, second: ConversationStore, chat: str, *, second_approves: bool
) -> None:
    paused_turn(first, chat, [DELETE])

    outcome = race(
        lambda: first.respond_to_approval(
            chat, approval_id=DELETE.approval_id, approved=True, actor=ALICE
        ),
        lambda: second.respond_to_approval(
            chat, tool_call_id=DELETE.call_id, approved=second_approves, actor=BOB
        ),
    )

    where = f"{chat}: {outcome.results}"
    recorded = events_of(first, chat, ToolApprovalResponded)
    assert len(recorded) == 1, where
    assert len(continuation_requests(first, chat)) == 1, where
    changed = [r for r in outcome.returned if r.changed]
    assert len(changed) == 1, where
    assert changed[0].continuation_requested, where
    if second_approves:
        assert outcome.raised == [] and len(outcome.returned) == 2, where
    else:
        assert len(outcome.raised) == 1, where
        assert isinstance(outcome.raised[0], ApprovalConflictError), where
    winner = recorded[0]
    assert part(first, chat, DELETE.call_id)["state"] == (
        "approval-responded" if winner.approved else "output-denied"
    ), where
    assert winner.actor == (ALICE if outcome.results[0] is changed[0] else BOB), where


@pytest.mark.parametrize("answers", ["same", "opposite"])
def test_two_threads_answering_the_same_approval_record_exactly_one_answer(
    backend: Backend, answers: str
) -> None:
    """Two threads answer one approval: one event, one continuation, one loser."""
    store = backend.open()
    _race_answers(store, store, answers)


@pytest.mark.parametrize("answers", ["same", "opposite"])
def test_two_stores_answering_the_same_approval_record_exactly_one_answer(
    durable_backend: Backend, answers: str
) -> None:
    """Two stores on one database answer one approval at once: one event, one continuation."""
    first = durable_backend.open()
    _race_answers(first, durable_backend.open(), answers)


def test_exactly_one_of_several_concurrent_workers_claims_a_continuation(backend: Backend) -> None:
    """Four workers over two stores claim at once: exactly one gets the request."""
    stores = [backend.open()]
    stores.append(backend.other_store(stores[0]))
    for round_ in range(ROUNDS):
        _claim_race(stores, tenant=f"round-{round_}")


def _claim_race(stores: list[ConversationStore], *, tenant: str) -> None:
    paused_turn(stores[0], "chat", [DELETE], tenant=tenant)
    stores[0].respond_to_approval(
        "chat", approval_id=DELETE.approval_id, approved=True, tenant=tenant
    )

    outcome = race(
        *(
            lambda worker=f"worker-{i}", store=stores[i % 2]: store.claim_continuation(
                worker, tenant=tenant
            )
            for i in range(4)
        )
    )

    where = f"{tenant}: {outcome.results}"
    assert outcome.raised == [], where
    winners = [r for r in outcome.returned if r is not None]
    assert len(winners) == 1, where
    claims = events_of(stores[0], "chat", ContinuationClaimed, tenant=tenant)
    assert [c.worker for c in claims] == [winners[0].claimed_by], where
    (listed,) = stores[1].pending_continuations(tenant=tenant)
    assert listed.claimed_by == winners[0].claimed_by, where


# -- an approval racing a stream that is still writing --------------------------------------

DOC = Call(
    "call_doc",
    "writeDocument",
    {
        "title": "Q3 report",
        "body": " ".join(f"Line {n}: revenue grew in region {n % 7}." for n in range(40)),
    },
    server_output={"saved": True},
)


def _busy_turn() -> tuple[list[dict[str, Any]], int]:
    """A step asking approval for DELETE, then streaming a long tool input and text."""
    chunks: list[dict[str, Any]] = [{"type": "start", "messageId": "a1"}, {"type": "start-step"}]
    chunks += tool_input_chunks(DELETE)
    chunks.append(
        {
            "type": "tool-approval-request",
            "approvalId": DELETE.approval_id,
            "toolCallId": DELETE.call_id,
        }
    )
    asked = len(chunks)
    chunks += tool_input_chunks(DOC, pieces=60)
    chunks.append(
        {"type": "tool-output-available", "toolCallId": DOC.call_id, "output": DOC.server_output}
    )
    chunks += text_chunks("txt-9", *(f"word{n} " for n in range(40)))
    chunks += [{"type": "finish-step"}, {"type": "finish", "finishReason": "tool-calls"}]
    return chunks, asked


def _until_recorded(action: Callable[[], Any]) -> Any:
    """Run ``action``, retrying while it raises ConcurrentWriteError (as it asks)."""
    for _attempt in range(100):
        try:
            return action()
        except ConcurrentWriteError:
            time.sleep(0.002)
    return action()


def test_an_approval_racing_a_writing_stream_loses_nothing_and_applies_nothing_twice(
    backend: Backend,
) -> None:
    """Approving during a busy stream: every chunk once, one answer, one continuation."""
    writer_store = backend.open(batch_chunks=3, batch_ms=5)
    approver = backend.other_store(writer_store)
    chunks, asked_at = _busy_turn()
    expected_store = ConversationStore.open("memory://")
    new_chat(expected_store, "chat")
    expected_store.ingest("chat", chunks)
    expected_store.respond_to_approval("chat", approval_id=DELETE.approval_id, approved=True)
    expected = as_json(expected_store.messages("chat"))
    overlapped = 0

    for round_ in range(ROUNDS // 2):
        chat = f"busy-{round_}"
        new_chat(writer_store, chat)
        asked = threading.Event()
        stream_id: list[str] = []

        def write(
            chat: str = chat, asked: threading.Event = asked, stream_id: list[str] = stream_id
        ) -> None:
            stream = writer_store.open_stream(chat, actor=BOT)
            stream_id.append(stream.stream_id)
            for index, chunk in enumerate(chunks):
                stream.append(chunk)
                if index + 1 == asked_at:
                    asked.set()
                elif index >= asked_at:
                    time.sleep(0.001)
            stream.close("finished")

        def approve(chat: str = chat, asked: threading.Event = asked) -> Any:
            assert asked.wait(30)
            # A ConcurrentWriteError says "nothing recorded, retry": this test is about what is
            # recorded; a refusal under contention is test_answers_given_while_a_stream_...
            return _until_recorded(
                lambda: approver.respond_to_approval(
                    chat, approval_id=DELETE.approval_id, approved=True, actor=ALICE
                )
            )

        outcome = race(write, approve)

        where = f"round {round_}: {outcome.results}"
        assert outcome.raised == [], where
        assert outcome.results[1].changed, where
        recorded = stream_chunks(writer_store, chat, stream_id[0])
        assert [position for position, _ in recorded] == list(range(len(chunks))), where
        assert as_json([chunk for _, chunk in recorded]) == as_json(chunks), where
        assert as_json(writer_store.messages(chat)) == expected, where
        assert as_json(replay_from_scratch(writer_store, chat).state.messages) == expected, where
        assert len(events_of(writer_store, chat, ToolApprovalResponded)) == 1, where
        assert len(continuation_requests(writer_store, chat)) == 1, where
        assert writer_store.status(chat).status == "ready-to-continue", where
        kinds = [type(e) for e in events(writer_store, chat)]
        overlapped += kinds.index(ToolApprovalResponded) < kinds.index(StreamClosed)
    assert overlapped, (
        "the approval never landed while the stream was open: the race was not exercised"
    )


def test_answers_given_while_a_stream_keeps_committing_are_not_refused(backend: Backend) -> None:
    """Approvals during a stream committing every chunk all land; the stream too."""
    writer_store = backend.open(batch_chunks=1)
    approver = backend.other_store(writer_store)
    calls = [
        Call(f"call_rm{n}", "deleteFile", {"path": f"/srv/old/{n}.csv"}, approval_id=f"appr_rm{n}")
        for n in range(16)
    ]
    head: list[dict[str, Any]] = [{"type": "start", "messageId": "a1"}, {"type": "start-step"}]
    for call in calls:
        head += tool_input_chunks(call, pieces=1)
        head.append(
            {
                "type": "tool-approval-request",
                "approvalId": call.approval_id,
                "toolCallId": call.call_id,
            }
        )
    tail = [
        *text_chunks("txt-9", *(f"word{n} " for n in range(300))),
        {"type": "finish-step"},
        {"type": "finish", "finishReason": "tool-calls"},
    ]
    refused: list[str] = []

    for round_ in range(3):
        chat = f"busy-{round_}"
        new_chat(writer_store, chat)
        stream = writer_store.open_stream(chat, actor=BOT)
        for chunk in head:
            stream.append(chunk)

        def approve_all(chat: str = chat) -> None:
            for call in calls:
                try:
                    approver.respond_to_approval(
                        chat, approval_id=call.approval_id, approved=True, actor=ALICE
                    )
                except ConcurrentWriteError as error:
                    refused.append(f"approval {chat}/{call.call_id}: {error}")

        def write_tail(stream: Any = stream, chat: str = chat) -> None:
            try:
                for chunk in tail:
                    stream.append(chunk)
                stream.close("finished")
            except ConcurrentWriteError as error:
                refused.append(f"stream {chat} (chunks not written, stream left open): {error}")

        outcome = race(write_tail, approve_all)
        assert outcome.raised == [], outcome.results

    assert refused == [], (
        f"{len(refused)} actions refused for contention (no retry left): {refused}"
    )
