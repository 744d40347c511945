"""Generated AI SDK v7 streams fold like ``ai@7.0.173``, and replays inserted anywhere change nothing.

About 400 streams per run go through the real SDK (batches of four, each parsed
by v7's ``DefaultChatTransport`` first, so every chunk is valid on the wire).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from chatledger.domain.whole_stream import fold_stream
from tests.conformance.checks import assert_json_equal, sdk_messages
from tests.conformance.replays import known_calls as known_v6
from tests.conformance.replays import replay_chunks
from tests.conformance_v7.strategies import continuations_v7, streams_v7
from tests.support.oracle import Oracle

Chunk = dict[str, Any]


@pytest.mark.oracle
@settings(max_examples=80)
@given(batch=st.lists(streams_v7(), min_size=4, max_size=4))
def test_generated_v7_streams_fold_like_the_sdk(
    oracle_v7: Oracle, batch: list[list[Chunk]]
) -> None:
    """Any valid replay-free v7 stream folds to v7's message."""
    expected = sdk_messages(oracle_v7, [(chunks, None) for chunks in batch])
    for chunks, message in zip(batch, expected, strict=True):
        assert_json_equal(fold_stream(chunks, ai_sdk=7), message, "fold_stream(ai_sdk=7)")


@pytest.mark.oracle
@settings(max_examples=60)
@given(case=continuations_v7())
def test_generated_v7_continuations_fold_like_the_sdk(
    oracle_v7: Oracle, case: tuple[dict[str, Any], list[Chunk]]
) -> None:
    """Continuing an assistant message with v7 chunks gives v7's message."""
    message, chunks = case
    before = copy.deepcopy(message)
    [expected] = sdk_messages(oracle_v7, [(chunks, message)])
    assert_json_equal(fold_stream(chunks, message, ai_sdk=7), expected, "continuation")
    assert message == before


# -- replays (a retracted call is not known any more) --------------------------------------


def _answers(message: dict[str, Any] | None) -> dict[str, tuple[str, bool]]:
    """approval id -> (toolCallId, approved) for every answered approval of ``message``."""
    out: dict[str, tuple[str, bool]] = {}
    for part in (message or {}).get("parts", []):
        approval = part.get("approval") or {}
        if "toolCallId" not in part or "id" not in approval:
            continue
        approved = approval.get("approved")
        if part["state"] == "output-denied":
            approved = False if approved is None else approved
        elif part["state"] in ("output-available", "output-error") and approved is None:
            continue
        if isinstance(approved, bool):
            out[approval["id"]] = (part["toolCallId"], approved)
    return out


@st.composite
def _with_v7_replays(
    draw: st.DrawFn, message: dict[str, Any] | None, chunks: list[Chunk]
) -> list[Chunk]:
    """``chunks`` with replays of the calls known at each position inserted (known: in the view)."""
    inserted: list[tuple[int, Chunk]] = []
    for _ in range(draw(st.integers(1, 6))):
        position = draw(st.integers(0, len(chunks)))
        view = fold_stream(chunks[:position], message, ai_sdk=7) if position else message
        known = known_v6([view] if view else [])
        answers = _answers(view)
        options = [("call", call_id) for call_id in sorted(known)]
        options += [("answer", approval_id) for approval_id in sorted(answers)]
        if not options:
            continue
        kind, key = draw(st.sampled_from(options))
        if kind == "call":
            replay = draw(replay_chunks(key, known[key]))
        else:
            replay = {
                "type": "tool-approval-response",
                "approvalId": key,
                "approved": answers[key][1],
            }
        inserted.append((position, replay))
    out: list[Chunk] = []
    for position in range(len(chunks) + 1):
        out += [chunk for where, chunk in inserted if where == position]
        if position < len(chunks):
            out.append(chunks[position])
    return out


@settings(max_examples=120)
@given(case=st.one_of(streams_v7().map(lambda c: (None, c)), continuations_v7()), data=st.data())
def test_inserting_replays_into_a_v7_stream_changes_nothing(
    case: tuple[dict[str, Any] | None, list[Chunk]], data: st.DataObject
) -> None:
    """Replays of calls still in the view, inserted anywhere (resets included), change nothing."""
    message, chunks = case
    replayed = data.draw(_with_v7_replays(message, chunks), label="with replays")
    assume(len(replayed) > len(chunks))
    assert fold_stream(replayed, message, ai_sdk=7) == fold_stream(chunks, message, ai_sdk=7)


def test_an_approval_response_for_a_call_with_a_preliminary_output_is_a_replay() -> None:
    """Found by the property: a running (preliminary) call never goes back to approval-responded."""
    message = {
        "id": "m",
        "role": "assistant",
        "parts": [
            {"type": "tool-t", "toolCallId": "c", "state": "output-available", "input": None,
             "approval": {"id": "ap", "approved": True}, "output": None, "preliminary": True},
        ],
    }  # fmt: skip
    response = {"type": "tool-approval-response", "approvalId": "ap", "approved": True}
    assert fold_stream([response], message, ai_sdk=7) == message
