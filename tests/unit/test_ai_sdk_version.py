"""The AI SDK major is part of a conversation: recorded when it starts, and old logs stay v6."""

from __future__ import annotations

import json
from uuid import uuid4

import pytest
from eventsourcing.persistence import JSONTranscoder, StoredEvent
from eventsourcing.utils import get_topic

from chatledger.adapters.persistence.codec import PydanticMapper
from chatledger.domain.aggregate import Conversation
from chatledger.domain.conversation import ConversationState
from chatledger.domain.errors import InvalidAiSdkVersionError, InvalidChunkError
from chatledger.domain.events import ConversationStarted
from chatledger.domain.limits import Limits
from chatledger.domain.snapshot import ConversationSnapshot

RESET = {"type": "reset-step"}


def _started_v1() -> StoredEvent:
    """A ``ConversationStarted`` as written before the version was recorded (class_version 1)."""
    state = {
        "timestamp": "2026-01-01T00:00:00+00:00",
        "actor": "system",
        "originator_topic": get_topic(Conversation),
        "tenant": "t",
        "chat_id": "old",
    }
    return StoredEvent(uuid4(), 1, get_topic(ConversationStarted), json.dumps(state).encode())


def test_a_conversation_started_before_versions_were_recorded_is_v6() -> None:
    """Upcasting the old event gives ai_sdk 6, so the old log folds exactly as before."""
    event = PydanticMapper(JSONTranscoder()).to_domain_event(_started_v1())
    assert event.ai_sdk == 6
    conversation = event.mutate(None)
    assert conversation.state.ai_sdk == 6


@pytest.mark.parametrize("version", [6, 7])
def test_the_version_is_stored_with_the_start_and_read_back(version: int) -> None:
    """A new ConversationStarted carries its version through the codec."""
    conversation = Conversation.start("t", "c", actor="user:a", ai_sdk=version)
    [event] = conversation.collect_events()
    mapper = PydanticMapper(JSONTranscoder())
    stored = mapper.to_stored_event(event)
    assert json.loads(stored.state).get("ai_sdk", 6) == version
    assert mapper.to_domain_event(stored).mutate(None).state.ai_sdk == version


def test_an_unknown_version_is_refused_by_name() -> None:
    """Only 6 and 7 are spoken."""
    with pytest.raises(InvalidAiSdkVersionError, match="ai_sdk must be 6 or 7"):
        Conversation.start("t", "c", actor="user:a", ai_sdk=5)


def test_chunks_follow_the_conversation_version() -> None:
    """A v7 conversation takes ``reset-step``; a v6 one refuses it as a v7 chunk."""
    limits = Limits()
    for version, verdict in ((7, "applied"), (6, "refused")):
        conversation = Conversation.start("t", f"c{version}", actor="a", ai_sdk=version)
        conversation.open_stream("s", "m", continuation=False, trigger="submit-message", actor="a")
        received = conversation.receive("s", RESET, limits=limits)
        assert received.verdict == verdict
        if version == 6:
            assert isinstance(received.error, InvalidChunkError)
            assert "AI SDK 7" in str(received.error)


def test_snapshots_keep_the_version() -> None:
    """A snapshot of a v7 conversation restores a v7 state; old snapshots (no key) are v6."""
    conversation = Conversation.start("t", "c", actor="a", ai_sdk=7)
    conversation.open_stream("s", "m", continuation=False, trigger="submit-message", actor="a")
    restored = ConversationSnapshot.take(conversation).mutate(None)
    assert restored.state.ai_sdk == 7
    assert restored.state.stream is not None and restored.state.stream.fold.ai_sdk == 7
    old = ConversationState("t", "c").to_json()
    assert "aiSdk" not in old
    assert ConversationState.from_json(old).ai_sdk == 6
