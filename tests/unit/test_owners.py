"""Who continues a conversation: its owner, the claim rule, the default of older conversations."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any
from uuid import uuid4

import pytest
from eventsourcing.persistence import JSONTranscoder, StoredEvent

from chatledger.adapters.frameworks.openai_agents_items import ITEM_METADATA_KEY
from chatledger.adapters.frameworks.openai_agents_runs import RUN_STATE_KEY
from chatledger.adapters.frameworks.pydantic_ai_mapping import METADATA_KEY
from chatledger.adapters.persistence.codec import PydanticMapper
from chatledger.domain.aggregate import Conversation
from chatledger.domain.continuation import status_of
from chatledger.domain.conversation import ConversationState
from chatledger.domain.errors import InvalidInputError
from chatledger.domain.owner_events import ContinuationRetired, OwnerSet
from chatledger.domain.owners import (
    ANY,
    FRAMEWORK_MARKS,
    NOBODY,
    OPENAI_AGENTS,
    PYDANTIC_AI,
    may_claim,
    owner_of,
)
from chatledger.domain.timeline import describe
from tests.unit.test_aggregate import LIMITS, answer_awaiting_approval, deny, user

NOW = datetime(2030, 1, 1, tzinfo=UTC)


def started(owner: str = ANY, *steps: Any) -> Conversation:
    """A conversation owned by ``owner``, rebuilt from the events of ``steps`` as the log does."""
    recorder = Conversation.start("acme", "chat", actor="user:alice", owner=owner)
    for step in steps:
        step(recorder)
    conversation: Any = None
    for event in recorder.collect_events():
        conversation = event.mutate(conversation)
    assert isinstance(conversation, Conversation)
    return conversation


def claim(conversation: Conversation, owner: str | None) -> bool:
    request = conversation.state.continuation
    assert request is not None
    return conversation.claim_continuation(
        request["requestId"], worker="w1", lease_seconds=10, now=NOW, owner=owner
    )


@pytest.mark.parametrize(
    ("owner", "claimer", "allowed"),
    [
        (ANY, None, True),
        (ANY, "responder:agent:bot", True),
        (OPENAI_AGENTS, None, False),
        (OPENAI_AGENTS, "responder:agent:bot", False),
        (OPENAI_AGENTS, OPENAI_AGENTS, True),
        ("responder:agent:bot", "responder:agent:other", False),
        ("responder:agent:bot", "responder:agent:bot", True),
        (NOBODY, None, False),
        (NOBODY, NOBODY, False),
    ],
)
def test_only_a_worker_of_the_owner_may_claim(
    owner: str, claimer: str | None, allowed: bool
) -> None:
    assert may_claim(owner, claimer) is allowed


def test_a_request_is_addressed_to_the_owner_and_refused_to_a_stranger() -> None:
    conversation = started(OPENAI_AGENTS, user("u1"), answer_awaiting_approval(), deny())
    assert conversation.state.continuation is not None
    assert conversation.state.continuation["owner"] == OPENAI_AGENTS
    assert status_of(conversation.state).owner == OPENAI_AGENTS
    assert not claim(conversation, None)
    assert not claim(conversation, "responder:agent:ops-assistant")
    assert list(conversation.collect_events()) == []
    assert claim(conversation, OPENAI_AGENTS)


def test_handing_over_is_audited_and_readdresses_the_pending_request() -> None:
    conversation = started(OPENAI_AGENTS, user("u1"), answer_awaiting_approval(), deny())
    assert claim(conversation, OPENAI_AGENTS)  # leased to the old owner's worker ...
    conversation.collect_events()
    assert conversation.set_owner("responder:agent:bot", actor="user:ann", reason="agent retired")
    (event,) = conversation.collect_events()
    assert isinstance(event, OwnerSet)
    assert (event.owner, event.previous, event.actor) == (
        "responder:agent:bot",
        OPENAI_AGENTS,
        "user:ann",
    )
    entry = describe(event, started(OPENAI_AGENTS).state)
    assert entry.kind == "owner-set" and "agent retired" in entry.summary
    assert conversation.state.continuation is not None
    assert conversation.state.continuation["owner"] == "responder:agent:bot"
    assert "claimedBy" not in conversation.state.continuation  # ... which the hand-over drops
    assert claim(conversation, "responder:agent:bot")
    assert not conversation.set_owner("responder:agent:bot", actor="user:ann", reason=None)


@pytest.mark.parametrize("bad", ["", "  ", None, 7, "a\x00b"])
def test_a_bad_owner_is_refused_with_what_to_give(bad: Any) -> None:
    with pytest.raises(InvalidInputError, match="owner"):
        Conversation.start("acme", "chat", actor="user:alice", owner=bad)
    with pytest.raises(InvalidInputError, match="owner"):
        started().set_owner(bad, actor="user:ann", reason=None)


def test_retiring_takes_the_request_off_the_queue_once() -> None:
    conversation = started(PYDANTIC_AI, user("u1"), answer_awaiting_approval(), deny())
    request = conversation.state.continuation
    assert request is not None
    assert (
        conversation.retire_continuation(actor="agent:x", reason="resumed") == request["requestId"]
    )
    (event,) = conversation.collect_events()
    assert isinstance(event, ContinuationRetired)
    assert conversation.state.continuation is None
    assert status_of(conversation.state).continuation_request is None
    assert conversation.retire_continuation(actor="agent:x", reason="again") is None
    assert list(conversation.collect_events()) == []


def test_the_plug_ins_keep_their_bookkeeping_under_the_keys_the_default_reads() -> None:
    assert FRAMEWORK_MARKS[ITEM_METADATA_KEY] == OPENAI_AGENTS
    assert FRAMEWORK_MARKS[RUN_STATE_KEY] == OPENAI_AGENTS
    assert FRAMEWORK_MARKS[METADATA_KEY] == PYDANTIC_AI


def _message(metadata: dict[str, Any] | None) -> dict[str, Any]:
    message: dict[str, Any] = {"id": "m", "role": "user", "parts": [{"type": "text", "text": "x"}]}
    if metadata is not None:
        message["metadata"] = metadata
    return message


@pytest.mark.parametrize(
    ("metadata", "expected"),
    [
        (None, ANY),
        ({"title": "x"}, ANY),
        ({ITEM_METADATA_KEY: {"role": "user"}}, OPENAI_AGENTS),
        ({METADATA_KEY: {"record": {}}}, PYDANTIC_AI),
    ],
)
def test_an_older_conversation_belongs_to_the_framework_whose_bookkeeping_it_holds(
    metadata: dict[str, Any] | None, expected: str
) -> None:
    state = ConversationState("acme", "chat", [_message(metadata)])
    assert state.owner is None
    assert owner_of(state) == expected
    state.owner = "none"
    assert owner_of(state) == "none"  # a recorded owner wins


def test_a_conversation_stored_before_owners_is_upcast_and_defaulted() -> None:
    """A version 2 ``ConversationStarted`` has no owner; its request goes to the default."""
    mapper = PydanticMapper(JSONTranscoder())
    originator = uuid4()
    stored = StoredEvent(
        originator,
        1,
        "chatledger.domain.events:ConversationStarted",
        json.dumps(
            {
                "timestamp": "2026-01-01T00:00:00Z",
                "actor": "agent:openai-agents",
                "originator_topic": "chatledger.domain.aggregate:Conversation",
                "tenant": "t",
                "chat_id": "c",
                "ai_sdk": 6,
                "class_version": 2,
            }
        ).encode(),
    )
    event = mapper.to_domain_event(stored)
    assert event.owner is None  # type: ignore[attr-defined]
    conversation = event.mutate(None)
    assert conversation.state.owner is None and owner_of(conversation.state) == ANY
    conversation.append_message(
        {**_message({ITEM_METADATA_KEY: {"role": "user"}}), "id": "u1"},
        actor="agent:openai-agents",
        limits=LIMITS,
    )
    assert owner_of(conversation.state) == OPENAI_AGENTS


def test_a_snapshot_keeps_the_owner_and_an_older_one_addresses_its_request() -> None:
    conversation = started(OPENAI_AGENTS, user("u1"), answer_awaiting_approval(), deny())
    data = conversation.state.to_json()
    assert data["owner"] == OPENAI_AGENTS
    assert ConversationState.from_json(data).owner == OPENAI_AGENTS
    older = {key: value for key, value in data.items() if key != "owner"}
    older["continuation"] = {k: v for k, v in data["continuation"].items() if k != "owner"}
    older["messages"][0] = {**older["messages"][0], "metadata": {RUN_STATE_KEY: {}}}
    state = ConversationState.from_json(older)
    assert state.owner is None
    assert state.continuation is not None and state.continuation["owner"] == OPENAI_AGENTS


def test_a_request_is_overdue_past_the_limit_unless_a_live_claim_holds_it() -> None:
    from datetime import UTC, datetime, timedelta

    from chatledger.domain.owners import is_overdue

    at = datetime(2026, 1, 1, tzinfo=UTC)
    later = at + timedelta(seconds=301)
    assert not is_overdue(at, at + timedelta(seconds=300), 300)
    assert is_overdue(at, later, 300)
    assert not is_overdue(at, later, 300, lease_until=later + timedelta(seconds=1))
    assert is_overdue(at, later, 300, lease_until=later)  # the claim's lease ran out
