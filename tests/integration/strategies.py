"""Hypothesis strategies for whole conversations written through the store.

``scenarios()`` draws a conversation: user messages, client actions on tool
calls (approval answers, tool outputs) and streams of AI SDK v6 chunks
(text, reasoning, static and dynamic tool calls through every state,
approvals, outputs for calls of earlier messages, replays of known calls,
data parts updated by id, files, sources, steps, metadata), with explicit
flush points so batches split at arbitrary places, continuation streams, and
a few refused chunks mixed in. The streams are mostly valid; the properties
that use them hold whatever the verdicts are.

Garbage (inputs that must be refused) is in ``garbage.py``.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

__all__ = [
    "FLUSH",
    "Scenario",
    "Step",
    "json_values",
    "scenarios",
    "stream_chunks",
]

FLUSH: Any = {"flush": True}
"""Marker in a stream's chunk list: call ``StreamWriter.flush()`` here."""

_KEY_ALPHABET = "abcdefghijklmnopqrstuvwxyz_0123456789"
keys = st.text(_KEY_ALPHABET, min_size=1, max_size=6)
texts = st.text(
    st.characters(codec="utf-8", exclude_characters="\x00"),
    max_size=12,
)
"""Any text that UTF-8 can encode (no lone surrogates: those are garbage, see below)."""

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | texts,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=3),
    max_leaves=6,
)
json_objects = st.dictionaries(keys, json_values, max_size=3)
provider_metadata = st.dictionaries(
    st.sampled_from(["openai", "anthropic"]), json_objects, min_size=1, max_size=2
)
TOOL_NAMES = ("weather", "search", "get-time")


@dataclass
class _Model:
    """What the generator knows of the conversation so far (enough to make mostly valid chunks)."""

    counter: int = 0
    calls: dict[str, str] = field(default_factory=dict)
    """toolCallId -> rough state: streaming, available, approval, done."""
    approvals: dict[str, str] = field(default_factory=dict)
    """toolCallId -> approval id asked for."""

    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"


@dataclass(frozen=True)
class Step:
    """One action of a scenario: a user message, a stream, or a client action on a tool call."""

    kind: str
    """``user``, ``stream``, ``approve`` (respond_to_approval) or ``output`` (add_tool_output)."""
    message: dict[str, Any] | None = None
    """The user message (``user``)."""
    chunks: tuple[Any, ...] = ()
    """The chunks, with ``FLUSH`` markers (``stream``)."""
    continuation: bool = False
    """Whether the stream continues the last assistant message."""
    outcome: str | None = "finished"
    """How the stream is closed; None leaves it open (only the last step)."""
    call: str = ""
    """The tool call acted on (``approve``, ``output``)."""
    approved: bool = True
    """The answer (``approve``)."""
    output: Any = None
    """The tool output (``output``)."""
    error_text: str | None = None
    """An ``output-error`` result instead of an output (``output``)."""


@dataclass(frozen=True)
class Scenario:
    """A whole conversation to write through the store."""

    steps: tuple[Step, ...]

    def __repr__(self) -> str:
        lines = []
        for step in self.steps:
            if step.kind == "user":
                lines.append(f"user {json.dumps(step.message)}")
            elif step.kind == "approve":
                lines.append(f"respond_to_approval({step.call!r}, approved={step.approved})")
            elif step.kind == "output":
                result = f"output={step.output!r}, error_text={step.error_text!r}"
                lines.append(f"add_tool_output({step.call!r}, {result})")
            else:
                head = "continuation" if step.continuation else "stream"
                lines.append(f"{head} (close: {step.outcome})")
                lines.extend(f"    {json.dumps(chunk)}" for chunk in step.chunks)
        return "Scenario:\n  " + "\n  ".join(lines)


def _split(draw: st.DrawFn, text: str) -> list[str]:
    """Cut ``text`` into 1-3 consecutive pieces."""
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=2)))
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


def _text_block(draw: st.DrawFn, model: _Model, kind: str) -> list[dict[str, Any]]:
    part_id = model.fresh(kind[0])
    start: dict[str, Any] = {"type": f"{kind}-start", "id": part_id}
    if draw(st.integers(0, 4)) == 0:
        start["providerMetadata"] = draw(provider_metadata)
    chunks = [start]
    chunks += [
        {"type": f"{kind}-delta", "id": part_id, "delta": delta}
        for delta in draw(st.lists(texts, max_size=3))
    ]
    if draw(st.integers(0, 4)) > 0:
        chunks.append({"type": f"{kind}-end", "id": part_id})
    return chunks


