"""Replayed tool chunks (docs/behaviour.md §3.2): which chunk is a replay, and a strategy inserting them.

An independent little tracker follows each tool call's state through a valid
stream (the ones ``strategies.py`` generates), so a replay can be built for
the state the call is in at any position without asking the fold under test.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from hypothesis import strategies as st

from tests.conformance.values import json_values, short_texts

__all__ = ["Known", "is_replay", "known_calls", "replay_chunks", "timeline", "with_replays"]

Chunk = dict[str, Any]


@dataclass(frozen=True)
class Known:
    """A tool call that exists in the conversation, as far as replays are concerned."""

    tool_name: str
    dynamic: bool
    state: str
    preliminary: bool = False
    approval_id: str | None = None
    denied: bool = False
    """``approval.approved`` is false (an imported client-side denial still pending)."""

    @property
    def terminal(self) -> bool:
        if self.state == "output-available":
            return not self.preliminary
        return self.state in ("output-error", "output-denied")


def is_replay(chunk: Chunk, known: Known | None) -> bool:
    """docs/behaviour.md §3.2's table: is ``chunk`` a replay for a call in state ``known``?"""
    if known is None:
        return False
    kind, state = chunk["type"], known.state
    if kind == "tool-input-start":
        return True
    if kind in ("tool-input-delta", "tool-input-available"):
        return state != "input-streaming"
    if kind in ("tool-input-error", "tool-output-available", "tool-output-error"):
        return known.terminal
    if kind == "tool-approval-request":
        same = state == "approval-requested" and known.approval_id == chunk["approvalId"]
        return known.terminal or state == "approval-responded" or same
    if kind == "tool-output-denied":
        # A pending denial may still be completed (docs/behaviour.md §4.2); an approved call cannot be denied.
        return known.terminal or (state == "approval-responded" and not known.denied)
    return False


def known_calls(messages: Iterable[dict[str, Any]]) -> dict[str, Known]:
    """Every tool call of ``messages`` with its part's state."""
    out: dict[str, Known] = {}
    for message in messages:
        for part in message["parts"]:
            if "toolCallId" not in part:
                continue
            dynamic = part["type"] == "dynamic-tool"
            out[part["toolCallId"]] = Known(
                tool_name=part["toolName"] if dynamic else part["type"].split("-", 1)[1],
                dynamic=dynamic,
                state=part["state"],
                preliminary=part.get("preliminary") is True,
                approval_id=(part.get("approval") or {}).get("id"),
                denied=(part.get("approval") or {}).get("approved") is False,
            )
    return out


def _advance(known: dict[str, Known], chunk: Chunk) -> dict[str, Known]:
    call_id, kind = chunk.get("toolCallId"), chunk["type"]
    if call_id is None:
        return known
    current = known.get(call_id)
    if current is None:  # a new call: tool-input-start/-available/-error
        current = Known(chunk["toolName"], chunk.get("dynamic") is True, "input-streaming")
    states = {
        "tool-input-start": "input-streaming",
        "tool-input-delta": "input-streaming",
        "tool-input-available": "input-available",
        "tool-input-error": "output-error",
        "tool-approval-request": "approval-requested",
        "tool-output-available": "output-available",
        "tool-output-error": "output-error",
        "tool-output-denied": "output-denied",
    }
    updated = replace(
        current,
        state=states[kind],
        preliminary=kind == "tool-output-available" and chunk.get("preliminary") is True,
        approval_id=chunk["approvalId"] if kind == "tool-approval-request" else current.approval_id,
    )
    return {**known, call_id: updated}


def timeline(initial: dict[str, Known], chunks: list[Chunk]) -> list[dict[str, Known]]:
    """``result[i]``: the known calls before ``chunks[i]`` (``result[-1]``: after all)."""
    out = [initial]
    for chunk in chunks:
        out.append(_advance(out[-1], chunk))
    return out


@st.composite
def replay_chunks(draw: st.DrawFn, call_id: str, known: Known) -> Chunk:
    """A chunk that is a replay for ``call_id`` in state ``known`` (same or other values)."""
    flag = {"dynamic": True} if known.dynamic else {}
    head = {"toolCallId": call_id}
    named = {**head, "toolName": known.tool_name, **flag}
    candidates = [{"type": "tool-input-start", **named}]
    if known.state != "input-streaming":
        candidates += [
            {"type": "tool-input-delta", **head, "inputTextDelta": draw(short_texts)},
            {"type": "tool-input-available", **named, "input": draw(json_values(4))},
        ]
    if known.terminal:
        candidates += [
            {
                "type": "tool-input-error",
                **named,
                "input": draw(json_values(3)),
                "errorText": draw(short_texts),
            },
            {"type": "tool-output-available", **head, "output": draw(json_values(4))},
            {"type": "tool-output-available", **head, "output": 1, "preliminary": True},
            {"type": "tool-output-error", **head, "errorText": draw(short_texts)},
        ]
    if known.terminal or (known.state == "approval-responded" and not known.denied):
        candidates += [
            {"type": "tool-output-denied", **head},
            {
                "type": "tool-approval-request",
                **head,
                "approvalId": draw(st.sampled_from([known.approval_id or "ap-x", "ap-other"])),
            },
        ]
    if known.state == "approval-requested" and known.approval_id:
        candidates.append(
            {"type": "tool-approval-request", **head, "approvalId": known.approval_id}
        )
    chunk = draw(st.sampled_from(candidates))
    assert is_replay(chunk, known), (chunk, known)
    return chunk


@st.composite
def with_replays(
    draw: st.DrawFn, initial: dict[str, Known], chunks: list[Chunk], max_replays: int = 6
) -> list[Chunk]:
    """``chunks`` with replays of already-known tool calls inserted at random positions."""
    states = timeline(initial, chunks)
    inserted: list[tuple[int, Chunk]] = []
    for _ in range(draw(st.integers(1, max_replays))):
        position = draw(st.integers(0, len(chunks)))
        known = states[position]
        if not known:
            continue
        call_id = draw(st.sampled_from(sorted(known)))
        inserted.append((position, draw(replay_chunks(call_id, known[call_id]))))
    out: list[Chunk] = []
    for position in range(len(chunks) + 1):
        out += [chunk for where, chunk in inserted if where == position]
        if position < len(chunks):
            out.append(chunks[position])
    return out
