"""The usual chunks' shortcut (``usual_chunks.usual_cost``) agrees with the general check.

Random streams of framing chunks (usual keys and odd ones, strings with
control characters, non-ASCII, lone surrogates, names too long, finish reasons
known and not, values that are not strings) and of bare deltas (text,
reasoning, tool input; valid and not) go into two copies of one conversation,
both through ``Conversation.receive``: one as the store runs it, one with the
shortcut turned off (``fold_checked`` then takes ``Limits.chunk_cost`` and
``check_chunk`` for every chunk). Verdicts, refusals (their class, reason and
position), the state after every chunk and the events recorded must be the
same; and wherever the shortcut gives a cost, the general check takes the
chunk at that cost.
"""

from __future__ import annotations

from typing import Any
from unittest import mock

from hypothesis import example, given, settings
from hypothesis import strategies as st

from chatledger.domain import stream_rules, usual_chunks
from chatledger.domain.aggregate import Conversation, ReceivedChunk
from chatledger.domain.chunks import check_chunk
from chatledger.domain.dialects import dialect_for
from chatledger.domain.errors import InvalidChunkError, OversizedChunkError
from chatledger.domain.limits import PART_ALLOWANCE, Limits, NotStorableError, json_size
from chatledger.domain.usual_chunks import usual_cost

strings = st.one_of(
    st.sampled_from(["t1", "t2", "a1", "a2", "u1", "call_1", "call_2", "stop", "tool-calls"]),
    st.text(st.characters(min_codepoint=0, max_codepoint=127), max_size=12),
    st.text(max_size=8),  # non-ASCII, lone surrogates
    st.integers(250, 300).map(lambda n: "m" * n),  # around the longest name
    st.just("\x01" * 90),  # six bytes of JSON a character
)
values = st.one_of(strings, strings, st.none(), st.integers(), st.just(["t1"]), st.just({}))
reasons = st.sampled_from(["stop", "length", "tool-calls", "error", "other", "interrupted", "x"])
keys = st.sampled_from(
    ["id", "messageId", "finishReason", "toolCallId", "toolName", "title", "delta", "__proto__"]
)


@st.composite
def framing(draw: st.DrawFn) -> dict[str, Any]:
    """A framing chunk, most often with its usual keys only."""
    kind = draw(st.sampled_from(sorted(usual_chunks._FRAMING)))
    chunk: dict[str, Any] = {"type": kind}
    if kind in ("text-start", "text-end", "reasoning-start", "reasoning-end"):
        chunk["id"] = draw(st.sampled_from(["t1", "t2"]) | strings)
    if kind == "tool-input-start":
        chunk["toolCallId"] = draw(st.sampled_from(["call_1", "call_2"]) | strings)
        chunk["toolName"] = draw(st.sampled_from(["search", "rm"]) | strings)
    if kind == "start" and draw(st.booleans()):
        chunk["messageId"] = draw(st.sampled_from(["a1", "a2", "u1"]) | strings)
    if kind == "finish" and draw(st.booleans()):
        chunk["finishReason"] = draw(reasons | strings)
    for _ in range(draw(st.integers(0, 2)) if draw(st.integers(0, 3)) == 0 else 0):
        chunk[draw(keys)] = draw(values)
    return chunk


@st.composite
def delta(draw: st.DrawFn) -> dict[str, Any]:
    """A bare delta of any kind, sometimes with a key too many, missing or of the wrong type."""
    kind, id_key, text_key = draw(
        st.sampled_from(
            [
                ("text-delta", "id", "delta"),
                ("reasoning-delta", "id", "delta"),
                ("tool-input-delta", "toolCallId", "inputTextDelta"),
            ]
        )
    )
    chunk: dict[str, Any] = {"type": kind, id_key: draw(strings), text_key: draw(strings)}
    odd = draw(st.integers(0, 5))
    if odd == 0:
        chunk[draw(keys)] = draw(values)
    elif odd == 1:
        chunk[draw(st.sampled_from([id_key, text_key]))] = draw(values)
    elif odd == 2:
        del chunk[id_key]
    return chunk


def _tool_start(call: str) -> dict[str, Any]:
    return {"type": "tool-input-start", "toolCallId": call, "toolName": "search"}


chunk = st.one_of(
    framing(),
    framing(),
    delta(),
    st.sampled_from(["call_1", "call_2"]).map(_tool_start),
    st.sampled_from([{"type": "reasoning-start", "id": "t1"}, ["start"], {"type": 3}]),
)
limits = st.one_of(
    st.just(Limits()),
    st.integers(30, 400).map(lambda most: Limits(max_chunk_bytes=most)),
    st.integers(100, 600).map(lambda most: Limits(max_message_bytes=most)),
    st.just(Limits(max_depth=0)),
)


def _opened(ai_sdk: int) -> tuple[Conversation, Conversation, list[Any]]:
    """Two copies of a conversation with a stream open, and the events they were built from."""
    recorder = Conversation.start("acme", "chat", actor="user:alice", ai_sdk=ai_sdk)
    message = {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "hi"}]}
    recorder.append_message(message, actor="user:alice", limits=Limits())
    recorder.open_stream("s1", "a1", continuation=False, trigger="submit-message", actor="bot")
    events = recorder.collect_events()
    copies = []
    for _ in range(2):
        conversation: Any = None
        for event in events:
            conversation = event.mutate(conversation)
        copies.append(conversation)
    return copies[0], copies[1], list(events)


