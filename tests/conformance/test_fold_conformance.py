"""chatledger's fold is JSON-equal to the real AI SDK's ``readUIMessageStream`` (docs/behaviour.md §3.1, §3.4).

(a) every corpus case, (b) generated replay-free streams, continuations and
conversation folds, (c) streams the SDK fails on are refused at the same chunk.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatledger.domain.errors import InvalidChunkError
from chatledger.domain.whole_stream import fold_into_conversation, fold_stream
from tests.conformance import corpus
from tests.conformance.checks import (
    SDK_STREAM_ERROR,
    assert_json_equal,
    sdk_failure_position,
    sdk_message,
    sdk_messages,
)
from tests.conformance.messages import TOOL_STATES
from tests.conformance.strategies import continuations, conversation_streams, streams
from tests.support.oracle import Oracle

pytestmark = pytest.mark.oracle

CASES = corpus.load()
REFUSED = corpus.load("REFUSED")
INBAND_ERRORS = corpus.load("INBAND_ERRORS")

# The AI SDK v6 chunk types ("data-*" stands for every data-<name> type).
# fmt: off
CHUNK_TYPES = {
    "start", "finish", "abort", "error", "message-metadata", "start-step", "finish-step",
    "text-start", "text-delta", "text-end", "reasoning-start", "reasoning-delta",
    "reasoning-end", "tool-input-start", "tool-input-delta", "tool-input-available",
    "tool-input-error", "tool-approval-request", "tool-output-available", "tool-output-error",
    "tool-output-denied", "source-url", "source-document", "file", "data-*",
}
# fmt: on


def _chunk_kind(chunk: dict[str, Any]) -> str:
    return "data-*" if chunk["type"].startswith("data-") else chunk["type"]


@pytest.fixture(scope="session")
def sdk_corpus(oracle: Oracle) -> dict[str, dict[str, Any]]:
    """The SDK's answer for every corpus case, in one oracle round trip."""
    answers = oracle.run_many([corpus.oracle_case(c.chunks, c.message) for c in CASES])
    return {str(case): answer for case, answer in zip(CASES, answers, strict=True)}


# -- (a) the corpus ---------------------------------------------------------------------------


def test_corpus_cases_fold_without_error_in_the_sdk(sdk_corpus: dict[str, dict[str, Any]]) -> None:
    """Every corpus case is a stream the SDK folds without error (else it belongs in REFUSED)."""
    failed = {name: a.get("error") for name, a in sdk_corpus.items() if not a["ok"]}
    assert not failed


def test_corpus_chunks_are_valid_on_the_wire(oracle: Oracle) -> None:
    """Every corpus stream also passes the SDK's HTTP transport, which schema-checks chunks."""
    answers = oracle.run_many(
        [{**corpus.oracle_case(c.chunks, c.message), "via": "sse"} for c in CASES]
    )
    refused = {str(c): a["error"][:200] for c, a in zip(CASES, answers, strict=True) if not a["ok"]}
    assert not refused


def test_corpus_covers_every_chunk_type() -> None:
    """The corpus sends every chunk type of the v6 protocol at least once."""
    sent = {_chunk_kind(chunk) for case in CASES + INBAND_ERRORS for chunk in case.chunks}
    assert CHUNK_TYPES - sent == set()


def test_corpus_covers_every_tool_state_in_static_and_dynamic_parts(
    sdk_corpus: dict[str, dict[str, Any]],
) -> None:
    """The SDK's results hold static and dynamic tool parts in every tool state."""
    seen = {
        (part["type"] == "dynamic-tool", part["state"])
        for answer in sdk_corpus.values()
        for part in answer["message"]["parts"]
        if "toolCallId" in part
    }
    missing = {(dyn, state) for dyn in (False, True) for state in TOOL_STATES} - seen
    assert missing == set()


@pytest.mark.parametrize("case", CASES, ids=str)
def test_corpus_case_folds_like_the_sdk(
    case: corpus.Case, sdk_corpus: dict[str, dict[str, Any]]
) -> None:
    """fold_stream gives the SDK's final message for each hand-written case."""
    expected = sdk_message(sdk_corpus[str(case)], str(case))
    assert_json_equal(fold_stream(case.chunks, case.message), expected, str(case))


@pytest.mark.parametrize("case", INBAND_ERRORS, ids=str)
def test_inband_error_chunk_leaves_the_message_as_the_sdk_does(
    case: corpus.Case, oracle: Oracle
) -> None:
    """An in-band ``error`` chunk changes nothing; the SDK reports it and carries on."""
    without_errors = [c for c in case.chunks if c["type"] != "error"]
    with_errors, clean = oracle.run_many(
        [corpus.oracle_case(case.chunks), corpus.oracle_case(without_errors)]
    )
    reported = with_errors.get("errors", [with_errors])
    assert [e.get("errorName", e.get("name")) for e in reported] == ["Error"] * (
        len(case.chunks) - len(without_errors)
    )
    assert_json_equal(fold_stream(case.chunks), sdk_message(clean, str(case)), str(case))


# -- (b) generated streams ------------------------------------------------------------------


@settings(max_examples=300)
@given(chunks=streams())
def test_generated_stream_folds_like_the_sdk(oracle: Oracle, chunks: list[dict[str, Any]]) -> None:
    """Any valid replay-free stream folds to the SDK's message."""
    [expected] = sdk_messages(oracle, [(chunks, None)])
    assert_json_equal(fold_stream(chunks), expected, "fold_stream")


