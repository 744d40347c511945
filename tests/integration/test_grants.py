"""Standing approval grants through the store: they approve exactly what they name, expire and are revoked as events."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from chatledger.adapters.grants import GrantNotFoundError
from chatledger.domain.errors import InvalidInputError
from chatledger.domain.grants import input_digest

USER = "user:alice"
_ids = itertools.count(1)


def ask(store: Any, chat_id: str, tool: str, input: Any) -> str:
    """A turn in ``chat_id`` that ends on ``tool(input)`` awaiting approval; its call id."""
    n = next(_ids)
    store.start_conversation(chat_id, actor=USER, exist_ok=True)
    store.append_message(
        chat_id,
        {"id": f"u{n}", "role": "user", "parts": [{"type": "text", "text": "go"}]},
        actor=USER,
    )
    call = f"call_{n}"
    store.ingest(
        chat_id,
        [
            {"type": "start"},
            {"type": "start-step"},
            {"type": "tool-input-start", "toolCallId": call, "toolName": tool},
            {"type": "tool-input-available", "toolCallId": call, "toolName": tool, "input": input},
            {"type": "tool-approval-request", "approvalId": f"appr_{n}", "toolCallId": call},
            {"type": "finish-step"},
            {"type": "finish", "finishReason": "tool-calls"},
        ],
        actor="agent:bot",
    )
    return call


def part(store: Any, chat_id: str, call: str) -> dict[str, Any]:
    return next(
        p for m in store.messages(chat_id) for p in m["parts"] if p.get("toolCallId") == call
    )


def approved_by_grant(store: Any, chat_id: str, call: str) -> bool:
    return part(store, chat_id, call)["state"] == "approval-responded"


def test_an_input_grant_approves_the_same_input_anywhere_and_nothing_else(store: Any) -> None:
    first = ask(store, "a", "delete_file", {"path": "/tmp/x", "recursive": True})
    grant = store.grants.approve("a", tool_call_id=first, actor=USER, reason="tmp is fine")
    assert grant.scope == "input" and grant.input is None  # only the digest is kept
    assert grant.input_digest == input_digest({"recursive": True, "path": "/tmp/x"})
    assert grant.given_in == "a"
    assert store.status("a").status == "ready-to-continue"  # the approval itself, as a person's

    same = ask(store, "b", "delete_file", {"recursive": True, "path": "/tmp/x"})  # key order aside
    other = ask(store, "b", "delete_file", {"path": "/tmp/y", "recursive": True})
    assert approved_by_grant(store, "b", same)
    assert not approved_by_grant(store, "b", other)
    assert store.status("b").status == "awaiting-approval"
    used = store.grants.get(grant.grant_id)
    assert used.uses == 1 and [(c, call) for c, call, _ in used.recent] == [("b", same)]

    # the audit names the grant: actor grant:<id>, the reason says who gave it and why
    answers = [e for e in store.history("b") if e.kind == "approval-responded"]
    assert [e.actor for e in answers] == [f"grant:{grant.grant_id}"]
    assert grant.grant_id in str(answers[0].details) and USER in str(answers[0].details)
    assert "tmp is fine" in str(answers[0].details)
    # the call another input asked for is still in the inbox, for a person
    assert [p.tool_call_id for p in store.pending_approvals()] == [other]


def test_grants_leave_the_conversations_log_as_it_was(backend: Any) -> None:
    """The ledger has a table of its own: the conversations verify, and a reopened store sees the grants."""
    store = backend.open()
    first = ask(store, "a", "search", {"q": "x"})
    grant = store.grants.approve("a", tool_call_id=first, actor=USER)
    assert approved_by_grant(store, "b", ask(store, "b", "search", {"q": "x"}))
    assert store.operations.verify().ok
    if backend.durable:  # a property
        again = backend.other_store(store)
        assert [g.grant_id for g in again.grants.list()] == [grant.grant_id]
        assert again.operations.verify().ok


def test_an_auto_approval_continues_the_turn_as_a_person_s_would(store: Any) -> None:
    first = ask(store, "a", "search", {"q": "x"})
    store.grants.approve("a", tool_call_id=first, actor=USER, scope="tool")
    later = ask(store, "c", "search", {"q": "something else"})  # a tool grant covers any input
    assert approved_by_grant(store, "c", later)
    status = store.status("c")
    assert status.status == "ready-to-continue" and status.continuation_request is not None
    assert [c.chat_id for c in store.pending_continuations()] == ["a", "c"]


def test_a_conversation_grant_covers_that_conversation_only(store: Any) -> None:
    first = ask(store, "a", "search", {"q": "x"})
    store.grants.approve("a", tool_call_id=first, actor=USER, scope="conversation")
    assert approved_by_grant(store, "a", ask(store, "a", "fetch", {"url": "u"}))
    assert not approved_by_grant(store, "b", ask(store, "b", "fetch", {"url": "u"}))


def test_a_grant_expires_by_the_store_s_clock_and_the_expiry_is_an_event(store: Any) -> None:
    now = datetime(2030, 1, 1, tzinfo=UTC)
    store.grants.clock = lambda: now
    first = ask(store, "a", "search", {"q": "x"})
    grant = store.grants.approve("a", tool_call_id=first, actor=USER, for_seconds=60)
    assert grant.expires_at == now + timedelta(seconds=60)
    assert approved_by_grant(store, "b", ask(store, "b", "search", {"q": "x"}))
    now += timedelta(seconds=60)
    assert not approved_by_grant(store, "b", ask(store, "b", "search", {"q": "x"}))
    assert store.grants.list() == []
    [ended] = store.grants.list(include_ended=True)
    assert ended.status(now) == "expired" and ended.expired_at == now
    events = [type(e).__name__ for e in store.grants._log.events.get(_ledger(store))]
    assert events == ["Started", "GrantIssued", "GrantUsed", "GrantExpired"]


def test_a_revoked_grant_covers_nothing_and_says_who_revoked_it(store: Any) -> None:
    first = ask(store, "a", "search", {"q": "x"})
    grant = store.grants.approve("a", tool_call_id=first, actor=USER)
    revoked = store.grants.revoke(grant.grant_id, actor="user:bob", reason="too broad")
    assert revoked.revoked_by == "user:bob" and revoked.revoke_reason == "too broad"
    assert not approved_by_grant(store, "b", ask(store, "b", "search", {"q": "x"}))
    with pytest.raises(GrantNotFoundError, match="chatledger grants"):
        store.grants.revoke("grant_nope", actor=USER)


def test_bad_grants_are_refused_with_what_to_fix(store: Any) -> None:
    first = ask(store, "a", "search", {"q": "x"})
    with pytest.raises(InvalidInputError, match="scope must be one of"):
        store.grants.approve("a", tool_call_id=first, actor=USER, scope="everything")
    with pytest.raises(InvalidInputError, match="positive number of seconds"):
        store.grants.approve("a", tool_call_id=first, actor=USER, for_seconds=0)
    assert store.status("a").status == "awaiting-approval"  # nothing recorded
    with pytest.raises(InvalidInputError, match="not awaiting approval"):
        store.grants.approve("a", tool_call_id="call_nope", actor=USER)
    with pytest.raises(InvalidInputError, match="must name its tool"):
        store.grants.give(scope="tool", actor=USER)


def _ledger(store: Any) -> Any:
    from chatledger.domain.grant_ledger import ledger_id

    return ledger_id(store.tenant)


@pytest.mark.timeout(300)
def test_through_the_store_an_input_grant_never_approves_another_input(backend: Any) -> None:
    """Property, on each backend: a later call is approved by the grant exactly when its input is the same."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from chatledger.domain.replay_diff import same_input
    from tests.integration.conftest import EXAMPLES

    values = st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=3),
        lambda inner: (
            st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=2), inner, max_size=2)
        ),
        max_leaves=5,
    )
    store = backend.open()
    counter = itertools.count()

    @settings(max_examples=EXAMPLES[backend.name] // 2, deadline=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture])  # fmt: skip
    @given(named=values, asked=values | st.just("same"))
    def check(named: Any, asked: Any) -> None:
        asked = named if asked == "same" else asked
        n = next(counter)
        first = ask(store, f"g{n}", "tool", {"v": named})
        grant = store.grants.approve(f"g{n}", tool_call_id=first, actor=USER)
        later = ask(store, f"h{n}", "tool", {"v": asked})
        assert approved_by_grant(store, f"h{n}", later) == same_input(named, asked)
        store.grants.revoke(grant.grant_id, actor=USER)

    check()


def test_a_grant_answers_a_call_a_responder_asks_through_the_turn_runner(store: Any) -> None:
    """The path serve and the worker take: the runner closes the stream, the grant approves, the turn continues."""
    import asyncio

    from chatledger.adapters.responders.scripted import ScriptedResponder
    from chatledger.adapters.store.turns.runner import TurnRunner

    def turn(call: str) -> list[dict[str, Any]]:
        return [
            {"type": "start"},
            {"type": "start-step"},
            {"type": "tool-input-start", "toolCallId": call, "toolName": "search"},
            {
                "type": "tool-input-available",
                "toolCallId": call,
                "toolName": "search",
                "input": {"q": "x"},
            },
            {"type": "tool-approval-request", "approvalId": f"ap-{call}", "toolCallId": call},
            {"type": "finish-step"},
            {"type": "finish", "finishReason": "tool-calls"},
        ]

    store.grants.give(scope="input", tool_name="search", input={"q": "x"}, actor=USER)
    runner = TurnRunner(ScriptedResponder([turn("r1")], actor="agent:bot"))
    store.start_conversation("run", actor=USER)
    opened = store.turns.open(
        "run", actor="agent:bot", trigger="submit-message",
        user_message={"id": "u", "role": "user", "parts": [{"type": "text", "text": "go"}]},
        user_actor=USER,
    )  # fmt: skip

    async def run() -> None:
        runner.run(opened)
        await asyncio.gather(*list(runner.tasks))

    asyncio.run(run())
    assert approved_by_grant(store, "run", "r1")
    assert store.status("run").status == "ready-to-continue"
