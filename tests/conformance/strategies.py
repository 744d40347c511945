"""Hypothesis strategies for valid, replay-free chunk streams (and the messages they extend).

* ``streams()``: chunks for a new assistant message;
* ``continuations()``: a starting assistant message and chunks that continue it
  (resumed tool input, outputs for earlier-step calls, new steps);
* ``conversation_streams()``: a prior conversation and a stream folded into it,
  new message or continuation, optionally answering tool calls of earlier
  messages (docs/behaviour.md §3.3; such streams have no SDK counterpart).

Every stream is one the SDK folds without error (checked by
``test_generated_streams_fold_without_error_in_the_sdk``); none contains a
replay, an in-band ``error`` chunk or a ``start`` naming another message id.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from tests.conformance.messages import assistant_messages, conversations
from tests.conformance.stream_model import StreamModel
from tests.conformance.values import metadata_values

__all__ = [
    "ConversationStream",
    "continuations",
    "conversation_streams",
    "stream_batches",
    "streams",
]

Chunk = dict[str, Any]
MAX_ACTIONS = 30


def _generate(draw: st.DrawFn, model: StreamModel, *, may_name_message: bool) -> list[Chunk]:
    if draw(st.booleans()):
        head: Chunk = {"type": "start"}
        if may_name_message and model.message_id is None and draw(st.booleans()):
            model.message_id = f"{model.prefix}-msg"  # later starts may repeat it
            head["messageId"] = model.message_id
        elif model.message_id and draw(st.booleans()):
            head["messageId"] = model.message_id
        if draw(st.booleans()):
            head["messageMetadata"] = draw(metadata_values())
        model.emit(head)
    if draw(st.booleans()):
        model.step += 1
        model.emit({"type": "start-step"})
    for _ in range(draw(st.integers(0, MAX_ACTIONS))):
        model.act(draw(st.sampled_from(model.enabled_actions())))
    if draw(st.booleans()):
        model.emit({"type": "finish-step"})
        model.emit({"type": "finish"})
    return model.chunks


@st.composite
def streams(draw: st.DrawFn, prefix: str = "s") -> list[Chunk]:
    """Chunks that build a new assistant message (ids unique, prefixed with ``prefix``)."""
    return _generate(draw, StreamModel(draw, prefix), may_name_message=True)


def stream_batches(min_size: int = 2, max_size: int = 4) -> st.SearchStrategy[list[list[Chunk]]]:
    """Several independent streams at once (one oracle round trip per example)."""
    return st.lists(streams(), min_size=min_size, max_size=max_size)


@st.composite
def continuations(draw: st.DrawFn) -> tuple[dict[str, Any], list[Chunk]]:
    """A starting assistant message and chunks continuing it."""
    message = draw(assistant_messages(prefix="old", mid="msg-old"))
    model = StreamModel(draw, "new", message_id=message["id"])
    model.seed_from_message(message, current=True)
    return message, _generate(draw, model, may_name_message=False)


@dataclass(frozen=True)
class ConversationStream:
    """A prior conversation, the chunks of one stream and how they are folded into it."""

    messages: list[dict[str, Any]]
    chunks: list[Chunk]
    continuation: bool
    message_id: str

    @property
    def target(self) -> dict[str, Any] | None:
        """The continued message (``None`` for a new message)."""
        return self.messages[-1] if self.continuation else None


@st.composite
def conversation_streams(
    draw: st.DrawFn, *, earlier_outputs: bool = True, continuation: bool | None = None
) -> ConversationStream:
    """A conversation and a stream folded into it (``earlier_outputs``: may answer calls of
    earlier messages, docs/behaviour.md §3.3)."""
    cont = draw(st.booleans()) if continuation is None else continuation
    messages = draw(conversations(ends_with_assistant=True if cont else None))
    model = StreamModel(draw, "live")
    if cont:
        model.message_id = messages[-1]["id"]
    for index, message in enumerate(messages):
        if message["role"] != "assistant":
            continue
        current = cont and index == len(messages) - 1
        if current or earlier_outputs:
            model.seed_from_message(message, current=current)
    chunks = _generate(draw, model, may_name_message=False)
    return ConversationStream(messages, chunks, cont, "msg-live")
