"""Continuations (docs/behaviour.md §4.3): when requested, the queue, claiming, the continuation stream.

Runs on memory://, a SQLite file and PostgreSQL.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from chatledger import ContinuationNotPendingError, ConversationStore, Verdict
from chatledger.domain.events import (
    ContinuationRequested,
    StreamClosed,
    StreamOpened,
    ToolApprovalResponded,
)
from tests.integration.conftest import Backend
from tests.integration.hitl_support import (
    ALICE,
    BOB,
    BOT,
    DELETE,
    LOCATE,
    WEATHER,
    WIRE,
    continuation_chunks,
    continuation_requests,
    events,
    events_of,
    new_chat,
    part,
    paused_turn,
    stream_chunks,
    text_chunks,
    tool_input_chunks,
    tool_step_chunks,
    user,
)
from tests.support.ledger import as_json, replay_from_scratch

# -- when a continuation is requested --------------------------------------------------


def test_a_continuation_is_requested_only_when_the_whole_batch_is_answered(
    store: ConversationStore,
) -> None:
    """Two pending calls: the first answer requests nothing, the second exactly one."""
    paused_turn(store, "chat", [DELETE, WIRE])

    first = store.respond_to_approval(
        "chat", approval_id=DELETE.approval_id, approved=True, actor=ALICE
    )

    assert first.changed and not first.continuation_requested
    assert continuation_requests(store, "chat") == []
    assert store.pending_continuations() == []

    second = store.respond_to_approval(
        "chat", approval_id=WIRE.approval_id, approved=False, actor=BOB
    )

    assert second.continuation_requested
    (request,) = continuation_requests(store, "chat")
    assert request.message_id == "a1"
    assert [p.request_id for p in store.pending_continuations()] == [request.request_id]


def test_an_output_for_an_approved_call_queues_no_second_continuation(
    store: ConversationStore,
) -> None:
    """Approve (one request), then give the tool's output: still one request."""
    paused_turn(store, "chat", [DELETE])
    store.respond_to_approval("chat", approval_id=DELETE.approval_id, approved=True)

    result = store.add_tool_output("chat", DELETE.call_id, output={"deleted": True})

    assert (result.changed, result.continuation_requested) == (True, False)
    assert len(continuation_requests(store, "chat")) == 1
    assert len(store.pending_continuations()) == 1


def test_a_batch_with_a_client_tool_also_waits_for_its_output(store: ConversationStore) -> None:
    """An approved call next to a client tool waits for that tool's output too."""
    paused_turn(store, "chat", [DELETE, LOCATE])

    approved = store.respond_to_approval("chat", approval_id=DELETE.approval_id, approved=True)
    assert not approved.continuation_requested
    assert store.status("chat").status == "awaiting-tool-output"

    output = store.add_tool_output("chat", LOCATE.call_id, output={"city": "Lyon"})
    assert output.continuation_requested
    assert len(continuation_requests(store, "chat")) == 1


def test_a_mixed_batch_stays_paused_until_the_awaited_call_is_answered(
    store: ConversationStore,
) -> None:
    """One call has its output, one awaits approval: paused until answered, then one."""
    paused_turn(store, "chat", [WEATHER, DELETE])
    assert part(store, "chat", WEATHER.call_id)["state"] == "output-available"

    status = store.status("chat")
    assert status.status == "awaiting-approval"
    assert [w.tool_call_id for w in status.waiting_for] == [DELETE.call_id]
    assert store.pending_continuations() == []
    assert continuation_requests(store, "chat") == []

    result = store.respond_to_approval("chat", approval_id=DELETE.approval_id, approved=True)

    assert result.continuation_requested
    assert len(continuation_requests(store, "chat")) == 1
    assert store.status("chat").status == "ready-to-continue"


