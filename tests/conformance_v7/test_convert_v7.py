"""The ``ai-sdk`` converter of a v7 conversation is JSON-equal to ``convertToModelMessages`` of ``ai@7.0.173``.

(a) every hand-written v7 case and every v6 corpus case, folded by the v7 fold
and put in a conversation; all of them in one conversation (so earlier
approval requests are superseded); (b) generated v7 conversations; (c)
hand-written v7 messages (steering, custom, reasoning files, provider
references, automatic and denied approvals, URLs). Each with and without
``ignoreIncompleteToolCalls``.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatledger.domain.convert import to_model_messages
from chatledger.domain.errors import MessageConversionError
from chatledger.domain.whole_stream import fold_stream
from tests.conformance import corpus
from tests.conformance.checks import assert_json_equal
from tests.conformance_v7.cases import CASES as V7_CASES
from tests.conformance_v7.strategies import streams_v7
from tests.support.oracle import Oracle

pytestmark = pytest.mark.oracle

Message = dict[str, Any]
OPTIONS = (False, True)
SYSTEM = {"id": "sys", "role": "system", "parts": [{"type": "text", "text": "Be brief."}]}


def _question(n: int | str) -> Message:
    return {"id": f"q{n}", "role": "user", "parts": [{"type": "text", "text": "Go on."}]}


def _convert(messages: list[Message], ignore: bool) -> Any:
    return to_model_messages(messages, "ai-sdk", ignore_incomplete_tool_calls=ignore, ai_sdk=7)


def _oracle_case(messages: list[Message], ignore: bool) -> dict[str, Any]:
    options = {"ignoreIncompleteToolCalls": True} if ignore else {}
    return {"op": "convert", "messages": messages, "options": options}


def assert_all_convert_like_v7(oracle_v7: Oracle, batch: list[list[Message]]) -> int:
    """Every conversation of ``batch``, both ways, in one round trip; returns the count checked."""
    requests = [(messages, ignore) for messages in batch for ignore in OPTIONS]
    answers = oracle_v7.run_many([_oracle_case(m, ignore) for m, ignore in requests])
    for (messages, ignore), answer in zip(requests, answers, strict=True):
        before = copy.deepcopy(messages)
        what = f"convert(v7, ignore={ignore}) of {json.dumps(messages)[:1500]}"
        if answer["ok"]:
            assert_json_equal(_convert(messages, ignore), answer["modelMessages"], what)
        else:
            with pytest.raises(MessageConversionError):
                _convert(messages, ignore)
        assert messages == before, f"{what}: the input was changed"
    return len(requests)


# -- (a) folded cases ---------------------------------------------------------------------------


def _folded() -> list[Message]:
    v7 = [fold_stream(c["chunks"], c.get("message"), ai_sdk=7) for c in V7_CASES]
    v6 = [fold_stream(c.chunks, c.message, ai_sdk=7) for c in corpus.load()]
    return [{**m, "id": f"a{n}"} for n, m in enumerate(v7 + v6)]


FOLDED = _folded()


def test_each_folded_message_converts_like_v7(oracle_v7: Oracle) -> None:
    """System, question, one folded message, and (half the time) a follow-up question."""
    batch = []
    for n, message in enumerate(FOLDED):
        tail = [_question("end")] if n % 2 else []
        batch.append([SYSTEM, _question(n), message, *tail])
    assert assert_all_convert_like_v7(oracle_v7, batch) == 2 * len(FOLDED)


def test_all_folded_messages_in_one_conversation_convert_like_v7(oracle_v7: Oracle) -> None:
    """Every folded message after a question each: pending approvals before the last are dropped."""
    messages = [SYSTEM]
    for n, message in enumerate(FOLDED):
        messages += [_question(n), message]
    assert_all_convert_like_v7(oracle_v7, [messages, [*messages, _question("last")]])


# -- (b) generated conversations ----------------------------------------------------------------


@st.composite
def v7_conversations(draw: st.DrawFn) -> list[Message]:
    """Questions and v7 answers (generated streams, folded by the v7 fold), in any order."""
    messages: list[Message] = [SYSTEM] if draw(st.booleans()) else []
    for n in range(draw(st.integers(1, 4))):
        if draw(st.booleans()):
            messages.append(_question(n))
        chunks = draw(streams_v7(prefix=f"g{n}"))
        messages.append({**fold_stream(chunks, ai_sdk=7), "id": f"a{n}"})
    return messages


@settings(max_examples=40)
@given(batch=st.lists(v7_conversations(), min_size=3, max_size=3))
def test_generated_v7_conversations_convert_like_v7(
    oracle_v7: Oracle, batch: list[list[Message]]
) -> None:
    """Any conversation of v7 answers converts as v7 converts it."""
    assert_all_convert_like_v7(oracle_v7, batch)


# -- (c) hand-written v7 messages ---------------------------------------------------------------


def _tool(state: str, **fields: Any) -> Message:
    return {"type": "tool-weather", "toolCallId": fields.pop("id", "c1"), "state": state,
            "input": {"city": "Paris"}, **fields}  # fmt: skip


def _assistant(*parts: Any, mid: str = "a") -> Message:
    return {"id": mid, "role": "assistant", "parts": list(parts)}


STEERING = {
    "type": "steering-message",
    "id": "st1",
    "parts": [
        {"type": "text", "text": "and Rome", "providerMetadata": {"p": {"k": 1}}},
        {"type": "file", "mediaType": "image", "url": "https://x.example/Ü b.png",
         "filename": "a.png"},
        {"type": "file", "mediaType": "application/pdf", "url": "https://x.example/d.pdf",
         "providerReference": {"openai": "file-1"}},
    ],
}  # fmt: skip

HAND_WRITTEN: dict[str, list[Message]] = {
    "steering between steps": [
        _question(0),
        _assistant(
            {"type": "step-start"},
            {"type": "text", "text": "one"},
            _tool("output-available", output=1),
            STEERING,
            {"type": "step-start"},
            {"type": "text", "text": "two"},
        ),
    ],
    "steering first and last": [_assistant(STEERING, {"type": "text", "text": "x"}, STEERING)],
    "custom and reasoning files": [
        _assistant(
            {"type": "custom", "kind": "openai.compaction"},
            {"type": "custom", "kind": "a.b", "providerMetadata": {"a": {"b": 1}}},
            {
                "type": "reasoning-file",
                "mediaType": "image/png",
                "url": "data:image/png;base64,AA==",
            },
            {
                "type": "reasoning-file",
                "mediaType": "image/png",
                "url": "HTTPS://A.COM/../x",
                "providerMetadata": {"g": {"s": "sig"}},
            },
            {"type": "reasoning", "text": "r"},
        )
    ],
    "user files: url and provider reference": [
        {
            "id": "u",
            "role": "user",
            "parts": [
                {"type": "file", "mediaType": "image/png", "url": "https://a.com/x y.png"},
                {
                    "type": "file",
                    "mediaType": "image",
                    "url": "https://a.com/r.png",
                    "providerReference": {"anthropic": "f_1"},
                    "filename": "r.png",
                },
                {"type": "text", "text": "look", "citations": []},
            ],
        },
        _assistant({"type": "file", "mediaType": "image/png", "url": "https://b.com:443/a/./b"}),
    ],
    "invalid file url throws": [
        {"id": "u", "role": "user", "parts": [{"type": "file", "mediaType": "x/y", "url": "nope"}]}
    ],
    "automatic and reasoned approval requests": [
        _assistant(
            _tool(
                "approval-requested",
                approval={"id": "ap1", "isAutomatic": True, "requestReason": "policy"},
            ),
            _tool("approval-requested", id="c2", approval={"id": "ap2", "isAutomatic": False}),
            _tool(
                "approval-responded",
                id="c3",
                approval={
                    "id": "ap3",
                    "approved": True,
                    "isAutomatic": True,
                    "requestReason": "r",
                    "reason": "ok",
                },
            ),
        )
    ],
    "denied approval-responded gets execution-denied": [
        _assistant(
            _tool(
                "approval-responded",
                approval={"id": "ap1", "approved": False, "reason": "too costly"},
                callProviderMetadata={"p": {"a": 1}},
            ),
            _tool("approval-responded", id="c2", approval={"id": "ap2", "approved": False}),
            _tool(
                "approval-responded",
                id="c3",
                providerExecuted=True,
                approval={"id": "ap3", "approved": False, "reason": "no"},
            ),
            _tool("output-denied", id="c4", approval={"id": "ap4", "approved": False}),
        )
    ],
    "approvals superseded by a later user message": [
        _question(0),
        _assistant(
            _tool("approval-requested", approval={"id": "ap1"}),
            {"type": "text", "text": "waiting"},
            mid="a1",
        ),
        _question(1),
        _assistant(_tool("approval-requested", id="c2", approval={"id": "ap2"}), mid="a2"),
    ],
    "only approval request superseded leaves no assistant message": [
        _question(0),
        _assistant(_tool("approval-requested", approval={"id": "ap1"}), mid="a1"),
        _question(1),
    ],
    "superseded needs a user message after the first": [
        {"id": "u", "role": "user", "parts": []},
        _assistant(_tool("approval-requested", approval={"id": "ap1"}), mid="a1"),
    ],
    "undefined output and error are null": [
        _assistant(
            _tool("output-available"),
            _tool("output-error", id="c2", providerExecuted=True),
            _tool("output-available", id="c3", providerExecuted=True),
        )
    ],
    "tool error text kept": [
        _assistant(_tool("output-error", errorText="ECONNREFUSED 10.0.0.1:443")),
        _assistant(_tool("output-error", id="c2", input=None, rawInput="{bad"), mid="b"),
    ],
}


@pytest.mark.parametrize("name", HAND_WRITTEN)
def test_hand_written_v7_messages_convert_like_v7(name: str, oracle_v7: Oracle) -> None:
    """Each v7-only shape converts (or fails) as v7 does."""
    assert_all_convert_like_v7(oracle_v7, [HAND_WRITTEN[name]])


def test_v6_conversion_is_unchanged_for_v6_conversations() -> None:
    """A v6 conversation still gets v6's file data and no execution-denied result."""
    messages = HAND_WRITTEN["denied approval-responded gets execution-denied"]
    v6 = to_model_messages(messages, "ai-sdk")
    assert all(item.get("output", {}).get("type") != "execution-denied"
               for m in v6 if m["role"] == "tool" for item in m["content"])  # fmt: skip
    assert _convert(messages, False) != v6
