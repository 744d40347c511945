"""Every public store entry point, given arbitrary JSON where a value belongs, answers in chatledger's terms.

A value of the wrong shape (a list or an object where a string belongs,
a huge number, deep nesting, a 100,000-character name) is refused with a
chatledger error, or, for a chunk on an open stream, a refused chunk; no other
exception ever reaches the caller, and a refusal changes nothing that was
stored. Each example draws one entry point (a store method, a stream
writer's ``append``, a message or a chunk) and replaces one of its arguments
or fields with such a value.
"""

from __future__ import annotations

import copy
import io
import os
import reprlib
import traceback
from collections import Counter
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chatledger import ChatLedgerError, ConversationStore
from chatledger.adapters.responders import demo
from chatledger.domain.stream_rules import Verdict

EXAMPLES = int(os.environ.get("CHATLEDGER_FUZZ_EXAMPLES", "300"))
"""Examples per run (``CHATLEDGER_FUZZ_EXAMPLES``): each entry point and field is reached a few
times in seconds; thousands run in a minute or two."""

_deep = st.integers(1, 3000).map(lambda n: _nest(n))
_huge = st.sampled_from([2**63, -(2**63) - 1, 2**200, 10**400, 1e308, -1e308])
_long = st.sampled_from(["x" * 100_000, "é" * 5_000, "a" * 257])
json_values = (
    st.recursive(
        st.none()
        | st.booleans()
        | st.integers()
        | _huge
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.text(max_size=6),
        lambda inner: (
            st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
        ),
        max_leaves=6,
    )
    | _deep
    | _long
)
"""Arbitrary JSON: lists and objects where strings belong, huge numbers, deep nesting, long strings."""


def _nest(depth: int) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = [value]
    return value


CHAT = "paused"
STREAMING = "streaming"

_CHUNKS: list[dict[str, Any]] = [
    {"type": "text-delta", "id": "t", "delta": "d"},
    {"type": "text-start", "id": "t2"},
    {"type": "text-end", "id": "t"},
    {"type": "reasoning-start", "id": "r"},
    {"type": "tool-input-start", "toolCallId": "g2", "toolName": "weather"},
    {"type": "tool-input-delta", "toolCallId": "g1", "inputTextDelta": "{"},
    {"type": "tool-input-available", "toolCallId": "g1", "toolName": "weather", "input": {}},
    {"type": "tool-approval-request", "approvalId": "a1", "toolCallId": "g1"},
    {"type": "tool-output-available", "toolCallId": "g1", "output": {"ok": True}},
    {"type": "tool-output-error", "toolCallId": "g1", "errorText": "failed"},
    {"type": "tool-output-denied", "toolCallId": "g1"},
    {"type": "tool-approval-response", "approvalId": "a1", "approved": True},
    {"type": "source-url", "sourceId": "s", "url": "https://example.com"},
    {"type": "data-weather", "data": {"t": 1}, "id": "w"},
    {"type": "message-metadata", "messageMetadata": {"a": 1}},
    {"type": "start-step"},
    {"type": "finish-step"},
    {"type": "finish", "finishReason": "stop"},
    {"type": "error", "errorText": "boom"},
]
"""A chunk of each kind, valid on the stream ``fresh_store`` leaves open."""

_FIELDS = ("type", "id", "toolCallId", "toolName", "approvalId", "messageId", "delta")
"""Fields a fuzzed chunk or part may get (besides its own): the names read models keep."""

_MESSAGES: list[dict[str, Any]] = [
    {"id": "u9", "role": "user", "parts": [{"type": "text", "text": "hi"}]},
    {
        "id": "a9",
        "role": "assistant",
        "parts": [
            {
                "type": "tool-weather",
                "toolCallId": "m1",
                "state": "approval-requested",
                "input": {},
                "approval": {"id": "ma1"},
            }
        ],
    },
]

Call = Callable[[ConversationStore, Any], Any]
_USER = demo.USER_MESSAGE