def _tool_call(draw: st.DrawFn, model: _Model) -> list[dict[str, Any]]:
    call = model.fresh("call")
    name = draw(st.sampled_from(TOOL_NAMES))
    head: dict[str, Any] = {"toolCallId": call, "toolName": name}
    if draw(st.booleans()):
        head["dynamic"] = True
    if draw(st.integers(0, 4)) == 0:
        head["title"] = draw(texts)
    tool_input = draw(json_objects)
    chunks: list[dict[str, Any]] = []
    if draw(st.booleans()):
        chunks.append({"type": "tool-input-start", **head})
        chunks += [
            {"type": "tool-input-delta", "toolCallId": call, "inputTextDelta": piece}
            for piece in _split(draw, json.dumps(tool_input))
        ]
        model.calls[call] = "streaming"
        if draw(st.integers(0, 5)) == 0:
            return chunks  # left streaming
    if draw(st.integers(0, 6)) == 0:
        model.calls[call] = "done"
        error = {"type": "tool-input-error", **head, "input": tool_input, "errorText": draw(texts)}
        return [*chunks, error]
    chunks.append({"type": "tool-input-available", **head, "input": tool_input})
    model.calls[call] = "available"
    then = draw(st.sampled_from(["none", "approval", "output", "preliminary", "error", "denied"]))
    if then in ("approval", "denied"):
        approval = model.fresh("approval")
        model.approvals[call] = approval
        chunks.append({"type": "tool-approval-request", "approvalId": approval, "toolCallId": call})
        model.calls[call] = "approval"
        if then == "denied":
            chunks.append({"type": "tool-output-denied", "toolCallId": call})
            model.calls[call] = "done"
    elif then != "none":
        chunks += _outputs(draw, call, then)
        model.calls[call] = "done"
    return chunks


def _outputs(draw: st.DrawFn, call: str, how: str) -> list[dict[str, Any]]:
    if how == "error":
        return [{"type": "tool-output-error", "toolCallId": call, "errorText": draw(texts)}]
    final: dict[str, Any] = {
        "type": "tool-output-available",
        "toolCallId": call,
        "output": draw(json_values),
    }
    if draw(st.integers(0, 4)) == 0:
        final["providerMetadata"] = draw(provider_metadata)
    if how == "preliminary":
        early = {
            "type": "tool-output-available",
            "toolCallId": call,
            "output": draw(json_values),
            "preliminary": True,
        }
        return [early, final]
    return [final]


def _answer_earlier_call(draw: st.DrawFn, model: _Model) -> list[dict[str, Any]]:
    """docs/behaviour.md §3.3: a result for a call made earlier (typically in an earlier message)."""
    waiting = sorted(
        call for call, state in model.calls.items() if state in ("available", "approval")
    )
    if not waiting:
        return []
    call = draw(st.sampled_from(waiting))
    how = draw(st.sampled_from(["output", "error", "denied"]))
    model.calls[call] = "done"
    if how == "denied":
        return [{"type": "tool-output-denied", "toolCallId": call}]
    return _outputs(draw, call, how)


def _replay(draw: st.DrawFn, model: _Model) -> list[dict[str, Any]]:
    """docs/behaviour.md §3.2: a provider re-sending chunks of a call the conversation already knows."""
    known = sorted(model.calls)
    if not known:
        return []
    call = draw(st.sampled_from(known))
    name = draw(st.sampled_from(TOOL_NAMES))
    options = [
        {"type": "tool-input-start", "toolCallId": call, "toolName": name},
        {
            "type": "tool-input-available",
            "toolCallId": call,
            "toolName": name,
            "input": draw(json_objects),
        },
    ]
    if model.calls[call] == "done":
        options.append(
            {"type": "tool-output-available", "toolCallId": call, "output": draw(json_values)}
        )
    if call in model.approvals and model.calls[call] == "approval":
        options.append(
            {
                "type": "tool-approval-request",
                "approvalId": model.approvals[call],
                "toolCallId": call,
            }
        )
    return [draw(st.sampled_from(options))]


def _data(draw: st.DrawFn, model: _Model) -> list[dict[str, Any]]:
    chunk: dict[str, Any] = {
        "type": draw(st.sampled_from(["data-weather", "data-status"])),
        "data": draw(json_values),
    }
    part_id = draw(st.sampled_from([None, "d1", "d2"]))
    if part_id is not None:
        chunk["id"] = part_id
    if draw(st.integers(0, 5)) == 0:
        chunk["transient"] = True
    return [chunk]


def _attachment(draw: st.DrawFn, model: _Model) -> list[dict[str, Any]]:
    source = model.fresh("src")
    return [
        draw(
            st.sampled_from(
                [
                    {
                        "type": "file",
                        "url": f"https://example.com/{source}.png",
                        "mediaType": "image/png",
                    },
                    {
                        "type": "source-url",
                        "sourceId": source,
                        "url": f"https://example.com/{source}",
                    },
                    {
                        "type": "source-document",
                        "sourceId": source,
                        "mediaType": "text/plain",
                        "title": source,
                    },
                ]
            )
        )
    ]