def _outcome(received: ReceivedChunk) -> tuple[Any, ...]:
    error = received.error
    shown = None if error is None else (type(error), error.reason, error.position, error.chunk_type)
    return received.position, received.verdict, shown


def _general(conversation: Conversation, chunk: Any, limits: Limits) -> ReceivedChunk:
    """``receive`` with the shortcut turned off: the general check for every chunk."""
    with mock.patch.object(stream_rules, "usual_cost", lambda *_: None):
        return conversation.receive("s1", chunk, limits=limits)


def _shown(events: list[Any]) -> list[tuple[str, dict[str, Any]]]:
    return [
        (type(event).__name__, event.model_dump(exclude={"timestamp", "ages_ms"}))
        for event in events
    ]


@settings(max_examples=800, deadline=None)
@example(ai_sdk=6, limits=Limits(), forget=True, stream=[{"type": "finish", "finishReason": "x"}])
@example(ai_sdk=6, limits=Limits(), forget=True, stream=[{"type": "start", "messageId": "u1"}])
@example(
    ai_sdk=7,
    limits=Limits(max_chunk_bytes=40),
    forget=False,
    stream=[{"type": "text-start", "id": "t" * 30}],
)
@given(
    ai_sdk=st.sampled_from([6, 7]),
    limits=limits,
    forget=st.booleans(),
    stream=st.lists(chunk, max_size=12),
)
def test_the_shortcut_gives_what_the_general_check_gives(
    ai_sdk: int, limits: Limits, forget: bool, stream: list[Any]
) -> None:
    """Same verdict, refusal and state after every chunk, the same events recorded, and
    those events replay to the live state."""
    if forget:
        usual_chunks._accepted.clear()  # the models see each shape again
    fast, general, opened = _opened(ai_sdk)
    for item in stream:
        got = fast.receive("s1", item, limits=limits)
        want = _general(general, item, limits)
        assert _outcome(got) == _outcome(want), item
        assert fast.state.to_json() == general.state.to_json(), item
    for conversation in (fast, general):
        conversation.close_stream("s1", "finished", None, actor="bot")
    recorded = list(fast.collect_events())
    assert _shown(recorded) == _shown(list(general.collect_events()))
    replayed: Any = None
    for event in [*opened, *recorded]:
        replayed = event.mutate(replayed)
    assert replayed.state.to_json() == fast.state.to_json()


@settings(max_examples=1500, deadline=None)
@given(ai_sdk=st.sampled_from([6, 7]), limits=limits, item=chunk)
def test_a_cost_from_the_shortcut_is_the_general_checks(
    ai_sdk: int, limits: Limits, item: Any
) -> None:
    """Wherever the shortcut vouches for a chunk, ``chunk_cost`` and ``check_chunk`` take it at that cost."""
    dialect = dialect_for(ai_sdk)
    got = usual_cost(item, dialect, limits)
    if got is None:
        return
    assert got == limits.chunk_cost(item)
    check_chunk(item, dialect)


def test_the_usual_chunks_take_the_shortcut() -> None:
    """A turn's framing chunks and bare deltas get a cost (else the properties above prove little)."""
    dialect = dialect_for(6)
    usual = [
        {"type": "start", "messageId": "a-0001-003"},
        {"type": "start-step"},
        {"type": "text-start", "id": "txt-3"},
        {"type": "text-end", "id": "txt-3"},
        {"type": "finish-step"},
        {"type": "finish", "finishReason": "stop"},
        {"type": "finish"},
        {"type": "tool-input-start", "toolCallId": "call_1", "toolName": "search_docs"},
        {"type": "tool-input-delta", "toolCallId": "call_1", "inputTextDelta": '{"query": "'},
        {"type": "text-delta", "id": "txt-3", "delta": " d\u00e9j\u00e0"},
    ]
    for item in usual:
        assert usual_cost(item, dialect, Limits()) == Limits().chunk_cost(item), item
    refused = {"type": "finish", "finishReason": "tired"}
    assert usual_cost(refused, dialect, Limits()) is None
    try:
        check_chunk(refused, dialect)
    except InvalidChunkError:
        pass
    else:
        raise AssertionError("the models take a finish reason they do not know")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=12,
)


@settings(max_examples=400, deadline=None)
@given(
    output=json_values,
    most_output=st.integers(1, 200),
    most_chunk=st.integers(40, 400),
    depth=st.integers(1, 4),
)
def test_a_tool_output_within_its_chunk_is_checked_once(
    output: Any, most_output: int, most_chunk: int, depth: int
) -> None:
    """``chunk_cost`` skips the output's own check only where that check cannot refuse it."""
    limits = Limits(max_chunk_bytes=most_chunk, max_tool_output_bytes=most_output, max_depth=depth)
    item = {"type": "tool-output-available", "toolCallId": "call_1", "output": output}

    def outcome(check: Any) -> Any:
        try:
            return check()
        except InvalidChunkError as error:
            return type(error), error.reason

    def reference() -> int:  # chunk_cost as it was: the output checked on its own, always
        try:
            size = json_size(item, max_depth=depth)
        except NotStorableError as error:
            raise InvalidChunkError(error.args[0], chunk_type=item["type"]) from None
        if size > most_chunk:
            raise OversizedChunkError("chunk", size, most_chunk, chunk_type=item["type"])
        limits.check_tool_output(output, tool_call_id="call_1", chunk_type=item["type"])
        return size + PART_ALLOWANCE

    assert outcome(lambda: limits.chunk_cost(item)) == outcome(reference)
