"""``ChatLedgerSession`` keeps the ``Session`` contract when several objects share a session.

Two session objects (two workers) on one conversation: ``pop_item`` removes
exactly the last item as the store holds it, never one another worker
appended meanwhile; ``add_items`` is all or nothing; items come back exactly
as added (a second output for one call, outputs with extra keys);
``session_settings`` given as a dict works as for the SDK's own sessions; and
a cancelled write reports its cancellation only once the write has settled.
Every test runs on memory, SQLite and PostgreSQL, with the real ``agents``.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from agents import Agent, Runner, SessionSettings, set_tracing_disabled

from chatledger.adapters.frameworks.openai_agents import ChatLedgerSession
from chatledger.domain.errors import InvalidInputError
from tests.integration.conftest import Backend
from tests.integration.test_openai_agents_session import (
    ITEMS,
    FakeModel,
    assistant,
    function_call,
    output,
    say,
    user,
)

set_tracing_disabled(True)

ROUNDS = 6


def run(coroutine: Any) -> Any:
    """Run a coroutine to completion (the tests are synchronous)."""
    return asyncio.run(coroutine)


def _pop_while_adding(
    popper: ChatLedgerSession, adder: ChatLedgerSession, extra: dict[str, Any]
) -> Any:
    """One worker pops while another appends ``extra``, both released at once; what was popped."""
    start = threading.Barrier(2)
    popped: list[Any] = []

    def pop() -> None:
        start.wait(timeout=30)
        popped.append(run(popper.pop_item()))

    def add() -> None:
        start.wait(timeout=30)
        run(adder.add_items([extra]))

    threads = [threading.Thread(target=pop), threading.Thread(target=add)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert len(popped) == 1
    return popped[0]


def test_a_pop_never_removes_an_item_another_worker_appended(backend: Backend) -> None:
    store = backend.open()
    popper = ChatLedgerSession(store, "race")
    adder = ChatLedgerSession(backend.other_store(store), "race")
    run(popper.add_items(ITEMS))
    expected = list(ITEMS)
    for round_ in range(ROUNDS):
        extra = user(f"from the other worker {round_}")
        popped = _pop_while_adding(popper, adder, extra)
        if popped != extra:  # else the append came first and the pop took it
            assert popped == expected[-1], popped
            expected = [*expected[:-1], extra]
        assert run(ChatLedgerSession(store, "race").get_items()) == expected


def test_a_pop_takes_the_last_item_as_the_store_holds_it(backend: Backend) -> None:
    """Each object pops what is last now, not what it saw last."""
    store = backend.open()
    first = ChatLedgerSession(store, "p")
    second = ChatLedgerSession(backend.other_store(store), "p")
    run(first.add_items(ITEMS[:7]))
    assert run(first.get_items()) == ITEMS[:7]
    run(second.add_items([assistant("late")]))
    assert run(first.pop_item()) == assistant("late")
    assert run(second.pop_item()) == output("c_b", "B")
    assert run(first.get_items()) == ITEMS[:6]


def test_a_batch_that_fails_part_way_leaves_nothing(backend: Backend) -> None:
    store = backend.open()
    session = ChatLedgerSession(store, "atomic")
    run(session.add_items(ITEMS[:2]))
    version = store.version("atomic")
    with pytest.raises(InvalidInputError):
        run(session.add_items([ITEMS[2], ITEMS[3], "not an item"]))
    too_big = {
        "type": "message",
        "role": "user",
        "content": "x" * (store.limits.max_message_bytes + 1),
    }
    with pytest.raises(InvalidInputError):
        run(session.add_items([ITEMS[2], ITEMS[3], too_big]))
    assert store.version("atomic") == version
    assert run(session.get_items()) == ITEMS[:2]


def test_a_second_output_for_one_call_keeps_both(backend: Backend) -> None:
    session = ChatLedgerSession(backend.open(), "twice")
    items = [
        user("go"),
        function_call("a", {"x": 1}, "c_1"),
        output("c_1", "first"),
        output("c_1", "second"),
        assistant("done"),
    ]
    run(session.add_items(items))
    assert run(session.get_items()) == items
    assert run(session.pop_item()) == items[-1]
    assert run(session.pop_item()) == items[-2]
    assert run(session.get_items()) == items[:3]


def test_an_output_with_extra_keys_then_a_plain_one_keeps_both(backend: Backend) -> None:
    session = ChatLedgerSession(backend.open(), "extra")
    fancy = {**output("c_1", "with an id"), "id": "fco_1", "status": "completed"}
    items = [user("go"), function_call("a", {"x": 1}, "c_1"), fancy, output("c_1", "plain")]
    run(session.add_items(items))
    assert run(session.get_items()) == items
    one_by_one = ChatLedgerSession(backend.open(), "one-by-one")
    for item in items:
        run(one_by_one.add_items([item]))
    assert run(one_by_one.get_items()) == items


def test_session_settings_as_a_dict_are_coerced_and_validated(backend: Backend) -> None:
    store = backend.open()
    session = ChatLedgerSession(store, "limited", session_settings={"limit": 2})
    assert isinstance(session.session_settings, SessionSettings)
    run(session.add_items(ITEMS))
    assert run(session.get_items()) == ITEMS[-2:]
    model = FakeModel([say("Hello again.")])
    result = run(Runner.run(Agent(name="a", model=model), "hi", session=session))
    assert result.final_output == "Hello again."
    sent = model.inputs[0]
    # The limited history (the SDK drops the output whose call fell out of the window).
    assert ITEMS[-1] in sent and ITEMS[1] not in sent
    with pytest.raises(Exception, match="limit"):
        ChatLedgerSession(store, "bad", session_settings={"limit": "many"})


@pytest.mark.parametrize("operation", ["add_items", "pop_item", "clear_session"])
def test_a_cancelled_write_reports_cancellation_once_it_has_settled(
    backend: Backend, operation: str
) -> None:
    store = backend.open()
    session = ChatLedgerSession(store, "cancel")
    run(session.add_items(ITEMS[:2]))
    expected = {
        "add_items": [*ITEMS[:2], ITEMS[2]],
        "pop_item": ITEMS[:1],
        "clear_session": [],
    }[operation]

    async def scenario() -> list[Any]:
        session._lock.acquire()  # the worker thread waits here, mid-call
        released = False
        try:
            call = getattr(session, operation)
            task = asyncio.ensure_future(call([ITEMS[2]]) if operation == "add_items" else call())
            for _ in range(5):
                await asyncio.sleep(0)
            task.cancel()
            for _ in range(5):
                await asyncio.sleep(0)
            assert not task.done(), "cancellation was reported while the write was still running"
            session._lock.release()
            released = True
            with pytest.raises(asyncio.CancelledError):
                await task
            return session.items()  # read at once: the write has settled
        finally:
            if not released:
                session._lock.release()

    assert run(scenario()) == expected
