"""A v7 conversation folds exactly as ``readUIMessageStream`` of ``ai@7.0.173`` does.

(a) hand-written cases for every chunk v7 adds or changes, (b) the whole v6
corpus read by v7, (c) streams v7 fails on, refused at the same chunk.
Generated streams are in ``test_generated_v7.py``.
"""

from __future__ import annotations

from typing import Any

import pytest

from chatledger.domain.chunks import CHUNK_TYPES_V7
from chatledger.domain.errors import InvalidChunkError
from chatledger.domain.whole_stream import fold_stream
from tests.conformance import corpus
from tests.conformance.checks import assert_json_equal, sdk_failure_position, sdk_message
from tests.conformance_v7.cases import CASES, REFUSED
from tests.support.oracle import Oracle

pytestmark = pytest.mark.oracle

V6_CORPUS = corpus.load()


def _read(case: dict[str, Any], via: str | None = None) -> dict[str, Any]:
    read = corpus.oracle_case(case["chunks"], case.get("message"))
    return {**read, "via": via} if via else read


@pytest.fixture(scope="module")
def sdk_cases(oracle_v7: Oracle) -> dict[str, dict[str, Any]]:
    """The v7 SDK's answer for each hand-written case, parsed as useChat does (``via: sse``)."""
    answers = oracle_v7.run_many([_read(case, "sse") for case in CASES])
    return {case["name"]: answer for case, answer in zip(CASES, answers, strict=True)}


def test_cases_cover_every_new_chunk_type() -> None:
    """Each chunk type v7 adds is sent by at least one hand-written case."""
    sent = {chunk["type"] for case in CASES for chunk in case["chunks"]}
    added = {"tool-approval-response", "custom", "reasoning-file", "steering-message", "reset-step"}
    assert added <= CHUNK_TYPES_V7
    assert added - sent == set()


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["name"])
def test_case_folds_like_the_v7_sdk(case: dict[str, Any], sdk_cases: dict[str, Any]) -> None:
    """fold_stream(ai_sdk=7) gives v7's final message for each hand-written case."""
    expected = sdk_message(sdk_cases[case["name"]], case["name"])
    folded = fold_stream(case["chunks"], case.get("message"), ai_sdk=7)
    assert_json_equal(folded, expected, case["name"])


def test_v6_corpus_folds_like_the_v7_sdk(oracle_v7: Oracle) -> None:
    """Every v6 corpus stream, read by v7, folds as v7 folds it (40-odd differ from v6)."""
    answers = oracle_v7.run_many([corpus.oracle_case(c.chunks, c.message) for c in V6_CORPUS])
    differ_from_v6 = 0
    for case, answer in zip(V6_CORPUS, answers, strict=True):
        expected = sdk_message(answer, str(case))
        folded = fold_stream(case.chunks, case.message, ai_sdk=7)
        assert_json_equal(folded, expected, f"{case} under v7")
        differ_from_v6 += folded != fold_stream(case.chunks, case.message)
    assert differ_from_v6 > 0, "v7 should differ from v6 on some corpus streams"


def _refusal_position(case: dict[str, Any]) -> int | None:
    try:
        fold_stream(case["chunks"], case.get("message"), ai_sdk=7)
    except InvalidChunkError as error:
        assert error.position is not None
        assert error.chunk_type == case["chunks"][error.position]["type"], error
        return error.position
    return None


@pytest.mark.parametrize("case", REFUSED, ids=lambda c: c["name"])
def test_stream_v7_fails_on_is_refused_at_the_same_chunk(
    case: dict[str, Any], oracle_v7: Oracle
) -> None:
    """fold_stream(ai_sdk=7) raises InvalidChunkError naming the chunk where v7's fold fails."""
    position = sdk_failure_position(oracle_v7, case["chunks"], case.get("message"))
    assert position is not None, f"{case['name']}: the v7 SDK folds it without error"
    assert _refusal_position(case) == position


def test_v7_chunks_are_refused_in_a_v6_conversation() -> None:
    """A v6 conversation still refuses what only v7 sends, naming the version."""
    with pytest.raises(InvalidChunkError, match="AI SDK 7") as refused:
        fold_stream([{"type": "text-start", "id": "t"}, {"type": "reset-step"}])
    assert refused.value.position == 1
