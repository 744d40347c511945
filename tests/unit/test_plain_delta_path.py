"""The common chunk's fast path (``OpenStream.receive_plain_delta``) agrees with the general path.

Random streams of chunks, valid and not (deltas for unknown or ended parts,
non-ASCII and control characters, lone surrogates, chunks over the chunk or
message limit, extra keys, replays of tool calls), go into two copies of one
conversation: through ``Conversation.receive`` (which takes the fast path
whenever it can) and through ``Conversation.receive_checked`` (the general
path alone). Verdicts, refusals, the state after every chunk and the events
recorded must be the same.
"""

from __future__ import annotations

import time
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from chatledger.domain.aggregate import Conversation, ReceivedChunk
from chatledger.domain.limits import Limits
from chatledger.domain.open_stream import OpenStream

PART_IDS = ["t1", "t2", "r1", "é", "x\x01", "\udc00"]
CALL_IDS = ["call_1", "call_2"]

ascii_text = st.text(st.characters(min_codepoint=0, max_codepoint=127), max_size=40)
deltas = st.one_of(
    ascii_text,
    ascii_text.map(lambda text: text * 8),  # long: over small chunk and message limits
    st.integers(0, 400).map(lambda n: "\x01" * n),  # 6 bytes of JSON per character
    st.text(max_size=20),  # non-ASCII
    st.text(max_size=20).map(lambda text: text + "\ud800" + text),  # a lone surrogate
)


def _delta(kind: str) -> st.SearchStrategy[dict[str, Any]]:
    return st.builds(
        lambda part_id, delta: {"type": kind, "id": part_id, "delta": delta},
        st.sampled_from(PART_IDS),
        deltas,
    )


def _start_or_end(kind: str) -> st.SearchStrategy[dict[str, Any]]:
    return st.sampled_from(PART_IDS).map(lambda part_id: {"type": kind, "id": part_id})


def _tool_input(call: str, tool: str) -> dict[str, Any]:
    return {"type": "tool-input-available", "toolCallId": call, "toolName": tool, "input": {}}


odd_deltas = st.one_of(
    # an extra key, a value of the wrong type, a missing key, a type that is not a string
    _delta("text-delta").map(lambda c: {**c, "providerMetadata": {"p": {"k": 1}}}),
    _delta("text-delta").map(lambda c: {**c, "delta": 7}),
    _delta("reasoning-delta").map(lambda c: {**c, "id": None}),
    _delta("text-delta").map(lambda c: {"type": "text-delta", "id": c["id"], "text": c["delta"]}),
    _delta("text-delta").map(lambda c: {**c, "type": ["text-delta"]}),
    _delta("text-delta").map(lambda c: [c]),
    st.just({"type": "tool-input-delta", "toolCallId": "call_1", "inputTextDelta": '{"a'}),
)

single = st.one_of(
    _delta("text-delta"),
    _delta("reasoning-delta"),
    _start_or_end("text-start"),
    _start_or_end("reasoning-start"),
    _start_or_end("text-end"),
    _start_or_end("reasoning-end"),
    st.sampled_from(
        [{"type": "start-step"}, {"type": "finish-step"}, {"type": "reset-step"}, {"type": "x"}]
    ),
    st.builds(_tool_input, st.sampled_from(CALL_IDS), st.sampled_from(["search", "rm"])),
    odd_deltas,
)


@st.composite
def _part_run(draw: st.DrawFn) -> list[Any]:
    """A part opened, then deltas for it (most of them plain), as a model streams them."""
    kind = draw(st.sampled_from(["text", "reasoning"]))
    part_id = draw(st.sampled_from(PART_IDS))
    run: list[Any] = [{"type": f"{kind}-start", "id": part_id}]
    for _ in range(draw(st.integers(0, 8))):
        delta = draw(deltas)
        run.append(draw(st.just({"type": f"{kind}-delta", "id": part_id, "delta": delta}) | single))
    return run


chunks = st.lists(st.one_of(single.map(lambda chunk: [chunk]), _part_run()), max_size=8).map(
    lambda runs: [chunk for run in runs for chunk in run]
)

limits = st.one_of(
    st.just(Limits()),
    st.integers(40, 3000).map(lambda most: Limits(max_chunk_bytes=most)),
    st.integers(100, 1000).map(lambda most: Limits(max_message_bytes=most)),
    st.builds(
        lambda chunk, message: Limits(max_chunk_bytes=chunk, max_message_bytes=message),
        st.integers(40, 3000),
        st.integers(100, 3000),
    ),
)
OPEN = {"type": "text-start", "id": "t1"}


def _text(delta: str) -> dict[str, Any]:
    return {"type": "text-delta", "id": "t1", "delta": delta}