@settings(max_examples=150)
@given(case=continuations())
def test_generated_continuation_folds_like_the_sdk(
    oracle: Oracle, case: tuple[dict[str, Any], list[dict[str, Any]]]
) -> None:
    """Continuing a starting assistant message gives the SDK's message; the argument is kept."""
    message, chunks = case
    before = copy.deepcopy(message)
    [expected] = sdk_messages(oracle, [(chunks, message)])
    assert_json_equal(fold_stream(chunks, message), expected, "fold_stream(continuation)")
    assert message == before, "fold_stream changed the starting message it was given"


@settings(max_examples=100)
@given(case=conversation_streams(earlier_outputs=False))
def test_stream_folded_into_a_conversation_matches_the_sdk(oracle: Oracle, case: Any) -> None:
    """fold_into_conversation appends (or continues) the SDK's message, earlier ones untouched."""
    before = copy.deepcopy(case.messages)
    [expected] = sdk_messages(oracle, [(case.chunks, case.target)])
    result = fold_into_conversation(
        case.messages, case.chunks, continuation=case.continuation, message_id=case.message_id
    )
    if not case.continuation:
        expected = {**expected, "id": case.message_id}
    kept = case.messages[:-1] if case.continuation else case.messages
    assert_json_equal(result[:-1], kept, "earlier messages")
    assert_json_equal(result[-1], expected, "folded message")
    assert case.messages == before, "fold_into_conversation changed its argument"


# -- (c) streams the SDK fails on -----------------------------------------------------------


def _refusal_position(chunks: list[dict[str, Any]], message: dict[str, Any] | None) -> int | None:
    try:
        fold_stream(chunks, message)
    except InvalidChunkError as error:
        assert error.chunk_type == chunks[error.position]["type"], error  # type: ignore[index]
        return error.position
    return None


@pytest.mark.parametrize("case", REFUSED, ids=str)
def test_stream_the_sdk_fails_on_is_refused_at_the_same_chunk(
    case: corpus.Case, oracle: Oracle
) -> None:
    """fold_stream raises InvalidChunkError naming the chunk where the SDK's fold fails."""
    position = sdk_failure_position(oracle, case.chunks, case.message)
    assert position is not None, f"{case}: the SDK folds it without error"
    assert _refusal_position(case.chunks, case.message) == position


BAD_CHUNKS = [
    {"type": "text-delta", "id": "bad-t", "delta": "x"},
    {"type": "text-end", "id": "bad-t"},
    {"type": "reasoning-delta", "id": "bad-r", "delta": "x"},
    {"type": "reasoning-end", "id": "bad-r"},
    {"type": "tool-input-delta", "toolCallId": "bad-call", "inputTextDelta": "{"},
    {"type": "tool-approval-request", "approvalId": "bad-ap", "toolCallId": "bad-call"},
    {"type": "tool-output-available", "toolCallId": "bad-call", "output": 1},
    {"type": "tool-output-error", "toolCallId": "bad-call", "errorText": "e"},
    {"type": "tool-output-denied", "toolCallId": "bad-call"},
]


@settings(max_examples=100)
@given(
    case=st.one_of(streams().map(lambda c: (None, c)), continuations()),
    bad=st.sampled_from(BAD_CHUNKS),
    where=st.floats(0, 1),
)
def test_bad_chunk_in_a_valid_stream_is_refused_where_the_sdk_fails(
    oracle: Oracle, case: Any, bad: dict[str, Any], where: float
) -> None:
    """A chunk naming an unknown part, anywhere in a valid stream, is refused at its position."""
    message, chunks = case
    position = round(where * len(chunks))
    stream = [*chunks[:position], bad, *chunks[position:]]
    answer = oracle.run(corpus.oracle_case(stream, message))
    assert not answer["ok"] and answer["errorName"] == SDK_STREAM_ERROR, json.dumps(answer)
    assert _refusal_position(stream, message) == position


# -- deliberate differences (docs/behaviour.md §3.4, §4.3) -------------------------------------------------

TEXT = [
    {"type": "text-start", "id": "t"},
    {"type": "text-delta", "id": "t", "delta": "kept"},
    {"type": "text-end", "id": "t"},
]


def test_start_naming_another_message_after_content_is_refused(oracle: Oracle) -> None:
    """A ``start`` with a new messageId after content is refused; the SDK would wipe the content."""
    chunks = [{"type": "start", "messageId": "m1"}, *TEXT, {"type": "start", "messageId": "m2"}]
    wiped = sdk_message(oracle.read(chunks), "sdk")
    assert wiped == {"id": "m2", "role": "assistant", "parts": []}
    with pytest.raises(InvalidChunkError) as refused:
        fold_stream(chunks)
    assert (refused.value.position, refused.value.chunk_type) == (4, "start")


def test_start_message_id_is_ignored_on_a_continued_message(oracle: Oracle) -> None:
    """A continuation keeps its message id and parts whatever ``start.messageId`` says."""
    message = {
        "id": "a1",
        "role": "assistant",
        "parts": [{"type": "text", "text": "old", "state": "done"}],
    }
    chunks = [{"type": "start", "messageId": "other"}, *TEXT]
    reset = sdk_message(oracle.read(chunks, message=message), "sdk")
    assert reset["id"] == "other" and len(reset["parts"]) == 1
    folded = fold_stream(chunks, message)
    assert folded["id"] == "a1"
    assert [p.get("text") for p in folded["parts"]] == ["old", "kept"]
