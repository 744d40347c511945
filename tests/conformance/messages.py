"""Hypothesis strategies for UIMessages: assistant messages with tool parts in every state.

These are the starting messages of continuations and the earlier messages of
a conversation. Tool call ids and approval ids carry a caller-given prefix so
they are unique across a conversation.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from tests.conformance.values import (
    json_texts,
    json_values,
    provider_metadata,
    short_texts,
    tool_metadata,
)

__all__ = ["TOOL_STATES", "assistant_messages", "conversations", "tool_parts", "user_messages"]

TOOL_STATES = (
    "input-streaming",
    "input-available",
    "approval-requested",
    "approval-responded",
    "output-available",
    "output-error",
    "output-denied",
)
TOOL_NAMES = ("getWeather", "get-time", "search_docs")


def _maybe(draw: st.DrawFn, key: str, strategy: st.SearchStrategy[Any]) -> dict[str, Any]:
    return {key: draw(strategy)} if draw(st.booleans()) else {}


@st.composite
def tool_parts(draw: st.DrawFn, call_id: str, state: str | None = None) -> dict[str, Any]:
    """One static or dynamic tool part in ``state`` (drawn if not given)."""
    state = state or draw(st.sampled_from(TOOL_STATES))
    name = draw(st.sampled_from(TOOL_NAMES))
    dynamic = draw(st.booleans())
    part: dict[str, Any] = (
        {"type": "dynamic-tool", "toolName": name} if dynamic else {"type": f"tool-{name}"}
    )
    part |= {"toolCallId": call_id, "state": state}
    part |= _maybe(draw, "title", short_texts)
    part |= _maybe(draw, "toolMetadata", tool_metadata())
    part |= _maybe(draw, "providerExecuted", st.booleans())
    part |= _maybe(draw, "callProviderMetadata", provider_metadata())
    approval_id = f"ap-{call_id}"
    if state == "input-streaming":
        text = draw(json_texts())
        part |= _maybe(draw, "rawInput", st.just(text[: draw(st.integers(0, len(text)))]))
        part |= _maybe(draw, "inputEncoding", st.sampled_from(["json", "text"]))
        part |= _maybe(draw, "input", json_values(4))
        return part
    part["input"] = draw(json_values(6))
    if state == "approval-requested":
        part["approval"] = {"id": approval_id}
        descriptors = json_values(3).filter(lambda v: v is not None)
        part["approval"] |= _maybe(draw, "descriptor", descriptors)
        part["approval"] |= _maybe(draw, "signature", short_texts)
    elif state in ("approval-responded", "output-denied"):
        approved = state == "approval-responded" and draw(st.booleans())
        part["approval"] = {"id": approval_id, "approved": approved}
        part["approval"] |= _maybe(draw, "reason", short_texts)
    elif state in ("output-available", "output-error"):
        part |= _maybe(draw, "approval", st.just({"id": approval_id, "approved": True}))
        part |= _maybe(draw, "resultProviderMetadata", provider_metadata())
        if state == "output-available":
            part["output"] = draw(json_values(6))
            part |= _maybe(draw, "preliminary", st.booleans())
        else:
            part["errorText"] = draw(short_texts)
    return part


_SIMPLE_PARTS = st.one_of(
    st.just({"type": "step-start"}),
    st.builds(
        lambda t, s: {"type": "text", "text": t, "state": s},
        short_texts,
        st.sampled_from(["done", "done", "streaming"]),
    ),
    st.builds(
        lambda t: {"type": "reasoning", "id": "r-old", "text": t, "state": "done"}, short_texts
    ),
    st.just({"type": "file", "mediaType": "image/png", "url": "https://x/y.png"}),
    st.just({"type": "source-url", "sourceId": "s-old", "url": "https://x"}),
    st.builds(lambda d: {"type": "data-progress", "id": "d1", "data": d}, json_values(3)),
    st.builds(lambda d: {"type": "data-a", "data": d}, json_values(3)),
)


@st.composite
def assistant_messages(draw: st.DrawFn, prefix: str = "m", mid: str | None = None) -> dict:
    """An assistant UIMessage: steps, text, data and tool parts (ids ``<prefix>-call<n>``)."""
    parts: list[dict[str, Any]] = []
    if draw(st.integers(0, 3)) > 0:
        parts.append({"type": "step-start"})
    for n in range(draw(st.integers(0, 6))):
        if draw(st.integers(0, 2)) == 0:
            parts.append(draw(_SIMPLE_PARTS))
        else:
            parts.append(draw(tool_parts(f"{prefix}-call{n}")))
    message: dict[str, Any] = {"id": mid or f"{prefix}-msg", "role": "assistant", "parts": parts}
    message |= _maybe(
        draw,
        "metadata",
        st.dictionaries(st.sampled_from(["usage", "n"]), json_values(3), max_size=2),
    )
    return message


def user_messages(mid: str) -> st.SearchStrategy[dict]:
    """A user UIMessage with one text part."""
    return st.builds(
        lambda t: {"id": mid, "role": "user", "parts": [{"type": "text", "text": t}]},
        short_texts,
    )


@st.composite
def conversations(draw: st.DrawFn, *, ends_with_assistant: bool | None = None) -> list[dict]:
    """A prior conversation: user/assistant turns; tool call ids unique across it."""
    turns = draw(st.integers(1, 3))
    messages: list[dict] = []
    for turn in range(turns):
        messages.append(draw(user_messages(f"u{turn}")))
        messages.append(draw(assistant_messages(prefix=f"p{turn}", mid=f"a{turn}")))
    last_is_assistant = draw(st.booleans()) if ends_with_assistant is None else ends_with_assistant
    if not last_is_assistant:
        messages.append(draw(user_messages(f"u{turns}")))
    return messages
