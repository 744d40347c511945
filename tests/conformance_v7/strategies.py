"""Hypothesis strategies for valid, replay-free AI SDK v7 streams.

The v6 stream model (``tests.conformance.stream_model``) plus what v7 adds:
citations on ``text-end``, ``custom``, ``reasoning-file``, ``steering-message``,
approval requests with ``reason``/``isAutomatic`` and their
``tool-approval-response``, ``finishReason: "interrupted"``, text and reasoning
parts that stay open across ``finish-step``, and ``reset-step`` (which retracts
the current step: the model forgets the calls and open parts it removed).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from chatledger.domain.whole_stream import fold_stream
from tests.conformance.messages import assistant_messages
from tests.conformance.strategies import _generate
from tests.conformance.stream_model import StreamModel
from tests.conformance.tool_calls import NOT_YET
from tests.conformance.values import provider_metadata, short_texts

__all__ = ["StreamModelV7", "continuations_v7", "streams_v7"]

Chunk = dict[str, Any]

_CITATIONS = st.lists(
    st.one_of(
        st.fixed_dictionaries(
            {
                "source": st.fixed_dictionaries(
                    {
                        "type": st.just("source"),
                        "sourceType": st.just("url"),
                        "id": st.sampled_from(["s1", "s2"]),
                        "url": st.just("https://example.com/a"),
                    },
                    optional={"title": short_texts},
                )
            },
            optional={"startIndex": st.integers(0, 9), "citedText": short_texts},
        ),
        st.fixed_dictionaries(
            {
                "source": st.fixed_dictionaries(
                    {
                        "type": st.just("source"),
                        "sourceType": st.just("document"),
                        "id": st.just("d1"),
                        "mediaType": st.just("application/pdf"),
                        "title": short_texts,
                    },
                    optional={"filename": short_texts},
                )
            },
            optional={"endIndex": st.integers(0, 9)},
        ),
    ),
    max_size=2,
)
_STEERING_PARTS = st.lists(
    st.one_of(
        st.fixed_dictionaries(
            {"type": st.just("text"), "text": short_texts},
            optional={"providerMetadata": provider_metadata()},
        ),
        st.fixed_dictionaries(
            {
                "type": st.just("file"),
                "mediaType": st.sampled_from(["image/png", "image", "application/pdf"]),
                "url": st.sampled_from(["https://f.example/a.png", "data:image/png;base64,AA=="]),
            },
            optional={
                "filename": short_texts,
                "providerReference": st.dictionaries(
                    st.sampled_from(["openai", "anthropic"]), short_texts, max_size=1
                ),
            },
        ),
    ),
    max_size=3,
)


@dataclass
class StreamModelV7(StreamModel):
    """``StreamModel`` with the v7 chunks."""

    def enabled_actions(self) -> list[str]:
        actions = [*super().enabled_actions(), "v7_misc", "v7_misc", "reset_step"]
        if self.calls_where(lambda c: c.state == "input-available" and not c.earlier_message):
            actions += ["approval_request"] * 2
        if self.calls_where(lambda c: c.state == "approval-requested" and not c.earlier_message):
            actions += ["approval_response"] * 4
        return actions

    def emit(self, chunk: Chunk) -> None:
        if chunk["type"] == "tool-approval-request":
            chunk.update(self.maybe("reason", short_texts))
            chunk.update(self.maybe("isAutomatic", st.booleans()))
        elif chunk["type"] == "text-end":
            chunk.update(self.maybe("citations", _CITATIONS))
        elif chunk["type"] == "finish" and self.draw(st.integers(0, 3)) == 0:
            chunk["finishReason"] = "interrupted"
        super().emit(chunk)

    def _step(self) -> None:
        # v7: finish-step leaves open text and reasoning parts open.
        if self.draw(st.booleans()):
            self.emit({"type": "finish-step"})
        else:
            self.step += 1
            for call in self.calls.values():
                if call.step >= 0 and call.step != self.step:
                    call.step = NOT_YET
            self.emit({"type": "start-step"})

    def _v7_misc(self) -> None:
        kind = self.draw(st.sampled_from(["custom", "reasoning-file", "steering-message"]))
        if kind == "custom":
            self.emit(
                {
                    "type": "custom",
                    "kind": self.draw(st.sampled_from(["openai.compaction", "x.y"])),
                    **self.maybe("providerMetadata", provider_metadata()),
                }
            )
        elif kind == "reasoning-file":
            self.emit(
                {
                    "type": "reasoning-file",
                    "url": "data:image/png;base64,AA==",
                    "mediaType": "image/png",
                    **self.maybe("providerMetadata", provider_metadata()),
                }
            )
        else:
            parts = self.draw(_STEERING_PARTS)
            self.emit({"type": "steering-message", "id": self.fresh("steer"), "parts": parts})

    def _approval_request(self) -> None:
        call = self.draw(
            st.sampled_from(
                self.calls_where(lambda c: c.state == "input-available" and not c.earlier_message)
            )
        )
        call.state, call.approval_id = "approval-requested", self.fresh("ap")
        self.emit(
            {"type": "tool-approval-request", "approvalId": call.approval_id, "toolCallId": call.id}
        )

    def _approval_response(self) -> None:
        call = self.draw(
            st.sampled_from(
                self.calls_where(
                    lambda c: c.state == "approval-requested" and not c.earlier_message
                )
            )
        )
        call.approved = self.draw(st.booleans())
        call.state = "approval-responded"
        self.emit(
            {
                "type": "tool-approval-response",
                "approvalId": call.approval_id,
                "approved": call.approved,
                **self.maybe("reason", short_texts),
                **self.maybe("providerExecuted", st.booleans()),
                **self.maybe("providerMetadata", provider_metadata()),
            }
        )

    def _reset_step(self) -> None:
        self.emit({"type": "reset-step"})
        # Which calls survive: fold what was sent (the oracle checks the fold anyway).
        message = fold_stream(self.chunks, self.start_message, ai_sdk=7)
        alive = {p.get("toolCallId") for p in message["parts"]}
        for call_id in [c for c in self.calls if c not in alive]:
            del self.calls[call_id]
        # A surviving call is as the fold left it: a retracted approval request (or input) is gone.
        self.seed_from_message(message, current=True)
        for call in self.calls.values():
            call.step = NOT_YET  # partial tool calls are forgotten
        self.open_text.clear()
        self.open_reasoning.clear()

    start_message: dict[str, Any] | None = None


@st.composite
def streams_v7(draw: st.DrawFn, prefix: str = "s") -> list[Chunk]:
    """Chunks that build a new v7 assistant message."""
    return _generate(draw, StreamModelV7(draw, prefix), may_name_message=True)


@st.composite
def continuations_v7(draw: st.DrawFn) -> tuple[dict[str, Any], list[Chunk]]:
    """A starting assistant message and v7 chunks continuing it."""
    message = draw(assistant_messages(prefix="old", mid="msg-old"))
    model = StreamModelV7(draw, "new", message_id=message["id"])
    model.seed_from_message(message, current=True)
    model.start_message = message
    return message, _generate(draw, model, may_name_message=False)