def test_an_answer_given_while_a_stream_is_open_is_requested_when_it_closes(
    backend: Backend,
) -> None:
    """An answer given while the reply streams is requested when the stream closes."""
    store = backend.open(batch_chunks=1)
    new_chat(store, "chat")
    turn = tool_step_chunks("a1", [DELETE])
    tail = turn.index({"type": "finish-step"})
    stream = store.open_stream("chat", actor=BOT)
    for chunk in turn[:tail]:
        stream.append(chunk)

    answered = store.respond_to_approval(
        "chat", approval_id=DELETE.approval_id, approved=True, actor=ALICE
    )

    assert answered.changed and not answered.continuation_requested
    assert continuation_requests(store, "chat") == []
    assert store.status("chat").status == "streaming"
    for chunk in turn[tail:]:
        stream.append(chunk)
    stream.close("finished")

    kinds = [type(e) for e in events(store, "chat")]
    assert kinds.count(ContinuationRequested) == 1
    assert (
        kinds.index(ContinuationRequested)
        > kinds.index(StreamClosed)
        > kinds.index(ToolApprovalResponded)
    )
    assert store.status("chat").status == "ready-to-continue"
    assert [p.chat_id for p in store.pending_continuations()] == ["chat"]


def test_an_answer_given_during_an_earlier_stream_requests_nothing_when_a_later_stream_closes(
    store: ConversationStore,
) -> None:
    """An answer given during an earlier stream requests nothing at a later close."""
    new_chat(store, "chat")
    turn = tool_step_chunks("a1", [DELETE, WIRE])
    first_request = turn.index(
        {
            "type": "tool-approval-request",
            "approvalId": DELETE.approval_id,
            "toolCallId": DELETE.call_id,
        }
    )
    stream = store.open_stream("chat", actor=BOT)
    for chunk in turn[: first_request + 1]:
        stream.append(chunk)
    store.respond_to_approval("chat", approval_id=DELETE.approval_id, approved=True, actor=ALICE)
    for chunk in turn[first_request + 1 :]:  # WIRE's approval request, finish-step, finish
        stream.append(chunk)
    stream.close("finished")  # WIRE still awaits approval: nothing to request yet
    store.add_tool_output(
        "chat", WIRE.call_id, state="output-error", error_text="Not now.", actor=BOB
    )
    assert continuation_requests(store, "chat") == []  # the client controls the flow (output-error)

    manual = store.open_stream("chat", continuation=True, actor=BOT)  # the app continues by hand...
    manual.close("aborted", "user pressed stop")  # ...and the user stops it at once

    assert continuation_requests(store, "chat") == [], (
        "the stopped stream's close queued a continuation"
    )
    assert store.pending_continuations() == []


# -- the queue ---------------------------------------------------------------------------


def test_pending_continuations_lists_requests_not_yet_started_oldest_first(
    store: ConversationStore,
) -> None:
    """Requests wait in the queue, oldest first, until a stream fulfils them."""
    paused_turn(store, "first", [DELETE])
    paused_turn(store, "second", [LOCATE])
    paused_turn(store, "third", [DELETE])
    store.respond_to_approval("first", approval_id=DELETE.approval_id, approved=True)
    store.add_tool_output("second", LOCATE.call_id, output={"city": "Lyon"})

    pending = store.pending_continuations()

    assert [(p.chat_id, p.message_id, p.tenant) for p in pending] == [
        ("first", "a1", "default"),
        ("second", "a1", "default"),
    ]
    assert pending[0].requested_at <= pending[1].requested_at
    assert DELETE.call_id in pending[0].cause and LOCATE.call_id in pending[1].cause
    assert all(p.claimed_by is None for p in pending)

    with store.open_stream("first", request_id=pending[0].request_id, actor=BOT) as stream:
        for chunk in continuation_chunks({DELETE.call_id: {"deleted": True}}):
            stream.append(chunk)

    assert [p.chat_id for p in store.pending_continuations()] == ["second"]


def test_claim_continuation_gives_each_request_to_one_worker_until_its_lease_expires(
    store: ConversationStore,
) -> None:
    """A claimed request is not handed out again until its lease expires."""
    assert store.claim_continuation("worker-1") is None
    paused_turn(store, "chat", [DELETE])
    store.respond_to_approval("chat", approval_id=DELETE.approval_id, approved=True)

    claimed = store.claim_continuation("worker-1", lease_seconds=1.0)

    assert claimed is not None
    assert (claimed.chat_id, claimed.message_id, claimed.claimed_by) == ("chat", "a1", "worker-1")
    assert store.claim_continuation("worker-2") is None
    (listed,) = store.pending_continuations()
    assert (listed.request_id, listed.claimed_by) == (claimed.request_id, "worker-1")
    time.sleep(1.1)
    retaken = store.claim_continuation("worker-2")
    assert retaken is not None
    assert (retaken.request_id, retaken.claimed_by) == (claimed.request_id, "worker-2")