def _calls() -> dict[str, tuple[Call, ...]]:
    """Each entry point with each of its arguments in turn replaced by the drawn value ``v``."""
    return {
        "start_conversation": (
            lambda s, v: s.start_conversation(v),
            lambda s, v: s.start_conversation("new", tenant=v),
            lambda s, v: s.start_conversation("new", actor=v),
            lambda s, v: s.start_conversation("new", metadata=v),
            lambda s, v: s.start_conversation("new", ai_sdk=v),
            lambda s, v: s.start_conversation("new", exist_ok=v),
        ),
        "append_message": (
            lambda s, v: s.append_message(v, _USER),
            lambda s, v: s.append_message(CHAT, v),
            lambda s, v: s.append_message(CHAT, _USER, actor=v),
            lambda s, v: s.append_message(CHAT, _USER, tenant=v),
        ),
        "add_tool_output": (
            lambda s, v: s.add_tool_output(CHAT, v, output=1),
            lambda s, v: s.add_tool_output(CHAT, demo.TOOL_CALL_ID, output=v),
            lambda s, v: s.add_tool_output(CHAT, demo.TOOL_CALL_ID, output=1, state=v),
            lambda s, v: s.add_tool_output(
                CHAT, demo.TOOL_CALL_ID, state="output-error", error_text=v
            ),
            lambda s, v: s.add_tool_output(CHAT, demo.TOOL_CALL_ID, output=1, auto_continue=v),
            lambda s, v: s.add_tool_output(CHAT, demo.TOOL_CALL_ID, output=1, actor=v),
        ),
        "respond_to_approval": (
            lambda s, v: s.respond_to_approval(CHAT, approved=v, approval_id=demo.APPROVAL_ID),
            lambda s, v: s.respond_to_approval(CHAT, approved=True, approval_id=v),
            lambda s, v: s.respond_to_approval(CHAT, approved=True, tool_call_id=v),
            lambda s, v: s.respond_to_approval(
                CHAT, approved=False, approval_id=demo.APPROVAL_ID, reason=v
            ),
            lambda s, v: s.respond_to_approval(
                CHAT, approved=True, approval_id=demo.APPROVAL_ID, actor=v
            ),
        ),
        "regenerate": (
            lambda s, v: s.regenerate(CHAT, v),
            lambda s, v: s.regenerate(CHAT, reason=v),
        ),
        "cut": (
            lambda s, v: s.cut(CHAT, v),
            lambda s, v: s.cut(CHAT, _USER["id"], trigger=v),
        ),
        "edit": (
            lambda s, v: s.edit(CHAT, v, _USER),
            lambda s, v: s.edit(CHAT, _USER["id"], v),
        ),
        "set_title": (lambda s, v: s.set_title(CHAT, v),),
        "set_metadata": (lambda s, v: s.set_metadata(CHAT, v),),
        "redact": (
            lambda s, v: s.redact(CHAT, tool_call_id=v, actor="op", reason="r"),
            lambda s, v: s.redact(CHAT, message_id=v, actor="op", reason="r"),
            lambda s, v: s.redact(
                CHAT, tool_call_id=demo.TOOL_CALL_ID, fields=v, actor="op", reason="r"
            ),
            lambda s, v: s.redact(CHAT, tool_call_id=demo.TOOL_CALL_ID, actor=v, reason="r"),
            lambda s, v: s.redact(CHAT, tool_call_id=demo.TOOL_CALL_ID, actor="op", reason=v),
        ),
        "open_stream": (
            lambda s, v: s.open_stream(CHAT, actor=v),
            lambda s, v: s.open_stream(CHAT, continuation=v),
            lambda s, v: s.open_stream(CHAT, trigger=v),
            lambda s, v: s.open_stream(CHAT, message_id=v),
            lambda s, v: s.open_stream(CHAT, request_id=v),
            lambda s, v: s.open_stream(CHAT, user_message=v),
            lambda s, v: s.open_stream(CHAT, user_message=_msg("u8"), user_actor=v),
        ),
        "close_stream": (
            lambda s, v: s.close_stream(STREAMING, v),
            lambda s, v: s.close_stream(STREAMING, outcome=v),
            lambda s, v: s.close_stream(STREAMING, reason=v),
            lambda s, v: s.close_stream(STREAMING, actor=v),
        ),
        "ingest": (
            lambda s, v: s.ingest(CHAT, v),
            lambda s, v: s.ingest(CHAT, [v]),
            lambda s, v: s.ingest(CHAT, [{"type": "start"}], outcome=v),
            lambda s, v: s.ingest(CHAT, [{"type": "start"}], continuation=v),
        ),
        "reads": (
            lambda s, v: s.messages(v),
            lambda s, v: s.messages(CHAT, at_version=v),
            lambda s, v: s.messages(CHAT, at_time=v),
            lambda s, v: s.model_messages(CHAT, v),
            lambda s, v: s.model_messages(CHAT, unanswered=v),
            lambda s, v: s.model_messages(CHAT, ignore_incomplete_tool_calls=v),
            lambda s, v: s.history(CHAT, kinds=v),
            lambda s, v: s.history(CHAT, actor=v),
            lambda s, v: s.history(CHAT, after=v),
            lambda s, v: s.history(CHAT, limit=v),
            lambda s, v: s.status(v),
            lambda s, v: s.status(CHAT, tenant=v),
            lambda s, v: s.steering(v),
            lambda s, v: s.version(v),
            lambda s, v: s.conversation(CHAT, at_version=v),
            lambda s, v: s.ai_sdk_of(v),
            lambda s, v: list(s.follow(CHAT, after=v, timeout=0)),
        ),
        "inbox": (
            lambda s, v: s.pending_approvals(tenant=v),
            lambda s, v: s.pending_continuations(tenant=v),
            lambda s, v: s.claim_continuation(v),
            lambda s, v: s.claim_continuation("w", lease_seconds=v),
            lambda s, v: s.claim_continuation("w", chat_id=v),
            lambda s, v: s.claim_continuation("w", min_age_seconds=v),
            lambda s, v: s.list_conversations(query=v),
            lambda s, v: s.list_conversations(status=v),
            lambda s, v: s.list_conversations(limit=v),
            lambda s, v: s.list_conversations(cursor=v),
            lambda s, v: s.list_conversations(updated_before=v),
        ),
        "operations": (
            lambda s, v: s.operations.verify(v),
            lambda s, v: s.operations.export(v, io.StringIO()),
        ),
    }


