"""Property: v7 conversations keep the provider formats' pairing (one result per call, next message).

Conversations of questions and answers folded by the v7 fold from generated v7
streams (steering messages, custom parts, reasoning files, automatic approvals
and their responses, retried steps): every format pairs every call exactly as
the rules say, a retracted call never reaches the model, and the text of a
steering message reaches it as a user turn.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chatledger.domain.convert import to_model_messages
from chatledger.domain.errors import UnansweredToolCallError
from chatledger.domain.whole_stream import fold_stream
from tests.conformance_v7.strategies import streams_v7
from tests.unit.test_convert_pairing_properties import FORMATS, check, expected

Message = dict[str, Any]


@st.composite
def v7_conversations(draw: st.DrawFn) -> tuple[list[Message], set[str]]:
    """Questions and folded v7 answers; also the ids of every call the streams retracted."""
    messages: list[Message] = []
    retracted: set[str] = set()
    for n in range(draw(st.integers(1, 3))):
        messages.append({"id": f"q{n}", "role": "user", "parts": [{"type": "text", "text": "?"}]})
        chunks = draw(streams_v7(prefix=f"g{n}"))
        folded = fold_stream(chunks, ai_sdk=7)
        sent = {c["toolCallId"] for c in chunks if "toolCallId" in c}
        retracted |= sent - {p.get("toolCallId") for p in folded["parts"]}
        messages.append({**folded, "id": f"a{n}"})
    return messages, retracted


def _texts(payload: Any) -> str:
    return repr(payload)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=v7_conversations())
def test_v7_conversations_pair_every_call_in_every_format(
    case: tuple[list[Message], set[str]],
) -> None:
    """Pairing holds; retracted calls are absent; steering text reaches the model."""
    messages, retracted = case
    want = expected(messages)
    steering = [
        item["text"]
        for m in messages
        for p in m["parts"]
        if p["type"] == "steering-message"
        for item in p["parts"]
        if item["type"] == "text" and item["text"].strip()
    ]
    for format in FORMATS:
        omitted = to_model_messages(messages, format, unanswered="omit", ai_sdk=7)
        pairs = check(format, omitted)
        assert [call for call, _, _ in pairs] == want.calls
        for call, text, _ in pairs:
            assert text == want.results[call][0], (format, call)
        shown = _texts(omitted)
        assert not any(repr(call) in shown for call in retracted - set(want.calls)), format
        for text in steering:
            assert repr(text)[1:-1] in shown, (format, text)
        if want.paused:
            with pytest.raises(UnansweredToolCallError):
                to_model_messages(messages, format, ai_sdk=7)
