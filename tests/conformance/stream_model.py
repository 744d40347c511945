"""A small model of what a stream may legally send next; drives the stream strategies.

It tracks open text/reasoning ids, the current step and every tool call with
its state, and offers only chunks that the SDK folds without error and that
are not replays (docs/behaviour.md §3.2): each toolCallId gets at most one
``tool-input-start``, input chunks only while ``input-streaming`` and in the
step the call began, outputs only until a terminal state.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from tests.conformance.tool_calls import NOT_YET, Call, ToolCallActions
from tests.conformance.values import json_values, metadata_values, provider_metadata, short_texts

__all__ = ["Call", "StreamModel"]

Chunk = dict[str, Any]


@dataclass
class StreamModel(ToolCallActions):
    """The state of one stream being generated; ``emit`` appends chunks."""

    draw: st.DrawFn
    prefix: str
    calls: dict[str, Call] = field(default_factory=dict)
    message_id: str | None = None
    step: int = 0
    open_text: list[str] = field(default_factory=list)
    open_reasoning: list[str] = field(default_factory=list)
    chunks: list[Chunk] = field(default_factory=list)
    counter: int = 0

    # -- seeding ---------------------------------------------------------------------------

    def seed_from_message(self, message: dict[str, Any], *, current: bool) -> None:
        """Learn the tool calls of an existing message (``current``: the one continued)."""
        parts = message["parts"]
        last_step = max((i for i, p in enumerate(parts) if p["type"] == "step-start"), default=-1)
        for index, part in enumerate(parts):
            if not (part["type"].startswith("tool-") or part["type"] == "dynamic-tool"):
                continue
            dynamic = part["type"] == "dynamic-tool"
            in_last_step = current and index > last_step
            approval = part.get("approval") or {}
            self.calls[part["toolCallId"]] = Call(
                id=part["toolCallId"],
                name=part["toolName"] if dynamic else part["type"].split("-", 1)[1],
                dynamic=dynamic,
                state=part["state"],
                step=0 if in_last_step else NOT_YET,
                encoding=part.get("inputEncoding"),
                text=part.get("rawInput") or "",
                approval_id=approval.get("id"),
                approved=approval.get("approved"),
                preliminary=bool(part.get("preliminary")),
                earlier_message=not current,
            )

    # -- helpers ---------------------------------------------------------------------------

    def fresh(self, kind: str) -> str:
        self.counter += 1
        return f"{self.prefix}-{kind}{self.counter}"

    def maybe(self, key: str, strategy: st.SearchStrategy[Any]) -> dict[str, Any]:
        return {key: self.draw(strategy)} if self.draw(st.integers(0, 2)) == 0 else {}

    def emit(self, chunk: Chunk) -> None:
        if self.draw(st.integers(0, 15)) == 0:  # unknown extra keys are allowed on the wire
            chunk["x-extra"] = self.draw(json_values(3))
        self.chunks.append(chunk)

    # -- actions ---------------------------------------------------------------------------

    def enabled_actions(self) -> list[str]:
        """The actions possible now, repeated to weight them."""
        actions = ["text_start", "reasoning_start", "misc", "misc", "step"] + ["call_new"] * 3
        if self.open_text:
            actions += ["text_delta"] * 3 + ["text_end"] * 2
        if self.open_reasoning:
            actions += ["reasoning_delta"] * 2 + ["reasoning_end"]
        if self.calls_where(lambda c: c.accepts_input and not c.earlier_message):
            actions += ["call_input"] * 4
        if self.calls_where(lambda c: c.accepts_output):
            actions += ["call_result"] * 5
        return actions

    def act(self, action: str) -> None:
        getattr(self, f"_{action}")()

    def _text_start(self) -> None:
        tid = self.fresh("t")
        self.open_text.append(tid)
        self.emit(
            {"type": "text-start", "id": tid, **self.maybe("providerMetadata", provider_metadata())}
        )

    def _text_delta(self) -> None:
        tid = self.draw(st.sampled_from(self.open_text))
        self.emit(
            {
                "type": "text-delta",
                "id": tid,
                "delta": self.draw(short_texts),
                **self.maybe("providerMetadata", provider_metadata()),
            }
        )

    def _text_end(self) -> None:
        tid = self.draw(st.sampled_from(self.open_text))
        self.open_text.remove(tid)
        self.emit(
            {"type": "text-end", "id": tid, **self.maybe("providerMetadata", provider_metadata())}
        )

    def _reasoning_start(self) -> None:
        rid = self.fresh("r")
        self.open_reasoning.append(rid)
        self.emit(
            {
                "type": "reasoning-start",
                "id": rid,
                **self.maybe("providerMetadata", provider_metadata()),
            }
        )

    def _reasoning_delta(self) -> None:
        rid = self.draw(st.sampled_from(self.open_reasoning))
        self.emit(
            {
                "type": "reasoning-delta",
                "id": rid,
                "delta": self.draw(short_texts),
                **self.maybe("providerMetadata", provider_metadata()),
            }
        )

    def _reasoning_end(self) -> None:
        rid = self.draw(st.sampled_from(self.open_reasoning))
        self.open_reasoning.remove(rid)
        self.emit(
            {
                "type": "reasoning-end",
                "id": rid,
                **self.maybe("providerMetadata", provider_metadata()),
            }
        )

    def _step(self) -> None:
        if self.draw(st.booleans()):
            self.open_text.clear()
            self.open_reasoning.clear()
            self.emit({"type": "finish-step"})
        else:
            self.step += 1
            for call in self.calls.values():
                if call.step >= 0 and call.step != self.step:
                    call.step = NOT_YET  # the SDK looks for input parts in the current step only
            self.emit({"type": "start-step"})

    def _misc(self) -> None:
        kind = self.draw(
            st.sampled_from(
                [
                    "source-url",
                    "source-document",
                    "file",
                    "data",
                    "data",
                    "metadata",
                    "start",
                    "finish",
                    "abort",
                ]
            )
        )
        if kind == "source-url":
            self.emit(
                {
                    "type": "source-url",
                    "sourceId": self.fresh("s"),
                    "url": "https://example.com/" + self.draw(st.sampled_from("abc")),
                    **self.maybe("title", short_texts),
                    **self.maybe("providerMetadata", provider_metadata()),
                }
            )
        elif kind == "source-document":
            self.emit(
                {
                    "type": "source-document",
                    "sourceId": self.fresh("s"),
                    "mediaType": "application/pdf",
                    "title": self.draw(short_texts),
                    **self.maybe("filename", short_texts),
                    **self.maybe("providerMetadata", provider_metadata()),
                }
            )
        elif kind == "file":
            self.emit(
                {
                    "type": "file",
                    "url": "data:text/plain;base64,aGk=",
                    "mediaType": "text/plain",
                    **self.maybe("providerMetadata", provider_metadata()),
                }
            )
        elif kind == "data":
            self.emit(
                {
                    "type": self.draw(st.sampled_from(["data-progress", "data-a"])),
                    **self.maybe("id", st.sampled_from(["d1", "d2"])),
                    "data": self.draw(json_values(4)),
                    **self.maybe("transient", st.booleans()),
                }
            )
        elif kind == "metadata":
            self.emit({"type": "message-metadata", "messageMetadata": self.draw(metadata_values())})
        elif kind == "start":
            # Never a different id once there is content (docs/behaviour.md §3.4); the same id is harmless.
            same_id = {"messageId": self.message_id} if self.message_id else {}
            self.emit(
                {
                    "type": "start",
                    **(same_id if self.draw(st.booleans()) else {}),
                    **self.maybe("messageMetadata", metadata_values()),
                }
            )
        elif kind == "finish":
            self.emit(
                {
                    "type": "finish",
                    **self.maybe("finishReason", st.sampled_from(["stop", "tool-calls"])),
                    **self.maybe("messageMetadata", metadata_values()),
                }
            )
        else:
            self.emit({"type": "abort", **self.maybe("reason", short_texts)})