def _msg(message_id: str) -> dict[str, Any]:
    return {"id": message_id, "role": "user", "parts": [{"type": "text", "text": "hi"}]}


CALLS = [
    (name, index, call) for name, calls in _calls().items() for index, call in enumerate(calls)
]


@st.composite
def fuzzed_chunk(draw: st.DrawFn) -> dict[str, Any]:
    """A valid chunk with one field (its own or a name field) set to an arbitrary JSON value."""
    chunk = copy.deepcopy(draw(st.sampled_from(_CHUNKS)))
    chunk[draw(st.sampled_from(sorted({*chunk, *_FIELDS})))] = draw(json_values)
    return chunk


@st.composite
def fuzzed_message(draw: st.DrawFn) -> dict[str, Any]:
    """A valid message with one field of it or of its part set to an arbitrary JSON value."""
    message = copy.deepcopy(draw(st.sampled_from(_MESSAGES)))
    part = message["parts"][0]
    where = draw(st.sampled_from(["message", "part", "approval"]))
    if where == "message":
        message[draw(st.sampled_from(["id", "role", "parts", "metadata"]))] = draw(json_values)
    elif where == "part" or "approval" not in part:
        part[draw(st.sampled_from(sorted({*part, *_FIELDS})))] = draw(json_values)
    else:
        part["approval"][draw(st.sampled_from(["id", "approved", "reason"]))] = draw(json_values)
    return message


