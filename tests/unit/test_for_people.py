"""``for_people``: the frameworks' bookkeeping folded away, everything else as it was."""

from __future__ import annotations

import copy
from typing import Any

from chatledger.projections.for_people import ForPeople, for_people, is_record_marker

USER = {"id": "u", "role": "user", "parts": [{"type": "text", "text": "hi"}]}
MARKER = {
    "id": "pai_record_1",
    "role": "system",
    "metadata": {"pydanticAi": {"record": {"revision": 1}}},
    "parts": [{"type": "data-pydantic-ai-record", "data": {"revision": 1}}],
}


def test_a_conversation_without_bookkeeping_is_unchanged() -> None:
    messages: list[dict[str, Any]] = [USER, {**USER, "id": "a", "metadata": {"model": "m"}}]
    assert for_people(messages) == ForPeople(messages)
    assert for_people(messages).note is None


def test_markers_are_left_out_and_bookkeeping_keys_dropped_the_rest_kept() -> None:
    answer = {
        "id": "a",
        "role": "assistant",
        "metadata": {"openaiItem": {"x": 1}, "openaiRunState": {"state": {}}, "model": "m"},
        "parts": [{"type": "text", "text": "hello"}],
    }
    entry = {**USER, "metadata": {"pydanticAi": {"message": {}}}}
    messages = [entry, answer, MARKER]
    before = copy.deepcopy(messages)
    readable = for_people(messages)
    assert readable.messages == [USER, {**answer, "metadata": {"model": "m"}}]
    assert readable.folded_keys == ("openaiItem", "openaiRunState", "pydanticAi")
    assert readable.folded_markers == 1
    assert readable.note == (
        "framework bookkeeping not shown: metadata openaiItem, openaiRunState, pydanticAi; "
        "1 record marker"
    )
    assert messages == before  # the input is not changed


def test_only_system_messages_of_marker_parts_are_markers() -> None:
    assert is_record_marker(MARKER)
    assert not is_record_marker({**MARKER, "role": "assistant"})
    mixed = {**MARKER, "parts": [*MARKER["parts"], {"type": "text", "text": "x"}]}  # type: ignore[list-item]
    assert not is_record_marker(mixed)
    assert not is_record_marker({"id": "s", "role": "system", "parts": []})
