"""chatledger's ``ai-sdk`` converter is JSON-equal to the real ``convertToModelMessages`` (docs/behaviour.md §6).

(a) a conversation around every corpus case's folded message, (b) generated
conversations with parts in every state and shape, (c) odd, hand-written
messages where the SDK's JavaScript shows through (or throws); each with and
without ``ignoreIncompleteToolCalls``. Where the SDK throws, we raise
``MessageConversionError``.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatledger.domain.convert.ai_sdk import convert
from chatledger.domain.errors import MessageConversionError
from chatledger.domain.whole_stream import fold_stream
from tests.conformance import corpus
from tests.conformance.checks import assert_json_equal
from tests.conformance.messages import conversations
from tests.conformance.values import json_values, provider_metadata, short_texts
from tests.support.oracle import Oracle

pytestmark = pytest.mark.oracle

Message = dict[str, Any]
OPTIONS = (False, True)

CASES = corpus.load() + corpus.load("INBAND_ERRORS")
SYSTEM = {"id": "sys", "role": "system", "parts": [{"type": "text", "text": "Be brief."}]}
QUESTION = {"id": "q", "role": "user", "parts": [{"type": "text", "text": "Go on."}]}


def _oracle_case(messages: list[Message], ignore: bool) -> dict[str, Any]:
    options = {"ignoreIncompleteToolCalls": True} if ignore else {}
    return {"op": "convert", "messages": messages, "options": options}


def _scribble(value: Any) -> None:
    """Change every object and array in ``value`` (to prove the input shares none of them)."""
    if isinstance(value, dict):
        for item in value.values():
            _scribble(item)
        value["scribbled"] = True
    elif isinstance(value, list):
        for item in value:
            _scribble(item)
        value.append("scribbled")


def assert_converts_like_the_sdk(
    messages: list[Message], ignore: bool, answer: dict[str, Any]
) -> None:
    """``convert`` gives the SDK's model messages (or raises where it threw); input untouched."""
    before = copy.deepcopy(messages)
    what = f"convert(ignore_incomplete_tool_calls={ignore}) of {json.dumps(messages)[:1500]}"
    if answer["ok"]:
        got = convert(messages, ignore_incomplete_tool_calls=ignore)
        assert_json_equal(got, answer["modelMessages"], what)
        _scribble(got)
    else:
        with pytest.raises(MessageConversionError):
            convert(messages, ignore_incomplete_tool_calls=ignore)
    assert messages == before, f"{what}: the input messages were changed"


def assert_all_convert_like_the_sdk(oracle: Oracle, batch: list[list[Message]]) -> None:
    """Every conversation of ``batch``, with and without the option, in one oracle round trip."""
    requests = [(messages, ignore) for messages in batch for ignore in OPTIONS]
    answers = oracle.run_many([_oracle_case(messages, ignore) for messages, ignore in requests])
    for (messages, ignore), answer in zip(requests, answers, strict=True):
        assert_converts_like_the_sdk(messages, ignore, answer)


# -- (a) the corpus ---------------------------------------------------------------------------


def _corpus_conversation(case: corpus.Case) -> list[Message]:
    """System prompt, a question, the case folded by chatledger, and a follow-up question."""
    answer = fold_stream(case.chunks, case.message)
    return [SYSTEM, {**QUESTION, "id": "q0"}, answer, QUESTION]


@pytest.fixture(scope="module")
def sdk_corpus(oracle: Oracle) -> dict[tuple[str, bool], dict[str, Any]]:
    """The SDK's conversion of every corpus conversation, both ways, in one round trip."""
    keys = [(str(case), ignore) for case in CASES for ignore in OPTIONS]
    answers = oracle.run_many(
        [_oracle_case(_corpus_conversation(case), ignore) for case in CASES for ignore in OPTIONS]
    )
    return dict(zip(keys, answers, strict=True))


@pytest.mark.parametrize("ignore", OPTIONS, ids=["all", "ignore-incomplete"])
@pytest.mark.parametrize("case", CASES, ids=str)
def test_corpus_conversation_converts_like_the_sdk(
    case: corpus.Case, ignore: bool, sdk_corpus: dict[tuple[str, bool], dict[str, Any]]
) -> None:
    """Each corpus case, folded and put in a conversation, converts to the SDK's model messages."""
    answer = sdk_corpus[(str(case), ignore)]
    assert answer["ok"], answer
    assert_converts_like_the_sdk(_corpus_conversation(case), ignore, answer)