def fresh_store() -> ConversationStore:
    """A memory store: a conversation paused on an approval, and one with a stream open."""
    store = ConversationStore.open("memory://")
    store.start_conversation(CHAT)
    store.append_message(CHAT, _USER)
    store.ingest(CHAT, demo.first_turn_chunks())
    store.start_conversation(STREAMING)
    store.append_message(STREAMING, _msg("u1"))
    return store


def _open_writer(store: ConversationStore) -> Any:
    writer = store.open_stream(STREAMING)
    for chunk in (
        {"type": "start", "messageId": "s1"},
        {"type": "start-step"},
        {"type": "text-start", "id": "t"},
        {"type": "tool-input-start", "toolCallId": "g1", "toolName": "weather"},
    ):
        writer.append(chunk)
    writer.flush()
    return writer


def _stored(store: ConversationStore) -> dict[str, Any]:
    """What a refusal must leave as it was: every conversation's messages and steering queue."""
    return {
        chat: (store.messages(chat), store.steering(chat), store.status(chat).to_json())
        for chat in (CHAT, STREAMING)
    }


def _run_one(
    store: ConversationStore, kind: str, target: Any, value: Any
) -> tuple[str, str | None]:
    """Run one example: its outcome, and what went wrong (None when nothing did).

    Outcomes: ``accepted``; ``refused`` (a chatledger error, or a refused
    chunk, with nothing stored changed); ``changed`` (refused, but something
    stored changed: a chunk's refusal is recorded, nothing else is); ``other``
    (an exception that is no chatledger error).
    """
    writer = _open_writer(store) if kind == "chunk" else None
    before = _stored(store)
    versions = {chat: store.version(chat) for chat in (CHAT, STREAMING)}
    try:
        if writer is not None:
            received = writer.append(value)
            writer.flush()
            if received.verdict is not Verdict.REFUSED:
                return "accepted", None
        else:
            target(store, value)
            return "accepted", None
    except ChatLedgerError:
        pass
    except Exception:
        return "other", traceback.format_exc(limit=-3)
    if _stored(store) != before or (
        writer is None and {chat: store.version(chat) for chat in (CHAT, STREAMING)} != versions
    ):
        return "changed", "a refusal changed what is stored"
    return "refused", None


def test_arbitrary_json_anywhere_raises_only_chatledger_errors() -> None:
    """Fuzz every entry point; any exception that is not a chatledger error is collected and shown."""
    outcomes: Counter[str] = Counter()
    others: list[str] = []
    message_calls = [c for c in CALLS if c[0] in ("append_message", "edit", "open_stream")]

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(
        data=st.data(),
        kind=st.sampled_from(["call", "chunk", "message"]),
    )
    def run(data: st.DataObject, kind: str) -> None:
        store = fresh_store()
        try:
            if kind == "call":
                name, index, target = data.draw(st.sampled_from(CALLS))
                value = data.draw(json_values)
                label = f"{name}[{index}]"
            elif kind == "chunk":
                target, value, label = None, data.draw(fuzzed_chunk()), "append"
            else:
                message = data.draw(fuzzed_message())
                value = message
                target = {
                    "append_message": lambda s, v: s.append_message(CHAT, v),
                    "edit": lambda s, v: s.edit(CHAT, _USER["id"], v),
                    "open_stream": lambda s, v: s.open_stream(CHAT, user_message=v),
                }[data.draw(st.sampled_from([c[0] for c in message_calls]))]
                label = "message"
            outcome, trace = _run_one(store, kind, target, value)
            outcomes[outcome] += 1
            if outcome in ("other", "changed"):
                others.append(f"{label} {reprlib.repr(value)}\n{trace}")
        finally:
            store.close()

    run()
    print(f"examples: {sum(outcomes.values())}, outcomes: {dict(outcomes)}")
    assert sum(outcomes.values()) >= EXAMPLES // 2
    assert not others, (
        f"{len(others)} failures (other exceptions, or refusals that changed what is stored), e.g.:\n"
        + "\n".join(others[:5])
    )
