"""Decoding a UI-message stream sent as a request body: SSE events from pieces cut anywhere."""

from __future__ import annotations

import itertools
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatledger.adapters.http.sse_in import EventTooLargeError, SSEDecoder

CHUNKS = [
    {"type": "start", "messageId": "a1"},
    {"type": "text-delta", "id": "t", "delta": "héllo \u2603 wörld"},
    {"type": "finish"},
]
BODY = "".join(f"data: {json.dumps(c, ensure_ascii=False)}\n\n" for c in CHUNKS).encode()
BODY += b"data: [DONE]\n\n"


def _decode(pieces: list[bytes]) -> tuple[list[str], bool]:
    decoder = SSEDecoder(10_000)
    events = [event for piece in pieces for event in decoder.feed(piece)]
    return events + decoder.end(), decoder.done


@given(st.lists(st.integers(0, len(BODY)), max_size=20))
def test_pieces_cut_anywhere_give_the_same_events(cuts: list[int]) -> None:
    """Even inside a line or a UTF-8 character: each chunk once, in order, then done."""
    bounds = [0, *sorted(cuts), len(BODY)]
    pieces = [BODY[a:b] for a, b in itertools.pairwise(bounds)]
    events, done = _decode(pieces)
    assert [json.loads(e) for e in events] == CHUNKS
    assert done


def test_sse_framing_rules() -> None:
    """CRLF lines, comments, other fields, several data lines joined, nothing after [DONE]."""
    body = (
        b': keep-alive\r\n\r\nevent: x\r\nid: 3\r\ndata: {"a":\r\ndata: 1}\r\n\r\n'
        b'data:{"b": 2}\n\ndata: [DONE]\n\ndata: {"after": 1}\n\n'
    )
    events, done = _decode([body])
    assert events == ['{"a":\n1}', '{"b": 2}'] and done


def test_a_body_ending_without_a_blank_line_or_done() -> None:
    events, done = _decode([b'data: {"a": 1}\n\ndata: {"b": 2}'])
    assert events == ['{"a": 1}', '{"b": 2}'] and not done


def test_an_overlong_event_is_refused_before_it_is_held() -> None:
    decoder = SSEDecoder(100)
    with pytest.raises(EventTooLargeError):
        decoder.feed(b"data: " + b"x" * 200)  # no newline yet: still over the limit
    decoder = SSEDecoder(100)
    with pytest.raises(EventTooLargeError):
        for _ in range(5):
            decoder.feed(b"data: " + b"x" * 30 + b"\n")  # many data lines of one event