def test_all_corpus_messages_in_one_conversation_convert_like_the_sdk(oracle: Oracle) -> None:
    """Every folded corpus message, one after the other, after a question each."""
    messages = [SYSTEM]
    for n, case in enumerate(CASES):
        messages += [{**QUESTION, "id": f"q{n}"}, _corpus_conversation(case)[2]]
    assert_all_convert_like_the_sdk(oracle, [messages])


def _content_kinds(answers: list[dict[str, Any]]) -> set[str]:
    kinds = set()
    for answer in answers:
        for message in answer["modelMessages"]:
            content = message["content"]
            for item in content if isinstance(content, list) else []:
                kinds.add(item["type"])
                if item["type"] == "tool-result":
                    kinds.add(f"tool-result/{item['output']['type']}")
    return kinds


def test_corpus_conversions_cover_every_model_part(
    sdk_corpus: dict[tuple[str, bool], dict[str, Any]],
) -> None:
    """The corpus reaches every kind of model message part the converter writes."""
    expected = {
        "text",
        "reasoning",
        "file",
        "tool-call",
        "tool-approval-request",
        "tool-approval-response",
        "tool-result/json",
        "tool-result/text",
        "tool-result/error-text",
        "tool-result/error-json",
    }
    assert expected - _content_kinds(list(sdk_corpus.values())) == set()


# -- (b) generated conversations --------------------------------------------------------------

_metadata_or_null = st.one_of(st.none(), provider_metadata())


def _maybe(draw: st.DrawFn, key: str, strategy: st.SearchStrategy[Any]) -> dict[str, Any]:
    return {key: draw(strategy)} if draw(st.booleans()) else {}


def _one_in(draw: st.DrawFn, n: int) -> bool:
    """True about once in ``n`` draws (``integers() == 0`` would favour the bound)."""
    return draw(st.sampled_from([*[False] * (n - 1), True]))


@st.composite
def _approvals(draw: st.DrawFn, approval_id: str) -> dict[str, Any]:
    approval: dict[str, Any] = {"id": approval_id}
    approval |= _maybe(draw, "approved", st.sampled_from([True, False, None]))
    approval |= _maybe(draw, "reason", st.one_of(short_texts, st.none()))
    approval |= _maybe(draw, "inputSchemaInput", json_values(3))
    approval |= _maybe(draw, "signature", st.one_of(short_texts, st.none()))
    approval |= _maybe(draw, "descriptor", json_values(2))
    return approval


@st.composite
def _reshaped_tool_part(draw: st.DrawFn, part: Message) -> Message:
    """A tool part from ``conversations()`` with the shapes it does not draw itself."""
    state = part.get("state")
    if part["type"] == "dynamic-tool":
        part |= _maybe(draw, "dynamic", st.booleans())  # dynamic: false marks an unavailable tool
    if _one_in(draw, 4):  # an approval in any state, with every field
        part["approval"] = draw(_approvals(f"ap-{part['toolCallId']}"))
    elif "approval" in part and draw(st.booleans()):
        part["approval"] |= _maybe(draw, "inputSchemaInput", json_values(2))
        part["approval"] |= _maybe(draw, "signature", short_texts)
    part |= _maybe(draw, "resultProviderMetadata", provider_metadata())
    if state == "output-error" and draw(st.booleans()):  # an invalid call: raw input text
        del part["input"]
        part |= _maybe(draw, "input", st.none())
        part |= _maybe(draw, "rawInput", st.one_of(short_texts, st.none()))
    if state == "output-error" and _one_in(draw, 6):
        del part["errorText"]
    if state == "output-available" and _one_in(draw, 6):
        del part["output"]
    if _one_in(draw, 16):
        del part["state"]
    return part


def _files(media_type: str, url: str) -> st.SearchStrategy[Message]:
    required = {"type": st.just("file"), "mediaType": st.just(media_type), "url": st.just(url)}
    optional = {"filename": short_texts, "providerMetadata": provider_metadata()}
    return st.fixed_dictionaries(required, optional=optional)


_TEXTS = st.fixed_dictionaries(
    {"type": st.just("text"), "text": short_texts},
    optional={"providerMetadata": provider_metadata()},
)

_EXTRA_ASSISTANT_PARTS = st.one_of(
    _files("text/plain", "data:,x"),
    st.just({"type": "source-document", "sourceId": "d", "mediaType": "a/b", "title": "t"}),
    st.just({"type": "custom-kind", "value": 1}),
    st.just({"type": "step-start"}),
)


@st.composite
def _reshaped_part(draw: st.DrawFn, part: Message) -> Message:
    kind = part["type"]
    if kind in ("text", "file", "reasoning"):
        # null metadata: text and files drop it, reasoning passes it on as providerOptions: null
        part |= _maybe(draw, "providerMetadata", _metadata_or_null)
    elif kind == "dynamic-tool" or kind.startswith("tool-"):
        part = draw(_reshaped_tool_part(part))
    return part


