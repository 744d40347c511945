"""Messages with v7-only parts are accepted or refused as ``safeValidateUIMessages`` of ai@7 does."""

from __future__ import annotations

from typing import Any

import pytest

from chatledger.domain.dialects import V7
from chatledger.domain.errors import InvalidMessageError
from chatledger.domain.parts import check_message
from tests.support.oracle import Oracle

pytestmark = pytest.mark.oracle

STEER_TEXT = {"type": "text", "text": "and Rome?"}
STEER_FILE = {"type": "file", "mediaType": "image", "url": "https://a/b.png",
              "providerReference": {"openai": "f1"}, "filename": "b.png"}  # fmt: skip
PARTS: list[dict[str, Any]] = [
    {"type": "custom", "kind": "openai.compaction"},
    {"type": "custom", "kind": "a.b", "providerMetadata": {"a": {"b": 1}}},
    {"type": "custom"},
    {"type": "custom", "kind": 3},
    {"type": "reasoning-file", "mediaType": "image/png", "url": "data:image/png;base64,AA=="},
    {"type": "reasoning-file", "mediaType": "image/png"},
    {"type": "steering-message", "id": "s", "parts": [STEER_TEXT, STEER_FILE]},
    {"type": "steering-message", "id": "s", "parts": []},
    {"type": "steering-message", "parts": [STEER_TEXT]},
    {"type": "steering-message", "id": "s", "parts": [{"type": "reasoning", "text": "x"}]},
    {"type": "steering-message", "id": "s", "parts": [{"type": "file", "url": "u"}]},
]


@pytest.mark.parametrize("part", PARTS, ids=[str(i) for i in range(len(PARTS))])
def test_v7_parts_are_checked_as_ai_7_checks_them(part: dict[str, Any], oracle_v7: Oracle) -> None:
    """Same verdict as v7's validator; v6 conversations do not take these parts at all."""
    message = {"id": "a", "role": "assistant", "parts": [part]}
    answer = oracle_v7.run({"op": "validate", "messages": [message]})
    try:
        check_message(message, V7)
        accepted = True
    except InvalidMessageError:
        accepted = False
    assert accepted == answer["ok"], answer
    with pytest.raises(InvalidMessageError):
        check_message(message)
