"""Property: in every provider format, every tool call is paired with exactly one result (docs/behaviour.md §6, §10).

For any conversation the store can hold (``tests.conformance.messages.conversations``:
tool parts in every state, static and dynamic, provider-executed or not, steps,
text, reasoning, files, sources, data parts; plus system messages, user files
and provider metadata added here), each of ``anthropic``, ``openai-chat`` and
``openai-responses``:

- with ``unanswered="omit"`` never raises, and pairs every call with exactly
  one result, in order, in the next message:
  Anthropic: the ``tool_use`` ids of an assistant message are the first blocks
  of the very next (user) message, as ``tool_result`` blocks in the same order;
  Chat: an assistant message's ``tool_calls`` are followed at once by one
  ``role: "tool"`` message per call, in order;
  Responses: each run of ``function_call`` items is followed at once by the
  ``function_call_output`` items of those calls, in order;
  and there is no result without a call;
- sends exactly the client calls of the conversation, in conversation order,
  minus the unanswered ones of the final message, each with the result the
  pairing rules give (output, error text, denial reason, interruption);
- validates strictly against the official SDK's request types;
- with ``unanswered="refuse"`` raises ``UnansweredToolCallError`` (naming the
  calls) exactly when the final message is an assistant message with an
  unanswered client call, and otherwise gives the same payload as "omit".
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from chatledger.domain.convert import Format, to_model_messages
from chatledger.domain.convert.turns import DENIED_TEXT, ERROR_TEXT, INTERRUPTED_TEXT
from chatledger.domain.errors import UnansweredToolCallError
from tests.conformance.messages import conversations
from tests.conformance.values import short_texts
from tests.support.provider_types import (
    validate_anthropic,
    validate_openai_chat,
    validate_openai_responses,
)

Message = dict[str, Any]
FORMATS: tuple[Format, ...] = ("anthropic", "openai-chat", "openai-responses")
EXAMPLES = 250

# -- generating conversations ---------------------------------------------------------------------

_FILES = st.sampled_from(
    [
        {"type": "file", "mediaType": "image/png", "url": "data:image/png;base64,iVBORw0KGgo="},
        {"type": "file", "mediaType": "image/jpeg", "url": "https://x/y.jpg"},
        {"type": "file", "mediaType": "application/pdf", "url": "data:application/pdf;base64,JVBE"},
        {"type": "file", "mediaType": "application/pdf", "url": "https://x/y.pdf", "filename": "y"},
        {"type": "file", "mediaType": "text/plain", "url": "data:,hello"},
        {"type": "file", "mediaType": "application/zip", "url": "https://x/y.zip"},
    ]
)
_REASONING_METADATA = st.sampled_from(
    [
        {"anthropic": {"signature": "sig"}},
        {"anthropic": {"redactedData": "opaque"}},
        {"openai": {"itemId": "rs_1"}},
        {"openai": {"itemId": "rs_2", "reasoningEncryptedContent": "enc"}},
    ]
)


@st.composite
def stored_conversations(draw: st.DrawFn) -> list[Message]:
    """``conversations()`` with system messages, user files and reasoning metadata mixed in."""
    messages: list[Message] = draw(conversations())
    for message in messages:
        if message["role"] == "user" and draw(st.booleans()):
            message["parts"] += draw(st.lists(_FILES, max_size=2))
        for part in message["parts"]:
            if part["type"] == "reasoning" and draw(st.booleans()):
                part["providerMetadata"] = draw(_REASONING_METADATA)
    for n in range(draw(st.integers(0, 2))):
        at = draw(st.integers(0, len(messages)))
        text = draw(short_texts)
        messages.insert(
            at, {"id": f"s{n}", "role": "system", "parts": [{"type": "text", "text": text}]}
        )
    return messages


# -- what the pairing rules say, computed independently -------------------------------------------


@dataclass(frozen=True)
class Expected:
    """The client calls a payload must carry, with their results, and the paused calls."""

    calls: list[str]
    results: dict[str, tuple[str, bool]]
    """call id → (result text, is an error)."""
    paused: list[str]


def _is_tool(part: Message) -> bool:
    kind: str = part["type"]
    return kind == "dynamic-tool" or kind.startswith("tool-")


def _result(part: Message) -> tuple[str, bool] | None:
    state, approval = part["state"], part.get("approval") or {}
    if state == "output-denied" or (
        state == "approval-responded" and approval.get("approved") is False
    ):
        reason = approval.get("reason")
        return (reason if isinstance(reason, str) and reason.strip() else DENIED_TEXT, True)
    if state == "output-error":
        return (part.get("errorText", ERROR_TEXT), True)
    if state == "output-available" and part.get("preliminary") is not True:
        output = part.get("output")
        text = (
            output
            if isinstance(output, str)
            else json.dumps(output, ensure_ascii=False, separators=(",", ":"))
        )
        return (text, False)
    return None


def expected(messages: list[Message]) -> Expected:
    talk = [i for i, m in enumerate(messages) if m["role"] != "system"]
    final = talk[-1] if talk and messages[talk[-1]]["role"] == "assistant" else None
    calls: list[str] = []
    results: dict[str, tuple[str, bool]] = {}
    paused: list[str] = []
    for index, message in enumerate(messages):
        if message["role"] != "assistant":
            continue
        for part in message["parts"]:
            if not _is_tool(part) or part.get("providerExecuted") is True:
                continue
            result = _result(part)
            if result is None and index == final:
                paused.append(part["toolCallId"])
                continue
            calls.append(part["toolCallId"])
            results[part["toolCallId"]] = result or (INTERRUPTED_TEXT, True)
    return Expected(calls, results, paused)


# -- reading the pairs back out of each format ----------------------------------------------------


def anthropic_pairs(payload: dict[str, Any]) -> list[tuple[str, str, bool]]:
    """(call id, result text, is_error) in order; fails unless each result follows its call."""
    messages = payload["messages"]
    pairs: list[tuple[str, str, bool]] = []
    for index, message in enumerate(messages):
        assert message["content"], f"empty message {index}"
        if index:
            assert message["role"] != messages[index - 1]["role"], "roles must alternate"
        blocks = message["content"]
        if message["role"] == "user":
            results = [b for b in blocks if b["type"] == "tool_result"]
            previous = messages[index - 1]["content"] if index else []
            calls = [b["id"] for b in previous if b["type"] == "tool_use"]
            assert [b["tool_use_id"] for b in results] == calls, "results must answer the calls"
            assert blocks[: len(results)] == results, "tool results come first in the message"
            pairs += [(b["tool_use_id"], b["content"], b.get("is_error", False)) for b in results]
        else:
            calls = [b["id"] for b in blocks if b["type"] == "tool_use"]
            if calls:
                assert index + 1 < len(messages), f"tool_use {calls} in the last message"
    return pairs


def chat_pairs(messages: list[Message]) -> list[tuple[str, str, bool]]:
    pairs: list[tuple[str, str, bool]] = []
    index = 0
    while index < len(messages):
        message = messages[index]
        assert message["role"] != "tool", f"a tool message without its call at {index}"
        index += 1
        calls = [call["id"] for call in message.get("tool_calls", [])]
        answers = messages[index : index + len(calls)]
        assert [m.get("role") for m in answers] == ["tool"] * len(calls)
        assert [m["tool_call_id"] for m in answers] == calls
        pairs += [(m["tool_call_id"], m["content"], False) for m in answers]
        index += len(calls)
    return pairs


def responses_pairs(items: list[Message]) -> list[tuple[str, str, bool]]:
    pairs: list[tuple[str, str, bool]] = []
    index = 0
    while index < len(items):
        assert items[index].get("type") != "function_call_output", (
            f"an output without its call at {index}"
        )
        run: list[str] = []
        while index < len(items) and items[index].get("type") == "function_call":
            run.append(items[index]["call_id"])
            index += 1
        if not run:
            index += 1
            continue
        outputs = items[index : index + len(run)]
        assert [i.get("type") for i in outputs] == ["function_call_output"] * len(run)
        assert [i["call_id"] for i in outputs] == run
        pairs += [(i["call_id"], i["output"], False) for i in outputs]
        index += len(run)
    return pairs


def check(format: Format, payload: Any) -> list[tuple[str, str, bool]]:
    """Validate ``payload`` strictly against the SDK types and return its (call, result) pairs."""
    if format == "anthropic":
        validate_anthropic(payload)
        return anthropic_pairs(payload)
    if format == "openai-chat":
        validate_openai_chat(payload)
        return chat_pairs(payload)
    validate_openai_responses(payload)
    return responses_pairs(payload)


# -- the property ---------------------------------------------------------------------------------


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(messages=stored_conversations())
def test_every_tool_call_is_paired_with_exactly_one_result_in_the_next_message(
    messages: list[Message],
) -> None:
    want = expected(messages)
    event("final message paused" if want.paused else "no paused call")
    kinds = {
        "interrupted" if t == INTERRUPTED_TEXT else "error" if e else "output"
        for t, e in want.results.values()
    }
    for kind in sorted(kinds):
        event(f"has a result: {kind}")
    for format in FORMATS:
        omitted = to_model_messages(messages, format, unanswered="omit")
        pairs = check(format, omitted)

        assert [call for call, _, _ in pairs] == want.calls
        for call, text, is_error in pairs:
            want_text, want_error = want.results[call]
            assert text == want_text, (format, call)
            if format == "anthropic":
                assert is_error == want_error, (format, call)

        if want.paused:
            with pytest.raises(UnansweredToolCallError) as raised:
                to_model_messages(messages, format)
            assert raised.value.tool_call_ids == want.paused
        else:
            assert to_model_messages(messages, format) == omitted