def _misc(draw: st.DrawFn, model: _Model) -> list[dict[str, Any]]:
    return [
        draw(
            st.sampled_from(
                [
                    {"type": "start-step"},
                    {"type": "finish-step"},
                    {"type": "error", "errorText": "provider hiccup"},
                    {
                        "type": "message-metadata",
                        "messageMetadata": {
                            "tokens": model.counter,
                            "nested": {"k": model.counter},
                        },
                    },
                ]
            )
        )
    ]


def _refused(draw: st.DrawFn, model: _Model) -> list[dict[str, Any]]:
    """A chunk that is refused whatever came before (ids that were never opened)."""
    return [
        draw(
            st.sampled_from(
                [
                    {"type": "text-delta", "id": "never-opened", "delta": "lost"},
                    {"type": "reasoning-end", "id": "never-opened"},
                    {"type": "tool-output-available", "toolCallId": "never-seen", "output": 1},
                    {"type": "no-such-chunk"},
                ]
            )
        )
    ]


_SEGMENTS = {
    "text": lambda draw, model: _text_block(draw, model, "text"),
    "reasoning": lambda draw, model: _text_block(draw, model, "reasoning"),
    "tool": _tool_call,
    "answer": _answer_earlier_call,
    "replay": _replay,
    "data": _data,
    "attachment": _attachment,
    "misc": _misc,
    "refused": _refused,
}
_WEIGHTED = (
    ["text"] * 3
    + ["tool"] * 3
    + ["reasoning", "answer", "replay", "data", "attachment", "misc", "refused"]
)


@st.composite
def stream_chunks(
    draw: st.DrawFn, model: _Model | None = None, *, continuation: bool = False
) -> list[Any]:
    """One stream's chunks (with ``FLUSH`` markers), drawn against ``model``."""
    model = model if model is not None else _Model()
    chunks: list[Any] = []
    if draw(st.booleans()):
        start: dict[str, Any] = {"type": "start"}
        if draw(st.booleans()):
            # Ignored on a continuation; names the new message otherwise.
            start["messageId"] = model.fresh("msg-")
        if draw(st.booleans()):
            start["messageMetadata"] = {"model": draw(st.sampled_from(["a", "b"]))}
        chunks.append(start)
    if draw(st.booleans()):
        chunks.append({"type": "start-step"})
    for _ in range(draw(st.integers(0, 5))):
        segment = draw(st.sampled_from(_WEIGHTED))
        chunks += _SEGMENTS[segment](draw, model)
        if draw(st.integers(0, 3)) == 0:
            chunks.append(FLUSH)
    if draw(st.booleans()):
        chunks.append({"type": "finish-step"})
    if draw(st.booleans()):
        chunks.append(
            {
                "type": "finish",
                "finishReason": draw(st.sampled_from(["stop", "tool-calls", "length"])),
            }
        )
    return chunks


def _user_message(draw: st.DrawFn, model: _Model) -> dict[str, Any]:
    return {
        "id": model.fresh("user-"),
        "role": "user",
        "parts": [{"type": "text", "text": draw(texts)}],
    }


def _client_actions(draw: st.DrawFn, model: _Model) -> list[Step]:
    """Answers to some pending approvals, results for some waiting calls (docs/behaviour.md §4.1, §4.2)."""
    steps = []
    for call, state in sorted(model.calls.items()):
        if state == "approval" and draw(st.booleans()):
            approved = draw(st.booleans())
            steps.append(Step("approve", call=call, approved=approved))
            model.calls[call] = "available" if approved else "done"
        elif state == "available" and draw(st.booleans()):
            if draw(st.booleans()):
                steps.append(Step("output", call=call, output=draw(json_values)))
            else:
                steps.append(Step("output", call=call, error_text=draw(texts)))
            model.calls[call] = "done"
    return steps


@st.composite
def scenarios(draw: st.DrawFn, *, max_turns: int = 3) -> Scenario:
    """A conversation: user turns, each answered by a stream, then actions and continuations."""
    model = _Model()
    steps: list[Step] = []
    for _turn in range(draw(st.integers(1, max_turns))):
        steps.append(Step("user", message=_user_message(draw, model)))
        for index in range(draw(st.integers(1, 3))):
            if index > 0:
                steps += _client_actions(draw, model)
            chunks = draw(stream_chunks(model, continuation=index > 0))
            outcome = draw(
                st.sampled_from(["finished", "finished", "aborted", "errored", "interrupted"])
            )
            steps.append(
                Step("stream", chunks=tuple(chunks), continuation=index > 0, outcome=outcome)
            )
    if draw(st.booleans()):
        last = steps[-1]
        steps[-1] = Step("stream", chunks=last.chunks, continuation=last.continuation, outcome=None)
    return Scenario(tuple(steps))
