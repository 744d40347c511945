"""Helpers for comparing chatledger's fold with the SDK's: oracle calls, JSON diffs."""

from __future__ import annotations

import json
from typing import Any

from tests.conformance.corpus import oracle_case
from tests.support.oracle import Oracle

__all__ = [
    "SDK_STREAM_ERROR",
    "as_json",
    "assert_json_equal",
    "json_diff",
    "sdk_failure_position",
    "sdk_message",
    "sdk_messages",
]

SDK_STREAM_ERROR = "AI_UIMessageStreamError"
Chunk = dict[str, Any]


def as_json(value: Any) -> Any:
    """``value`` as it travels as JSON (tuples become lists, and so on)."""
    return json.loads(json.dumps(value))


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def json_diff(expected: Any, got: Any, path: str = "$") -> list[str]:
    """Readable differences between two JSON values (empty when equal)."""
    if isinstance(expected, dict) and isinstance(got, dict):
        out: list[str] = []
        for key in sorted(set(expected) | set(got)):
            where = f"{path}.{key}"
            if key not in got:
                out.append(f"{where}: missing, expected {expected[key]!r}")
            elif key not in expected:
                out.append(f"{where}: unexpected {got[key]!r}")
            else:
                out += json_diff(expected[key], got[key], where)
        return out
    if isinstance(expected, list) and isinstance(got, list):
        if len(expected) != len(got):
            return [
                f"{path}: {len(got)} items, expected {len(expected)}: "
                f"got {got!r}, expected {expected!r}"
            ]
        pairs = enumerate(zip(expected, got, strict=True))
        return [d for i, (e, g) in pairs for d in json_diff(e, g, f"{path}[{i}]")]
    if _is_number(expected) and _is_number(got):
        # JSON numbers are doubles on the JavaScript side: 4.6e16 comes back as the integer
        # 46089778225093890, which Python reads as a (different) exact int.
        same = float(expected) == float(got)
        return [] if same else [f"{path}: got {got!r}, expected {expected!r}"]
    if expected != got or isinstance(expected, bool) != isinstance(got, bool):
        return [f"{path}: got {got!r}, expected {expected!r}"]
    return []


def assert_json_equal(got: Any, expected: Any, what: str) -> None:
    """Fail with a readable diff unless ``got`` is JSON-equal to ``expected``."""
    diff = json_diff(as_json(expected), as_json(got))
    assert not diff, f"{what}: differs from the SDK:\n  " + "\n  ".join(diff[:20])


def sdk_message(answer: dict[str, Any], what: str) -> dict[str, Any]:
    """The SDK's final message from a ``read`` answer that must have succeeded."""
    error = f"{answer.get('errorName')}: {answer.get('error')}"
    assert answer["ok"], f"{what}: the SDK failed ({error})"
    return answer["message"]


def sdk_messages(
    oracle: Oracle, items: list[tuple[list[Chunk], dict[str, Any] | None]]
) -> list[dict[str, Any]]:
    """The SDK's fold of every ``(chunks, starting message)``; all must succeed.

    The chunks go through the SDK's HTTP transport (``via: sse``), so a chunk that
    is not valid on the wire fails here instead of passing unnoticed.
    """
    answers = oracle.run_many(
        [{**oracle_case(chunks, message), "via": "sse"} for chunks, message in items]
    )
    return [
        sdk_message(answer, f"generated stream {json.dumps(chunks)[:2000]}")
        for answer, (chunks, _) in zip(answers, items, strict=True)
    ]


def sdk_failure_position(
    oracle: Oracle, chunks: list[Chunk], message: dict[str, Any] | None = None
) -> int | None:
    """Index of the chunk where the SDK's fold fails (``None`` if it never does)."""
    answers = oracle.run_many([oracle_case(chunks[: n + 1], message) for n in range(len(chunks))])
    for position, answer in enumerate(answers):
        if not answer["ok"]:
            assert answer["errorName"] == SDK_STREAM_ERROR, answer
            return position
    return None
