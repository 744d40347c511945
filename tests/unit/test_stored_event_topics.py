"""Event classes are stored topics: each loads from ``chatledger.domain.events`` by name, old logs fold."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any
from uuid import uuid4

import pytest
from eventsourcing.persistence import JSONTranscoder, StoredEvent
from eventsourcing.utils import get_topic, resolve_topic

from chatledger.adapters.persistence.codec import PydanticMapper
from chatledger.domain import events
from chatledger.domain.conversation import Verdict

_E = "chatledger.domain.events"
_AT = "2026-01-01T00:00:{:02d}.500000Z"

# A log as the store writes it (topic, JSON state): one turn whose tool call is approved,
# then continued by a worker's stream; the batch holds a refused chunk and aged chunks.
_LOG: list[tuple[str, dict[str, Any]]] = [
    (
        "ConversationStarted",
        {
            "originator_topic": "chatledger.domain.aggregate:Conversation",
            "tenant": "t",
            "chat_id": "c",
            "class_version": 2,
        },
    ),
    (
        "MessageAppended",
        {"message": {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "hi"}]}},
    ),
    (
        "StreamOpened",
        {"stream_id": "s1", "message_id": "a1", "continuation": False, "trigger": "submit-message"},
    ),
    (
        "ChunksReceived",
        {
            "stream_id": "s1",
            "first_seq": 0,
            "ages_ms": [900, 800, 700, 250, 200, 100, 0],
            "refusals": [[4, "unknown chunk type 'nonsense'"]],
            "chunks": [
                {"type": "start", "messageId": "a1"},
                {"type": "start-step"},
                {
                    "type": "tool-input-available",
                    "toolCallId": "call_1",
                    "toolName": "weather",
                    "input": {"city": "Oslo"},
                    "dynamic": True,
                },
                {"type": "tool-approval-request", "approvalId": "ap_1", "toolCallId": "call_1"},
                {"type": "nonsense"},
                {"type": "finish-step"},
                {"type": "finish"},
            ],
        },
    ),
    ("StreamClosed", {"stream_id": "s1", "outcome": "finished"}),
    (
        "ToolApprovalResponded",
        {"tool_call_id": "call_1", "approval_id": "ap_1", "approved": True},
    ),
    (
        "ContinuationRequested",
        {"request_id": "r1", "message_id": "a1", "cause": "approval of call_1"},
    ),
    ("ContinuationClaimed", {"request_id": "r1", "worker": "w1", "lease_seconds": 30.0}),
    (
        "StreamOpened",
        {
            "stream_id": "s2",
            "message_id": "a1",
            "continuation": True,
            "trigger": "continuation",
            "request_id": "r1",
        },
    ),
    ("StreamRenewed", {"stream_id": "s2"}),
]


def _stored(originator: Any) -> list[StoredEvent]:
    return [
        StoredEvent(
            originator,
            version,
            f"{_E}:{name}",
            json.dumps({"timestamp": _AT.format(version), "actor": "user:a", **state}).encode(),
        )
        for version, (name, state) in enumerate(_LOG, start=1)
    ]


@pytest.mark.parametrize("name", [n for n in events.__all__ if n != "ConversationEvent"])
def test_every_event_class_is_stored_under_its_name_in_the_events_module(name: str) -> None:
    """The topic written into every database is ``chatledger.domain.events:<Class>``, and resolves."""
    cls = getattr(events, name)
    assert get_topic(cls) == f"{_E}:{name}"
    assert resolve_topic(f"{_E}:{name}") is cls


def test_a_stored_log_loads_and_folds_as_written() -> None:
    """Stored events load by topic and fold: the batch's skip rule, the answer, the continuation."""
    mapper = PydanticMapper(JSONTranscoder())
    loaded = [mapper.to_domain_event(stored) for stored in _stored(uuid4())]
    batch = loaded[3]
    assert isinstance(batch, events.ChunksReceived)
    assert batch.skipped() == {4}
    assert batch.verdicts()[3:6] == [Verdict.APPLIED, Verdict.REFUSED, Verdict.APPLIED]
    conversation = loaded[0].mutate(None)
    for event in loaded[1:7]:
        conversation = event.mutate(conversation)
    state = conversation.state
    [_, assistant] = state.messages
    [tool] = [part for part in assistant["parts"] if part.get("toolCallId") == "call_1"]
    assert tool["state"] == "approval-responded" and tool["approval"]["approved"] is True
    assert state.approval_times["call_1"] == "2026-01-01T00:00:04.250000+00:00"  # less its age
    assert state.continuation is not None and state.continuation["requestId"] == "r1"
    assert state.wants_continuation is None
    conversation = loaded[7].mutate(conversation)  # claimed: the lease runs from the claim
    assert conversation.state.continuation["leaseUntil"] == "2026-01-01T00:00:38.500000+00:00"
    for event in loaded[8:]:
        conversation = event.mutate(conversation)
    stream = conversation.state.stream
    assert conversation.state.continuation is None  # fulfilled by the continuing stream
    assert stream is not None and stream.stream_id == "s2"
    assert stream.renewed_at == datetime.fromisoformat(_AT.format(len(_LOG)))
