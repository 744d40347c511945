"""``replay_chunks``: a stored v7 message as chunks that ``ai@7.0.173`` folds back into exactly it.

What a v7 client resuming a continuation gets first (``resumeStreamIsReplay``).
Messages come from generated v7 streams (every part kind and tool state the
fold makes) and from continuations of generated messages; the chunks go
through the real SDK's HTTP transport and fold (``readUIMessageStream``).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatledger.domain.message_replay import replay_chunks
from chatledger.domain.whole_stream import fold_stream
from tests.conformance.checks import assert_json_equal, sdk_messages
from tests.conformance_v7.strategies import continuations_v7, streams_v7
from tests.support.oracle import Oracle

Chunk = dict[str, Any]


@pytest.mark.oracle
@settings(max_examples=40, deadline=None)
@given(batch=st.lists(streams_v7(), min_size=4, max_size=4))
def test_a_folded_v7_message_replays_into_itself_in_the_sdk(
    oracle_v7: Oracle, batch: list[list[Chunk]]
) -> None:
    """Every message a v7 stream folds to is expressed as chunks, and the SDK rebuilds it exactly."""
    messages = [fold_stream(chunks, ai_sdk=7) for chunks in batch]
    replays = [replay_chunks(message) for message in messages]
    assert all(replay is not None for replay in replays)
    rebuilt = sdk_messages(oracle_v7, [(replay, None) for replay in replays if replay is not None])
    for message, sdk in zip(messages, rebuilt, strict=True):
        assert_json_equal(sdk, message, "ai@7 fold of replay_chunks(message)")


@settings(max_examples=150, deadline=None)
@given(case=continuations_v7())
def test_a_replay_is_exact_or_none(case: tuple[dict[str, Any], list[Chunk]]) -> None:
    """Continued messages (from generated starting messages) replay exactly, or not at all."""
    start, chunks = case
    message = fold_stream(chunks, start, ai_sdk=7)
    replay = replay_chunks(message)
    if replay is not None:
        assert fold_stream(copy.deepcopy(replay), ai_sdk=7) == message
        assert replay[0] == {"type": "start", "messageId": message["id"], **_metadata(message)}


def test_what_chunks_cannot_express_is_none() -> None:
    """A part kind the fold does not make, or an input error as v6 stored it: no replay."""
    unknown = {"id": "m", "role": "assistant", "parts": [{"type": "mystery"}]}
    v6_error = {
        "id": "m",
        "role": "assistant",
        "parts": [
            {"type": "tool-x", "toolCallId": "c", "state": "output-error", "rawInput": "{",
             "errorText": "bad input"},
        ],
    }  # fmt: skip
    assert replay_chunks(unknown) is None
    assert replay_chunks(v6_error) is None


def _metadata(message: dict[str, Any]) -> dict[str, Any]:
    metadata = message.get("metadata")
    return {} if metadata is None else {"messageMetadata": metadata}
