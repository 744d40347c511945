"""Tool calls in generated streams: their model state and the chunks that move them on.

``ToolCallActions`` is mixed into ``StreamModel``; it only ever offers chunks
that are legal for the call's state and never a replay (docs/behaviour.md §3.2).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from tests.conformance.values import (
    json_texts,
    json_values,
    provider_metadata,
    short_texts,
    split_text,
    tool_metadata,
)

__all__ = ["NOT_YET", "Call", "ToolCallActions"]

Chunk = dict[str, Any]
NOT_YET = -2  # step of a call whose input phase is over for good


@dataclass
class Call:
    """What the model knows about one tool call."""

    id: str
    name: str
    dynamic: bool
    state: str
    step: int
    encoding: str | None = None
    text: str = ""
    pieces: list[str] = field(default_factory=list)
    approval_id: str | None = None
    approved: bool | None = None
    preliminary: bool = False
    earlier_message: bool = False

    @property
    def accepts_input(self) -> bool:
        return self.state == "input-streaming" and self.step >= 0

    @property
    def accepts_output(self) -> bool:
        if self.state == "approval-responded":
            return self.approved is True
        if self.state == "output-available":
            return self.preliminary
        return self.state in ("input-available", "approval-requested")


class ToolCallActions:
    """The tool-call actions of ``StreamModel`` (which provides these attributes)."""

    draw: st.DrawFn
    calls: dict[str, Call]
    step: int

    def fresh(self, kind: str) -> str:
        raise NotImplementedError

    def maybe(self, key: str, strategy: st.SearchStrategy[Any]) -> dict[str, Any]:
        raise NotImplementedError

    def emit(self, chunk: Chunk) -> None:
        raise NotImplementedError

    def calls_where(self, predicate: Callable[[Call], bool]) -> list[Call]:
        """The known calls for which ``predicate`` holds."""
        return [c for c in self.calls.values() if predicate(c)]

    def _tool_options(self) -> dict[str, Any]:
        return {
            **self.maybe("providerExecuted", st.booleans()),
            **self.maybe("providerMetadata", provider_metadata()),
            **self.maybe("title", short_texts),
            **self.maybe("toolMetadata", tool_metadata()),
        }

    def _call_new(self) -> None:
        call = Call(
            id=self.fresh("call"),
            name=self.draw(st.sampled_from(["getWeather", "get-time", "search_docs"])),
            dynamic=self.draw(st.booleans()),
            state="input-streaming",
            step=self.step,
        )
        self.calls[call.id] = call
        flag = {"dynamic": True} if call.dynamic else self.maybe("dynamic", st.just(False))
        head = {"toolCallId": call.id, "toolName": call.name, **flag}
        how = self.draw(st.sampled_from(["start", "start", "available", "input-error"]))
        if how == "start":
            call.encoding = self.draw(st.sampled_from([None, None, "json", "text"]))
            encoding = {"inputEncoding": call.encoding} if call.encoding else {}
            text = self.draw(json_texts()) if call.encoding != "text" else self.draw(short_texts)
            call.pieces = split_text(self.draw, text)
            self.emit({"type": "tool-input-start", **head, **encoding, **self._tool_options()})
        elif how == "available":
            call.state = "input-available"
            self.emit(
                {
                    "type": "tool-input-available",
                    **head,
                    "input": self.draw(json_values()),
                    **self._tool_options(),
                }
            )
        else:
            call.state = "output-error"
            self.emit(
                {
                    "type": "tool-input-error",
                    **head,
                    "input": self.draw(json_values()),
                    "errorText": self.draw(short_texts),
                    **self._tool_options(),
                }
            )

    def _call_input(self) -> None:
        call = self.draw(
            st.sampled_from(self.calls_where(lambda c: c.accepts_input and not c.earlier_message))
        )
        flag = {"dynamic": True} if call.dynamic else {}
        head = {"toolCallId": call.id, "toolName": call.name, **flag}
        how = self.draw(st.sampled_from(["delta", "delta", "delta", "available", "input-error"]))
        if how == "delta":
            piece = call.pieces.pop(0) if call.pieces else self.draw(short_texts)
            call.text += piece
            self.emit({"type": "tool-input-delta", "toolCallId": call.id, "inputTextDelta": piece})
        elif how == "available":
            call.state = "input-available"
            self.emit(
                {
                    "type": "tool-input-available",
                    **head,
                    "input": self._final_input(call),
                    **self._tool_options(),
                }
            )
        else:
            call.state = "output-error"
            self.emit(
                {
                    "type": "tool-input-error",
                    **head,
                    "input": call.text or None,
                    "errorText": self.draw(short_texts),
                    **self._tool_options(),
                }
            )

    def _final_input(self, call: Call) -> Any:
        if call.encoding == "text":
            return call.text
        try:  # JSON as JavaScript reads it: no NaN or Infinity, which Python's json accepts
            parsed = json.loads(call.text, parse_constant=_not_json)
        except ValueError:
            return self.draw(json_values())
        return parsed if self.draw(st.integers(0, 3)) > 0 else self.draw(json_values())

    def _call_result(self) -> None:
        call = self.draw(st.sampled_from(self.calls_where(lambda c: c.accepts_output)))
        kinds = ["output", "output", "output-error"]
        if call.state in ("input-available", "approval-requested"):
            kinds += ["denied"]
            if not call.earlier_message:
                kinds += ["approval", "approval"]
        kind = self.draw(st.sampled_from(kinds))
        extra = {
            **self.maybe("providerExecuted", st.booleans()),
            **self.maybe("providerMetadata", provider_metadata()),
            **self.maybe("toolMetadata", tool_metadata()),
            **self.maybe("dynamic", st.booleans()),
        }
        if kind == "output":
            preliminary = self.draw(st.sampled_from([None, None, True, False]))
            call.state, call.preliminary = "output-available", preliminary is True
            self.emit(
                {
                    "type": "tool-output-available",
                    "toolCallId": call.id,
                    "output": self.draw(json_values()),
                    **({} if preliminary is None else {"preliminary": preliminary}),
                    **extra,
                }
            )
        elif kind == "output-error":
            call.state = "output-error"
            self.emit(
                {
                    "type": "tool-output-error",
                    "toolCallId": call.id,
                    "errorText": self.draw(short_texts),
                    **extra,
                }
            )
        elif kind == "denied":
            call.state = "output-denied"
            self.emit({"type": "tool-output-denied", "toolCallId": call.id})
        else:
            call.state, call.approval_id = "approval-requested", self.fresh("ap")
            self.emit(
                {
                    "type": "tool-approval-request",
                    "approvalId": call.approval_id,
                    "toolCallId": call.id,
                    **self.maybe("approvalDescriptor", json_values(3)),
                    **self.maybe("inputSchemaInput", json_values(3)),
                    **self.maybe("signature", short_texts),
                }
            )


def _not_json(constant: str) -> Any:
    """``NaN``, ``Infinity``, ``-Infinity``: Python's json reads them, JSON (and the SDK) do not."""
    raise ValueError(f"{constant} is not JSON")
