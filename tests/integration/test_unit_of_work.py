"""The unit of work: load, decide, save, and decide again after losing a version clash."""

from __future__ import annotations

from typing import Any

from chatledger.adapters.store.unit_of_work import UnitOfWork
from chatledger.domain.aggregate import Conversation
from chatledger.domain.limits import Limits
from tests.integration.conftest import Backend


def _user(message_id: str) -> dict[str, Any]:
    return {"id": message_id, "role": "user", "parts": [{"type": "text", "text": message_id}]}


def test_a_write_outlasts_a_long_run_of_version_clashes(durable_backend: Backend) -> None:
    """Another writer gets in first 40 times in a row (more than a fixed retry count allowed):
    the write still lands, decided once more against the newest state, and nothing is lost."""
    store = durable_backend.open()
    other = durable_backend.other_store(store)
    store.start_conversation("chat")
    uow = UnitOfWork(store.log)
    clashes = 0

    def decide(conversation: Conversation) -> int:
        nonlocal clashes
        if clashes < 40:  # forced interleaving: the other store commits between load and save
            clashes += 1
            other.append_message("chat", _user(f"other-{clashes}"))
        conversation.append_message(_user("mine"), actor="user:alice", limits=Limits())
        return len(conversation.state.messages)

    _, events, decided = uow.act(store.tenant, "chat", decide)

    assert clashes == 40 and len(events) == 1
    ids = [m["id"] for m in store.messages("chat")]
    assert ids == [*(f"other-{n}" for n in range(1, 41)), "mine"]
    assert decided == 41
