"""Paused turns (docs/behaviour.md §4.4, §4.5, §5): status, durable pauses, the inbox, regenerate, edit.

Runs on memory://, a SQLite file and PostgreSQL; the restart tests on the two
durable backends only.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime

import pytest

from chatledger import ConversationStore, WaitingCall
from chatledger.domain.events import ChunksReceived, ContinuationRequested, MessagesCut
from tests.integration.conftest import Backend
from tests.integration.hitl_support import (
    ALICE,
    BOT,
    DELETE,
    LOCATE,
    WEATHER,
    WIRE,
    Call,
    continuation_chunks,
    continuation_requests,
    events_of,
    imported_assistant,
    new_chat,
    part,
    paused_turn,
    tool_part,
    tool_step_chunks,
    user,
)
from tests.support.ledger import as_json

# -- status ----------------------------------------------------------------------------


def test_status_follows_a_paused_turn_from_idle_to_idle(store: ConversationStore) -> None:
    """idle, streaming, awaiting-approval, ready-to-continue, streaming, idle."""
    new_chat(store, "chat")
    assert store.status("chat").status == "idle"
    assert store.status("chat").last_outcome is None

    with store.open_stream("chat", actor=BOT) as stream:
        stream.append({"type": "start", "messageId": "a1"})
        assert store.status("chat").status == "streaming"
        for chunk in tool_step_chunks("a1", [DELETE, WIRE])[1:]:
            stream.append(chunk)

    paused = store.status("chat")
    assert (paused.status, paused.last_outcome, paused.continuation_request) == (
        "awaiting-approval",
        "finished",
        None,
    )
    assert paused.waiting_for == [
        WaitingCall(
            DELETE.call_id, "deleteFile", "approval-requested", DELETE.input, DELETE.approval_id
        ),
        WaitingCall(
            WIRE.call_id, "sendPayment", "approval-requested", WIRE.input, WIRE.approval_id
        ),
    ]

    store.respond_to_approval("chat", approval_id=DELETE.approval_id, approved=True)
    assert [w.tool_call_id for w in store.status("chat").waiting_for] == [WIRE.call_id]
    store.respond_to_approval("chat", approval_id=WIRE.approval_id, approved=False)
    (request,) = store.pending_continuations()
    ready = store.status("chat")
    assert (ready.status, ready.continuation_request, ready.waiting_for) == (
        "ready-to-continue",
        request.request_id,
        [],
    )

    with store.open_stream("chat", request_id=request.request_id, actor=BOT) as stream:
        assert store.status("chat").status == "streaming"
        for chunk in continuation_chunks({DELETE.call_id: {"deleted": True}}):
            stream.append(chunk)
    done = store.status("chat")
    assert (done.status, done.last_outcome, done.waiting_for, done.continuation_request) == (
        "idle",
        "finished",
        [],
        None,
    )


def test_status_awaits_the_output_of_a_client_side_tool(store: ConversationStore) -> None:
    """A call with complete input and no approval waits for the client: awaiting-tool-output."""
    paused_turn(store, "chat", [WEATHER, LOCATE])

    status = store.status("chat")

    assert status.status == "awaiting-tool-output"
    assert status.waiting_for == [
        WaitingCall(LOCATE.call_id, "getLocation", "input-available", LOCATE.input, None)
    ]


def test_status_reports_the_last_streams_outcome_and_reason(store: ConversationStore) -> None:
    """An aborted reply shows as the last outcome, with its reason."""
    new_chat(store, "chat")
    stream = store.open_stream("chat", actor=BOT)
    for chunk in tool_step_chunks("a1", [DELETE])[:5]:
        stream.append(chunk)
    stream.close("aborted", "user pressed stop")

    status = store.status("chat")

    assert (status.status, status.last_outcome, status.last_reason) == (
        "idle",
        "aborted",
        "user pressed stop",
    )


def test_status_stays_ready_to_continue_while_an_approved_call_has_not_run(
    store: ConversationStore,
) -> None:
    """An approved call not yet run (its stream died) is ready-to-continue, not idle."""
    paused_turn(store, "chat", [DELETE])
    store.respond_to_approval("chat", approval_id=DELETE.approval_id, approved=True)
    claimed = store.claim_continuation("worker-1")
    assert claimed is not None
    stream = store.open_stream("chat", request_id=claimed.request_id, actor=BOT)
    store.close_stream("chat", stream.stream_id, "interrupted", reason="worker crashed")

    status = store.status("chat")

    assert part(store, "chat", DELETE.call_id)["state"] == "approval-responded"
    assert (status.last_outcome, status.last_reason) == ("interrupted", "worker crashed")
    assert status.status == "ready-to-continue", (
        f"an approved call never ran, yet the status is {status.status!r}"
    )


# -- durable pauses --------------------------------------------------------------------------


def test_a_paused_turn_survives_a_restart_and_resumes_there(durable_backend: Backend) -> None:
    """A new store on the same database sees the pause and resumes it."""
    first = durable_backend.open()
    paused_turn(first, "chat", [DELETE])
    first.close()

    second = durable_backend.open()
    assert second.status("chat").status == "awaiting-approval"
    (pending,) = second.pending_approvals()
    assert (pending.chat_id, pending.tool_call_id, pending.approval_id) == (
        "chat",
        DELETE.call_id,
        DELETE.approval_id,
    )

    result = second.respond_to_approval(
        "chat", approval_id=pending.approval_id, approved=True, actor=ALICE
    )

    assert result.continuation_requested
    third = durable_backend.open()
    assert [(p.chat_id, p.message_id) for p in third.pending_continuations()] == [("chat", "a1")]
    assert third.status("chat").status == "ready-to-continue"


def test_a_pause_is_durable_once_the_approval_request_is_stored(durable_backend: Backend) -> None:
    """A writer dying right after the approval request leaves a resumable pause."""
    crashed = durable_backend.open()
    new_chat(crashed, "chat")
    stream = crashed.open_stream("chat", actor=BOT)
    turn = tool_step_chunks("a1", [DELETE])
    for chunk in turn[: turn.index({"type": "finish-step"})]:  # ends with the tool-approval-request
        stream.append(chunk)
    crashed.close()  # no close of the stream: the process is gone

    fresh = durable_backend.open()
    assert [p.tool_call_id for p in fresh.pending_approvals()] == [DELETE.call_id]
    fresh.close_stream("chat", stream.stream_id, "interrupted", reason="worker died")
    assert fresh.status("chat").status == "awaiting-approval"

    result = fresh.respond_to_approval("chat", approval_id=DELETE.approval_id, approved=True)

    assert result.continuation_requested
    assert len(continuation_requests(fresh, "chat")) == 1


# -- answering what no longer awaits approval --------------------------------------------------


def _no_longer_awaiting(store: ConversationStore, chat: str, how: str) -> Call:
    if how == "ran without approval":
        paused_turn(store, chat, [WEATHER])
        return WEATHER
    paused_turn(store, chat, [DELETE])
    if how == "run by the client":
        store.add_tool_output(chat, DELETE.call_id, output={"deleted": True})
    else:  # approved, then run by the continuation
        store.respond_to_approval(chat, approval_id=DELETE.approval_id, approved=True)
        (request,) = store.pending_continuations()
        with store.open_stream(chat, request_id=request.request_id) as stream:
            for chunk in continuation_chunks({DELETE.call_id: {"deleted": True}}):
                stream.append(chunk)
    return DELETE


@pytest.mark.parametrize(
    ("how", "by"),
    [
        ("ran without approval", "tool_call_id"),
        ("run by the client", "tool_call_id"),
        ("run by the client", "approval_id"),
        ("approved and run", "tool_call_id"),
        ("approved and run", "approval_id"),
    ],
)
def test_answering_a_call_no_longer_awaiting_approval_changes_nothing(
    store: ConversationStore, how: str, by: str
) -> None:
    """An approval for a call that already ran records, changes and requests nothing."""
    call = _no_longer_awaiting(store, "chat", how)
    before, shown = store.version("chat"), as_json(store.messages("chat"))
    key = (
        {"approval_id": call.approval_id} if by == "approval_id" else {"tool_call_id": call.call_id}
    )

    result = store.respond_to_approval("chat", **key, approved=True, actor=ALICE)

    assert (result.changed, result.continuation_requested) == (False, False)
    assert result.state == "output-available"
    assert store.version("chat") == before
    assert as_json(store.messages("chat")) == shown


# -- the approvals inbox (docs/behaviour.md §5) -------------------------------------------------------------


def test_pending_approvals_lists_every_awaited_call_of_the_tenant_oldest_first(
    store: ConversationStore,
) -> None:
    """All awaited calls of a tenant, oldest first, with tool, input and time."""
    before = datetime.now(UTC)
    new_chat(store, "ops", tenant="acme")
    with store.open_stream("ops", tenant="acme", actor=BOT) as stream:
        for chunk in tool_step_chunks("a1", [DELETE, WIRE]):
            stream.append(chunk)
            if chunk["type"] == "tool-approval-request":
                time.sleep(0.02)  # the two requests get clearly different times
    new_chat(store, "billing", tenant="acme")
    store.append_message(
        "billing",
        imported_assistant(
            "imp-1", tool_part(LOCATE, "approval-requested", approval={"id": "appr_loc"})
        ),
        tenant="acme",
        actor="system:import",
    )
    paused_turn(store, "ops", [DELETE], tenant="globex")  # same chat id, other tenant
    paused_turn(store, "quiet", [WEATHER], tenant="acme")  # nothing awaits approval
    after = datetime.now(UTC)

    pending = store.pending_approvals(tenant="acme")

    assert [
        (p.tenant, p.chat_id, p.message_id, p.tool_call_id, p.tool_name, p.approval_id)
        for p in pending
    ] == [
        ("acme", "ops", "a1", DELETE.call_id, "deleteFile", DELETE.approval_id),
        ("acme", "ops", "a1", WIRE.call_id, "sendPayment", WIRE.approval_id),
        ("acme", "billing", "imp-1", LOCATE.call_id, "getLocation", "appr_loc"),
    ]
    assert [p.input for p in pending] == [DELETE.input, WIRE.input, LOCATE.input]
    times = [p.requested_at for p in pending]
    assert times == sorted(times) and len(set(times)) == 3
    assert all(before <= t <= after for t in times), (before, times, after)
    assert all(p.age_seconds >= 0 for p in pending)
    assert [(p.tenant, p.chat_id) for p in store.pending_approvals(tenant="globex")] == [
        ("globex", "ops")
    ]

    store.respond_to_approval("ops", approval_id=DELETE.approval_id, approved=True, tenant="acme")
    assert [p.tool_call_id for p in store.pending_approvals(tenant="acme")] == [
        WIRE.call_id,
        LOCATE.call_id,
    ]


# -- regenerate and edit (docs/behaviour.md §4.5) ------------------------------------------------------------


def _two_turns(store: ConversationStore) -> None:
    """u1 -> a1 (tool call run) ; u2 -> a2 (plain text)."""
    paused_turn(store, "chat", [WEATHER])
    store.append_message("chat", user("u2", "And tomorrow?"), actor=ALICE)
    store.ingest(
        "chat",
        [
            {"type": "start", "messageId": "a2"},
            {"type": "start-step"},
            {"type": "text-start", "id": "t"},
            {"type": "text-delta", "id": "t", "delta": "Rain."},
            {"type": "text-end", "id": "t"},
            {"type": "finish-step"},
            {"type": "finish", "finishReason": "stop"},
        ],
        actor=BOT,
    )


@pytest.mark.parametrize(
    ("target", "cut_ids"),
    [(None, ["a2"]), ("a1", ["a1", "u2", "a2"]), ("u1", ["a1", "u2", "a2"])],
)
def test_regenerate_cuts_later_messages_from_the_view_but_not_from_the_log(
    store: ConversationStore, target: str | None, cut_ids: list[str]
) -> None:
    """Cut messages leave the view, stay in the log and show at an earlier version."""
    _two_turns(store)
    full, version, chunk_events = (
        store.messages("chat"),
        store.version("chat"),
        events_of(store, "chat", ChunksReceived),
    )

    cut = store.regenerate("chat", target, reason="try again", actor=ALICE)

    assert cut == len(cut_ids)
    assert [m["id"] for m in store.messages("chat")] == [
        m["id"] for m in full if m["id"] not in cut_ids
    ]
    assert as_json(store.messages("chat", at_version=version)) == as_json(full)
    assert events_of(store, "chat", ChunksReceived) == chunk_events
    (event,) = events_of(store, "chat", MessagesCut)
    assert (event.from_message_id, event.count, event.trigger) == (
        cut_ids[0],
        len(cut_ids),
        "regenerate-message",
    )


def test_edit_replaces_a_user_message_and_cuts_every_later_message(
    store: ConversationStore,
) -> None:
    """Editing u2 cuts u2 and a2 from the view and appends the new message."""
    _two_turns(store)
    full, version = store.messages("chat"), store.version("chat")

    cut = store.edit("chat", "u2", user("u2-edited", "And the day after?"), actor=ALICE)

    assert cut == 2
    assert [m["id"] for m in store.messages("chat")] == ["u1", "a1", "u2-edited"]
    assert as_json(store.messages("chat", at_version=version)) == as_json(full)
    (event,) = events_of(store, "chat", MessagesCut)
    assert (event.from_message_id, event.count, event.trigger, event.actor) == (
        "u2",
        2,
        "edit",
        ALICE,
    )


def test_regenerating_a_paused_turn_drops_its_approvals_and_continuation(
    store: ConversationStore,
) -> None:
    """A cut turn no longer awaits anything: not in the inbox, not in the queue, status idle."""
    paused_turn(store, "waiting", [DELETE, WIRE])
    paused_turn(store, "queued", [DELETE])
    store.respond_to_approval("queued", approval_id=DELETE.approval_id, approved=True)
    assert len(store.pending_approvals()) == 2 and len(store.pending_continuations()) == 1

    store.regenerate("waiting")
    store.regenerate("queued")

    assert store.pending_approvals() == []
    assert store.pending_continuations() == []
    assert store.status("waiting").status == store.status("queued").status == "idle"
    assert len(events_of(store, "queued", ContinuationRequested)) == 1  # still in the log
    assert [m["id"] for m in store.messages("waiting")] == ["u1"]


def test_a_call_left_behind_by_a_new_turn_awaits_nothing(store: ConversationStore) -> None:
    """The user moves on without answering: the old call leaves the inbox once a new answer exists.

    Until the new answer starts, the turn still waits on it; afterwards the
    converters give it an "interrupted" result, and status and inbox agree
    that nothing waits.
    """
    paused_turn(store, "chat", [DELETE], ai_sdk=6)  # v7: the user message alone supersedes it
    store.append_message("chat", user("u2"), actor=ALICE)
    assert store.status("chat").status == "awaiting-approval"
    assert [p.tool_call_id for p in store.pending_approvals()] == [DELETE.call_id]

    store.ingest(
        "chat",
        [
            {"type": "start", "messageId": "a2"},
            {"type": "text-start", "id": "t"},
            {"type": "text-delta", "id": "t", "delta": "Something else, then."},
            {"type": "text-end", "id": "t"},
            {"type": "finish"},
        ],
        actor=BOT,
    )

    assert store.status("chat").status == "idle"
    assert store.pending_approvals() == []
    assert part(store, "chat", DELETE.call_id)["state"] == "approval-requested"  # kept as it was
    converted = store.model_messages("chat", "anthropic")["messages"]
    results = [b for m in converted for b in m["content"] if b.get("type") == "tool_result"]
    assert [r["tool_use_id"] for r in results] == [DELETE.call_id]
    assert store.operations.verify("chat").ok