def _opened(ai_sdk: int) -> tuple[Conversation, Conversation]:
    """Two copies of a conversation with a stream open (built from the same events)."""
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
    return copies[0], copies[1]


def _outcome(received: ReceivedChunk) -> tuple[Any, ...]:
    error = received.error
    shown = None if error is None else (type(error), error.reason, error.position)
    return received.position, received.verdict, shown


def _state(conversation: Conversation) -> Any:
    stream = conversation.state.stream
    retractions = dict(stream.retractions) if stream is not None else None
    return conversation.state.to_json(), retractions


def _buffered(conversation: Conversation) -> list[tuple[Any, ...]]:
    return [(chunk, verdict, refusal) for chunk, _arrived, verdict, refusal in conversation.buffer]


def _recorded(conversation: Conversation) -> list[tuple[str, dict[str, Any]]]:
    return [
        (type(event).__name__, event.model_dump(exclude={"timestamp", "ages_ms"}))
        for event in conversation.collect_events()
    ]


@settings(max_examples=600, deadline=None)
@example(ai_sdk=6, limits=Limits(max_chunk_bytes=1000), stream=[OPEN, _text("\x01" * 500)])
@example(ai_sdk=6, limits=Limits(max_message_bytes=300), stream=[OPEN] + [_text("a" * 60)] * 6)
@example(ai_sdk=7, limits=Limits(), stream=[OPEN, _text("a\ud800"), _text("\u00e9\U0001f600")])
@given(
    ai_sdk=st.sampled_from([6, 7]),
    limits=limits,
    stream=chunks,
)
def test_the_fast_path_gives_what_the_general_path_gives(
    ai_sdk: int, limits: Limits, stream: list[Any]
) -> None:
    """Same verdict, refusal and state after every chunk, and the same events recorded."""
    fast, general = _opened(ai_sdk)
    for chunk in stream:
        got = fast.receive("s1", chunk, limits=limits)
        want = general.receive_checked("s1", chunk, limits=limits)
        assert _outcome(got) == _outcome(want), chunk
        assert _state(fast) == _state(general), chunk
    assert _buffered(fast) == _buffered(general)
    for conversation in (fast, general):
        conversation.close_stream("s1", "finished", None, actor="bot")
    assert _recorded(fast) == _recorded(general)


@settings(max_examples=200, deadline=None)
@given(limits=limits, stream=chunks)
def test_events_recorded_after_the_fast_path_replay_to_the_live_state(
    limits: Limits, stream: list[Any]
) -> None:
    """Loading the log gives what the writer held live (positions, sizes, the message)."""
    live = Conversation.start("acme", "chat", actor="user:alice", ai_sdk=7)
    live.open_stream("s1", "a1", continuation=False, trigger="submit-message", actor="bot")
    for index, chunk in enumerate(stream):
        live.receive("s1", chunk, limits=limits)
        if index % 7 == 6:
            live.flush()
    live.flush()
    replayed: Any = None
    for event in live.collect_events():
        replayed = event.mutate(replayed)
    assert replayed.state.to_json() == live.state.to_json()


def test_a_delta_of_escaped_characters_is_measured_as_its_json() -> None:
    """A delta of control characters is six bytes of JSON each: over the chunk limit, it is refused."""
    fast, _ = _opened(6)
    fast.receive("s1", {"type": "text-start", "id": "t1"}, limits=Limits())
    limits = Limits(max_chunk_bytes=1000)
    received = fast.receive(
        "s1", {"type": "text-delta", "id": "t1", "delta": "\x01" * 500}, limits=limits
    )
    assert received.error is not None and "over the limit of 1000 bytes" in received.error.reason
    assert (
        fast.receive(
            "s1", {"type": "text-delta", "id": "t1", "delta": "a" * 500}, limits=limits
        ).error
        is None
    )


def test_plain_deltas_take_the_fast_path() -> None:
    """The common chunk is taken by ``receive_plain_delta`` (else the property above proves nothing)."""
    fast, _ = _opened(6)
    fast.receive("s1", {"type": "text-start", "id": "t1"}, limits=Limits())
    stream = fast.state.stream
    assert isinstance(stream, OpenStream)
    chunk = {"type": "text-delta", "id": "t1", "delta": "hello"}
    assert stream.receive_plain_delta(chunk, Limits()) == 1
    assert stream.receive_plain_delta({**chunk, "id": "t2"}, Limits()) is None
    assert fast.state.messages[-1]["parts"][-1]["text"] == "hello"
    started = time.time()
    assert fast.receive("s1", chunk, limits=Limits()).position == 2
    assert fast.buffer[-1][1] >= started