@st.composite
def _assistant_parts(draw: st.DrawFn, parts: list[Message]) -> list[Message]:
    reshaped = [draw(_reshaped_part(part)) for part in parts]
    for _ in range(draw(st.integers(0, 2))):
        reshaped.insert(draw(st.integers(0, len(reshaped))), draw(_EXTRA_ASSISTANT_PARTS))
    return reshaped


_USER_PARTS = st.one_of(
    _TEXTS,
    _files("image/png", "https://x/y.png"),
    st.builds(lambda data: {"type": "data-note", "data": data}, json_values(2)),
    st.just({"type": "reasoning", "text": "hm", "state": "done"}),
    st.just({"type": "step-start"}),
    st.just({"type": "source-url", "sourceId": "s", "url": "https://x"}),
    st.just({"type": "tool-t", "toolCallId": "u-call", "state": "input-available", "input": {}}),
)

_SYSTEM_PARTS = st.one_of(
    _TEXTS,
    _files("image/png", "https://x/y.png"),
    st.just({"type": "data-x", "data": 1}),
)


def _system_messages(n: int) -> st.SearchStrategy[Message]:
    return st.builds(
        lambda parts: {"id": f"sys{n}", "role": "system", "parts": parts},
        st.lists(_SYSTEM_PARTS, max_size=3),
    )


@st.composite
def model_conversations(draw: st.DrawFn) -> list[Message]:
    """``conversations()`` plus system messages, user files and data, and every part shape.

    One in ten holds a message of a role the SDK refuses.
    """
    messages = copy.deepcopy(draw(conversations()))  # its st.just() parts are shared objects
    for message in messages:
        if message["role"] == "user":
            message["parts"] += draw(st.lists(_USER_PARTS, max_size=3))
        else:
            message["parts"] = draw(_assistant_parts(message["parts"]))
    for n in range(draw(st.integers(0, 2))):
        messages.insert(draw(st.integers(0, n)), draw(_system_messages(n)))
    if _one_in(draw, 10):
        role = draw(st.sampled_from(["tool", "developer", "System", "data"]))
        messages.insert(draw(st.integers(0, len(messages))), {**SYSTEM, "role": role})
    return messages


@settings(max_examples=100)
@given(batch=st.lists(model_conversations(), min_size=3, max_size=3))
def test_generated_conversations_convert_like_the_sdk(
    oracle: Oracle, batch: list[list[Message]]
) -> None:
    """Any conversation (three per example, each with and without the option) converts as the SDK does."""
    assert_all_convert_like_the_sdk(oracle, batch)


# -- (c) odd messages ---------------------------------------------------------------------------


def _assistant(*parts: Any) -> Message:
    return {"id": "a", "role": "assistant", "parts": list(parts)}


def _system_text(*texts: Any, metadata: Any = None) -> Message:
    parts = [{"type": "text", "text": text} for text in texts]
    if metadata is not None:
        parts[0]["providerMetadata"] = metadata
    return {"id": "s", "role": "system", "parts": parts}


def _failed_call(**fields: Any) -> Message:
    return {"type": "tool-t", "toolCallId": "c", "state": "output-error", **fields}


