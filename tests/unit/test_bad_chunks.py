"""docs/behaviour.md §3.4: every bad chunk is refused with a clear error, changes nothing; the stream goes on."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from chatledger import (
    ConversationStore,
    InvalidChunkError,
    Limits,
    OversizedChunkError,
    OversizedInputError,
    UnknownToolCallChunkError,
    Verdict,
)
from chatledger.domain.events import ChunksReceived
from tests.support.ledger import as_json, stored_events, stored_records

EARLIER_TURN = [
    {"type": "start", "messageId": "m1"},
    {"type": "tool-input-available", "toolCallId": "c1", "toolName": "search", "input": {"q": "x"}},
    {"type": "tool-output-available", "toolCallId": "c1", "output": {"hits": 3}},
    {"type": "finish"},
]


class OpenStream:
    """A past turn (tool call ``c1``) and an open stream that wrote ``Hello`` (positions 0, 1)."""

    def __init__(self, limits: Limits | None = None) -> None:
        self.store = ConversationStore.open(
            "memory://", limits=limits, batch_chunks=1000, batch_ms=600_000
        )
        # The refusals of AI SDK 6 (v7 keeps text open across finish-step: its own suite).
        self.store.start_conversation("chat", ai_sdk=6)
        self.store.append_message(
            "chat", {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "hi"}]}
        )
        self.store.ingest("chat", copy.deepcopy(EARLIER_TURN))
        self.store.append_message(
            "chat", {"id": "u2", "role": "user", "parts": [{"type": "text", "text": "more"}]}
        )
        self.writer = self.store.open_stream("chat", message_id="m2")
        for chunk in (
            {"type": "text-start", "id": "t"},
            {"type": "text-delta", "id": "t", "delta": "Hello"},
        ):
            assert self.writer.append(chunk).verdict is Verdict.APPLIED
        self.writer.flush()

    def prepare(self, *chunks: dict[str, Any]) -> None:
        """Append valid chunks first (they take the next positions) and commit them."""
        for chunk in chunks:
            assert self.writer.append(chunk).verdict is Verdict.APPLIED, chunk
        self.writer.flush()

    def refuse(self, chunk: Any) -> InvalidChunkError:
        """Append ``chunk``: refused without a trace, the next chunk applies; return the error."""
        records = stored_records(self.store, "chat")
        messages = as_json(self.store.messages("chat"))
        folded = as_json(self.writer.conversation.state.messages)
        position = self.writer.conversation.state.stream.next_seq  # type: ignore[union-attr]

        received = self.writer.append(chunk)
        assert received.verdict is Verdict.REFUSED, received
        error = received.error
        assert isinstance(error, InvalidChunkError)
        assert received.position == error.position == position
        assert as_json(self.writer.conversation.state.messages) == folded, (
            "the refused chunk was folded"
        )

        self.writer.flush()
        assert stored_records(self.store, "chat")[: len(records)] == records, (
            "an earlier stored event changed"
        )
        assert as_json(self.store.messages("chat")) == messages, (
            "the refused chunk changed the stored messages"
        )
        last = stored_events(self.store, "chat")[-1]
        assert isinstance(last, ChunksReceived) and last.refusals == [(0, error.reason)], (
            "the refused chunk is kept in the log, with its reason, for the audit"
        )

        after = self.writer.append({"type": "data-next", "data": {"n": 1}})
        assert (after.verdict, after.position) == (Verdict.APPLIED, position + 1)
        self.writer.close()
        assert self.store.messages("chat")[-1]["parts"][-1] == {
            "type": "data-next",
            "data": {"n": 1},
        }
        return error


def assert_names(
    error: InvalidChunkError, chunk_type: str, *reason: str, position: int = 2
) -> None:
    """The error names the chunk type, its position and the reason."""
    assert error.chunk_type == chunk_type
    assert error.position == position
    text = str(error)
    assert f"'{chunk_type}' chunk at position {position} refused" in text, text
    for words in reason:
        assert words in text, text
        assert words in error.reason


def test_an_unknown_chunk_type_is_refused() -> None:
    """A ``type`` the AI SDK does not define is refused, naming the type."""
    error = OpenStream().refuse({"type": "text-delta-v2", "id": "t", "delta": "x"})
    assert type(error) is InvalidChunkError
    assert_names(error, "text-delta-v2", "unknown chunk type", "text-delta-v2")


@pytest.mark.parametrize(
    ("chunk", "field"),
    [
        ({"type": "text-delta", "id": "t"}, "delta"),
        ({"type": "tool-input-available", "toolCallId": "c9", "toolName": "search"}, "input"),
        ({"type": "tool-output-available", "toolCallId": "c1"}, "output"),
        ({"type": "data-weather", "id": "w"}, "data"),
    ],
)
def test_a_chunk_missing_a_required_field_is_refused(chunk: dict[str, Any], field: str) -> None:
    """A chunk without a field its type requires is refused, naming the field."""
    error = OpenStream().refuse(chunk)
    assert type(error) is InvalidChunkError
    assert_names(error, chunk["type"], "missing required field", repr(field))


@pytest.mark.parametrize(
    ("chunk", "field"),
    [
        ({"type": "text-delta", "id": "t", "delta": 42}, "delta"),
        ({"type": "text-delta", "id": ["t"], "delta": "x"}, "id"),
        ({"type": "tool-input-start", "toolCallId": "c9", "toolName": None}, "toolName"),
        ({"type": "finish", "finishReason": "done"}, "finishReason"),
    ],
)
def test_a_chunk_with_a_field_of_the_wrong_type_is_refused(
    chunk: dict[str, Any], field: str
) -> None:
    """A field holding the wrong kind of value is refused, naming the field."""
    error = OpenStream().refuse(chunk)
    assert type(error) is InvalidChunkError
    assert_names(error, chunk["type"], f"field {field!r}")


@pytest.mark.parametrize(
    "before",
    [
        pytest.param([], id="never-opened"),
        pytest.param(
            [{"type": "text-start", "id": "x"}, {"type": "text-end", "id": "x"}], id="already-ended"
        ),
        pytest.param(
            [{"type": "text-start", "id": "x"}, {"type": "finish-step"}], id="closed-by-finish-step"
        ),
    ],
)
def test_a_text_delta_for_a_part_that_is_not_open_is_refused(before: list[dict[str, Any]]) -> None:
    """A text delta for an id with no open text part is refused, naming the id."""
    stream = OpenStream()
    stream.prepare(*before)
    error = stream.refuse({"type": "text-delta", "id": "x", "delta": "lost"})
    assert type(error) is InvalidChunkError
    assert_names(error, "text-delta", "no open text part", "'x'", position=2 + len(before))


def test_a_reasoning_delta_for_a_part_that_is_not_open_is_refused() -> None:
    """A reasoning delta for an id with no open reasoning part is refused, naming the id."""
    error = OpenStream().refuse({"type": "reasoning-delta", "id": "r", "delta": "hmm"})
    assert type(error) is InvalidChunkError
    assert_names(error, "reasoning-delta", "no open reasoning part", "'r'")


def test_a_text_end_for_a_part_that_is_not_open_is_refused() -> None:
    """Closing a text part that is not open is refused too."""
    error = OpenStream().refuse({"type": "text-end", "id": "ghost"})
    assert_names(error, "text-end", "no open text part", "'ghost'")


@pytest.mark.parametrize(
    "chunk",
    [
        {"type": "tool-output-available", "toolCallId": "c-ghost", "output": {"ok": True}},
        {"type": "tool-output-error", "toolCallId": "c-ghost", "errorText": "failed"},
        {"type": "tool-output-denied", "toolCallId": "c-ghost"},
        {"type": "tool-approval-request", "approvalId": "ap1", "toolCallId": "c-ghost"},
    ],
    ids=lambda chunk: chunk["type"],
)
def test_an_output_for_a_tool_call_the_conversation_never_saw_is_refused(
    chunk: dict[str, Any],
) -> None:
    """A result or approval request for an unknown toolCallId is refused, naming the id."""
    error = OpenStream().refuse(chunk)
    assert type(error) is UnknownToolCallChunkError
    assert error.tool_call_id == "c-ghost"
    assert_names(error, chunk["type"], "'c-ghost'")


def test_a_start_naming_another_message_after_content_is_refused() -> None:
    """After content, a ``start`` naming a different message id is refused, naming both ids."""
    error = OpenStream().refuse({"type": "start", "messageId": "m-other"})
    assert type(error) is InvalidChunkError
    assert_names(error, "start", "'m-other'", "'m2'")


def test_an_oversized_chunk_is_refused() -> None:
    """A chunk larger than ``Limits.max_chunk_bytes`` is refused, naming its size and the limit."""
    error = OpenStream(Limits(max_chunk_bytes=200)).refuse(
        {"type": "text-delta", "id": "t", "delta": "x" * 500}
    )
    assert type(error) is OversizedChunkError
    assert (error.what, error.limit) == ("chunk", 200)
    assert error.size > 500
    assert_names(error, "text-delta", f"chunk is {error.size} bytes", "limit of 200 bytes")


def test_an_oversized_tool_output_is_refused() -> None:
    """A tool output over ``Limits.max_tool_output_bytes`` is refused, naming the tool call."""
    stream = OpenStream(Limits(max_tool_output_bytes=50))
    stream.prepare(
        {"type": "tool-input-available", "toolCallId": "c2", "toolName": "fetch", "input": {}}
    )
    error = stream.refuse(
        {"type": "tool-output-available", "toolCallId": "c2", "output": "y" * 100}
    )
    assert type(error) is OversizedChunkError
    assert (error.what, error.limit, error.size, error.tool_call_id) == (
        "tool output",
        50,
        102,
        "c2",
    )
    assert_names(
        error, "tool-output-available", "tool output is 102 bytes", "limit of 50 bytes", position=3
    )
    part = stream.store.messages("chat")[-1]["parts"][1]
    assert (part["toolCallId"], part["state"]) == ("c2", "input-available"), (
        "the refused output was folded"
    )


def test_an_oversized_message_is_refused() -> None:
    """A message over ``Limits.max_message_bytes`` is refused, not stored; a smaller one goes in."""
    store = ConversationStore.open("memory://", limits=Limits(max_message_bytes=300))
    store.start_conversation("chat")
    records = stored_records(store, "chat")
    big = {"id": "u-big", "role": "user", "parts": [{"type": "text", "text": "z" * 400}]}
    with pytest.raises(OversizedInputError) as raised:
        store.append_message("chat", big)
    error = raised.value
    assert (error.what, error.limit) == ("message", 300)
    assert error.size > 400
    assert f"message is {error.size} bytes" in str(error) and "limit of 300 bytes" in str(error)
    assert stored_records(store, "chat") == records
    store.append_message(
        "chat", {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "short"}]}
    )
    assert [m["id"] for m in store.messages("chat")] == ["u1"]


def test_a_stream_cannot_grow_its_message_past_the_message_limit() -> None:
    """Small chunks that would grow the streamed message past ``max_message_bytes`` are refused."""
    store = ConversationStore.open("memory://", limits=Limits(max_message_bytes=1_000))
    store.start_conversation("chat")
    with store.open_stream("chat") as stream:
        stream.append({"type": "text-start", "id": "t"})
        verdicts = [
            stream.append({"type": "text-delta", "id": "t", "delta": "x" * 100}).verdict
            for _ in range(20)
        ]
    assert Verdict.REFUSED in verdicts, "the message grew past its limit through small chunks"
    size = len(as_json(store.messages("chat")[-1]).encode())
    assert size <= 1_000, f"the stored message is {size} bytes"
