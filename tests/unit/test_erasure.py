"""The tombstone an erased event leaves (``chatledger.domain.erasure``): what it keeps, and nothing else."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from chatledger.domain.chain import content_digest
from chatledger.domain.erasure import (
    ERASED_SUMMARY,
    is_tombstone,
    read_tombstone,
    tombstone_bytes,
)
from chatledger.domain.timeline import KINDS, TimelineEntry


def test_a_tombstone_keeps_the_digest_kind_actor_and_time_and_no_content() -> None:
    when = datetime(2026, 5, 1, 12, 30, tzinfo=UTC)
    entry = TimelineEntry(
        3, when, "user:alice", "message-appended", "hello SECRET", {"text": "SECRET"}
    )
    digest = content_digest(b'{"message":"SECRET"}')
    stone = tombstone_bytes(digest, entry)
    assert b"SECRET" not in stone
    assert is_tombstone(stone) and not is_tombstone(b'{"message":"SECRET"}')
    found = read_tombstone(stone)
    assert (found.digest, found.kind, found.actor, found.time) == (
        digest,
        "message-appended",
        "user:alice",
        when,
    )
    assert found.entry(3) == TimelineEntry(
        3, when, "user:alice", "message-appended", ERASED_SUMMARY, {"erased": True}
    )
    with pytest.raises(ValueError):
        read_tombstone(stone[:20])


def test_the_erasure_has_a_timeline_kind() -> None:
    assert "conversation-erased" in KINDS