ODD_CONVERSATIONS: dict[str, list[Any]] = {
    "assistant_without_parts": [{"id": "a", "role": "assistant"}],
    "assistant_with_null_parts": [{"id": "a", "role": "assistant", "parts": None}],
    "assistant_with_empty_string_parts": [{"id": "a", "role": "assistant", "parts": ""}],
    "assistant_with_string_parts": [{"id": "a", "role": "assistant", "parts": "ab"}],
    "assistant_with_object_parts": [{"id": "a", "role": "assistant", "parts": {}}],
    "user_without_parts": [{"id": "u", "role": "user"}],
    "system_without_parts": [{"id": "s", "role": "system"}],
    "system_with_null_part": [{"id": "s", "role": "system", "parts": [None]}],
    "system_with_odd_parts": [{"id": "s", "role": "system", "parts": [1, "x", [], {}]}],
    "user_part_without_type": [{"id": "u", "role": "user", "parts": [{"text": "x"}]}],
    "assistant_part_with_numeric_type": [_assistant({"type": 7})],
    "null_message": [None],
    "message_without_role": [{"id": "m", "parts": []}],
    "system_text_numbers": [_system_text(1.5, 1e21, 1e-7, 2**60, -0.0, 123.456e-5, 1e300)],
    "system_text_huge_integers": [_system_text(10**400, -(10**30), 2**53 + 1)],
    "system_text_other_values": [_system_text(None, True, [1, [2, None]], {"a": 1}, "x")],
    "system_text_missing": [{"id": "s", "role": "system", "parts": [{"type": "text"}]}],
    "system_metadata_list": [_system_text("a", metadata=[{"x": 1}])],
    "system_metadata_string": [_system_text("a", metadata="ab\U0001f600")],
    "system_metadata_number": [_system_text("a", metadata=5)],
    "error_text_object": [_assistant(_failed_call(errorText={"b": 1, "10": 2, "2": [1.0, 1e21]}))],
    "error_text_escapes": [_assistant(_failed_call(errorText=["x\u0001\n\"\\", "\u2028é"]))],
    "error_text_number": [_assistant(_failed_call(errorText=1e-7))],
    "error_text_huge_integer": [_assistant(_failed_call(errorText=[10**400, 2**64]))],
    "error_text_missing": [_assistant(_failed_call())],
    "error_text_null_provider_executed": [
        _assistant(_failed_call(errorText=None, providerExecuted=True))
    ],
    "error_input_null_without_raw": [_assistant(_failed_call(input=None, errorText="e"))],
    "error_input_null_with_raw_null": [
        _assistant(_failed_call(input=None, rawInput=None, errorText="e"))
    ],
    "approval_as_string": [
        _assistant({"type": "tool-t", "toolCallId": "c", "state": "input-available", "approval": "x"})
    ],
    "approval_null_fields": [
        _assistant(
            {
                "type": "tool-t",
                "toolCallId": "c",
                "state": "approval-responded",
                "input": None,
                "approval": {"id": None, "approved": "yes", "reason": None, "inputSchemaInput": None,
                             "signature": None},
                "providerExecuted": None,
            }
        )
    ],
    "dynamic_tool_without_name": [
        _assistant({"type": "dynamic-tool", "toolCallId": "c", "state": "output-available"})
    ],
    "unavailable_dynamic_tool": [
        _assistant(
            {"type": "dynamic-tool", "toolName": "t", "toolCallId": "c", "dynamic": False,
             "state": "output-available", "input": {}, "output": "o"}
        )
    ],
    "tool_types_with_dashes": [
        _assistant(
            {"type": "tool-", "toolCallId": "c1", "state": "output-available", "output": 1},
            {"type": "tool-a-b-c", "toolCallId": "c2", "state": "output-available", "output": 2},
        )
    ],
    "tool_part_without_state": [_assistant({"type": "tool-t", "toolCallId": "c", "input": 1})],
    "tool_part_without_call_id": [_assistant({"type": "tool-t", "state": "output-denied"})],
    "preliminary_output": [
        _assistant(
            {"type": "tool-t", "toolCallId": "c", "state": "output-available", "input": {},
             "output": {"partial": True}, "preliminary": True}
        )
    ],
    "reasoning_metadata_null": [
        _assistant({"type": "reasoning", "text": "r", "providerMetadata": None}, {"type": "text"})
    ],
    "only_steps_and_sources": [
        _assistant({"type": "step-start"}, {"type": "source-url", "url": "u"}, {"type": "step-start"})
    ],
    "input_streaming_part_with_answered_approval": [
        _assistant(
            {"type": "tool-t", "toolCallId": "c", "state": "input-streaming",
             "approval": {"id": "ap", "approved": False, "reason": "no"}}
        )
    ],
}  # fmt: skip


@pytest.fixture(scope="module")
def sdk_odd(oracle: Oracle) -> dict[tuple[str, bool], dict[str, Any]]:
    """The SDK's answer for every odd conversation, both ways, in one round trip."""
    keys = [(name, ignore) for name in ODD_CONVERSATIONS for ignore in OPTIONS]
    answers = oracle.run_many(
        [_oracle_case(ODD_CONVERSATIONS[name], ignore) for name, ignore in keys]
    )
    return dict(zip(keys, answers, strict=True))


@pytest.mark.parametrize("ignore", OPTIONS, ids=["all", "ignore-incomplete"])
@pytest.mark.parametrize("name", ODD_CONVERSATIONS)
def test_odd_messages_convert_or_fail_like_the_sdk(
    name: str, ignore: bool, sdk_odd: dict[tuple[str, bool], dict[str, Any]]
) -> None:
    """Malformed or unusual messages give what the SDK's JavaScript gives, or an error where it throws."""
    assert_converts_like_the_sdk(ODD_CONVERSATIONS[name], ignore, sdk_odd[(name, ignore)])