def test_claim_continuation_by_chat_and_by_age(store: ConversationStore) -> None:
    """``chat_id`` takes only that chat's request; ``min_age_seconds`` leaves young requests alone."""
    paused_turn(store, "first", [DELETE])
    paused_turn(store, "second", [DELETE])
    store.respond_to_approval("first", approval_id=DELETE.approval_id, approved=True)
    store.respond_to_approval("second", approval_id=DELETE.approval_id, approved=True)

    assert store.claim_continuation("worker-1", min_age_seconds=60) is None
    claimed = store.claim_continuation("worker-1", chat_id="second")
    assert claimed is not None and claimed.chat_id == "second"
    assert store.claim_continuation("worker-1", chat_id="second") is None
    time.sleep(0.2)
    aged = store.claim_continuation("worker-2", min_age_seconds=0.1)
    assert aged is not None and aged.chat_id == "first"


def test_opening_the_continuation_stream_fulfils_the_request(store: ConversationStore) -> None:
    """``open_stream(request_id=...)`` dequeues it; the same id cannot open again."""
    paused_turn(store, "chat", [DELETE])
    store.respond_to_approval("chat", approval_id=DELETE.approval_id, approved=True)
    claimed = store.claim_continuation("worker-1")
    assert claimed is not None

    stream = store.open_stream("chat", request_id=claimed.request_id, actor=BOT)

    assert store.pending_continuations() == []
    assert store.claim_continuation("worker-2") is None
    opened = events_of(store, "chat", StreamOpened)[-1]
    assert (opened.request_id, opened.continuation, opened.message_id) == (
        claimed.request_id,
        True,
        "a1",
    )
    for chunk in continuation_chunks({DELETE.call_id: {"deleted": True}}):
        stream.append(chunk)
    stream.close()
    before = store.version("chat")
    with pytest.raises(ContinuationNotPendingError):
        store.open_stream("chat", request_id=claimed.request_id, actor=BOT)
    assert store.version("chat") == before


def test_a_request_overtaken_by_a_new_user_turn_never_continues_another_message(
    store: ConversationStore,
) -> None:
    """After the user moves on (u2, a2), the old request for a1 cannot open a stream on a2."""
    paused_turn(store, "chat", [DELETE])
    store.respond_to_approval("chat", approval_id=DELETE.approval_id, approved=True)
    store.append_message("chat", user("u2", "Never mind, list the files instead."), actor=ALICE)
    store.ingest(
        "chat",
        [
            {"type": "start", "messageId": "a2"},
            {"type": "start-step"},
            *text_chunks("txt-3", "report.csv, ", "notes.txt"),
            {"type": "finish-step"},
            {"type": "finish", "finishReason": "stop"},
        ],
        actor=BOT,
    )

    claimed = store.claim_continuation("worker-1")
    if claimed is None:
        return  # the overtaken request left the queue: fine
    assert claimed.message_id == "a1"
    try:
        stream = store.open_stream("chat", request_id=claimed.request_id, actor=BOT)
    except ContinuationNotPendingError:
        return  # refused: fine
    assert stream.message_id == claimed.message_id, (
        f"request for {claimed.message_id} opened a continuation of {stream.message_id}"
    )


# -- the continuation stream ---------------------------------------------------------------


def _approve_and_continue(
    store: ConversationStore, chat: str, chunks: list[dict[str, Any]]
) -> list[Verdict]:
    """Pause on DELETE, approve it, claim the continuation and stream ``chunks`` into it."""
    paused_turn(store, chat, [DELETE])
    store.respond_to_approval(
        chat, approval_id=DELETE.approval_id, approved=True, reason="ok", actor=ALICE
    )
    request = next(p for p in store.pending_continuations() if p.chat_id == chat)
    with store.open_stream(chat, request_id=request.request_id, actor=BOT) as stream:
        verdicts = [stream.append(chunk).verdict for chunk in chunks]
    return verdicts


EXPECTED_AFTER_CONTINUATION = {
    "id": "a1",
    "role": "assistant",
    "parts": [
        {"type": "step-start"},
        {"type": "text", "text": "Let me do that.", "state": "done"},
        {
            "type": "tool-deleteFile",
            "toolCallId": DELETE.call_id,
            "state": "output-available",
            "input": DELETE.input,
            "approval": {"id": DELETE.approval_id, "approved": True, "reason": "ok"},
            "output": {"deleted": True},
        },
        {"type": "step-start"},
        {"type": "text", "text": "Done.", "state": "done"},
    ],
}


def test_the_continuation_lands_the_approved_output_on_the_earlier_steps_part(
    store: ConversationStore,
) -> None:
    """The continuation's output fills the earlier step's part of the same message."""
    verdicts = _approve_and_continue(
        store, "chat", continuation_chunks({DELETE.call_id: {"deleted": True}})
    )

    assert set(verdicts) == {Verdict.APPLIED}
    messages = store.messages("chat")
    assert [(m["id"], m["role"]) for m in messages] == [("u1", "user"), ("a1", "assistant")]
    assert as_json(messages[-1]) == as_json(EXPECTED_AFTER_CONTINUATION)
    assert store.status("chat").status == "idle"


def test_the_models_start_message_id_is_ignored_on_a_continuation(store: ConversationStore) -> None:
    """A continuation's ``start.messageId`` neither renames the message nor adds a second one."""
    chunks = continuation_chunks(
        {DELETE.call_id: {"deleted": True}}, start_id="msg_from_model_7f3a"
    )
    _approve_and_continue(store, "chat", chunks)

    assert [m["id"] for m in store.messages("chat")] == ["u1", "a1"]
    assert events_of(store, "chat", StreamOpened)[-1].message_id == "a1"


def test_a_provider_replay_of_the_earlier_call_changes_nothing(store: ConversationStore) -> None:
    """A replayed call and a second output are recorded but change nothing."""
    replay = tool_input_chunks(DELETE)
    chunks = [
        {"type": "start", "messageId": "msg_from_model"},
        *replay,  # the OpenAI Responses API re-sends the call before its output
        {
            "type": "tool-output-available",
            "toolCallId": DELETE.call_id,
            "output": {"deleted": True},
        },
        {"type": "start-step"},
        *replay,  # and again in the next step, with a different output
        {
            "type": "tool-output-available",
            "toolCallId": DELETE.call_id,
            "output": {"deleted": False},
        },
        *text_chunks("txt-2", "Done."),
        {"type": "finish-step"},
        {"type": "finish", "finishReason": "stop"},
    ]

    verdicts = _approve_and_continue(store, "chat", chunks)

    replayed = [i for i, v in enumerate(verdicts) if v is Verdict.REPLAY]
    assert replayed == [*range(1, 1 + len(replay)), *range(3 + len(replay), 4 + 2 * len(replay))]
    assert as_json(store.messages("chat")[-1]) == as_json(EXPECTED_AFTER_CONTINUATION)
    assert as_json(replay_from_scratch(store, "chat").state.messages) == as_json(
        store.messages("chat")
    )
    continuation_stream = events_of(store, "chat", StreamOpened)[-1].stream_id
    assert [c for _, c in stream_chunks(store, "chat", continuation_stream)] == chunks


def test_a_continuation_stream_without_request_id_fulfils_the_request_for_its_message(
    store: ConversationStore,
) -> None:
    """A continuation opened by hand (no request id) on the requested message empties the queue."""
    paused_turn(store, "c")
    result = store.respond_to_approval("c", tool_call_id=DELETE.call_id, approved=True, actor=ALICE)
    assert result.continuation_requested
    assert [r.chat_id for r in store.pending_continuations()] == ["c"]
    with store.open_stream("c", continuation=True, actor=BOT):
        pass
    assert store.pending_continuations() == []
    assert store.claim_continuation("worker-1") is None
