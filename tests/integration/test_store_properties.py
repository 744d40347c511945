"""Properties of the stored log on every backend: replay rebuilds the live state, snapshots
change nothing, garbage changes nothing."""

from __future__ import annotations

import copy
import json
import uuid
from typing import Any

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from chatledger import ChatLedgerError, ConversationStore, InvalidChunkError, StreamWriter, Verdict
from chatledger.domain.aggregate import Conversation
from chatledger.domain.conversation import ConversationState
from tests.conformance.strategies import ConversationStream, conversation_streams
from tests.integration.conftest import EXAMPLES, Backend
from tests.integration.garbage import garbage, garbage_messages
from tests.integration.strategies import FLUSH, Scenario, Step, scenarios, stream_chunks
from tests.support.ledger import (
    as_json,
    drop_snapshots,
    load_with_snapshots,
    replay_from_scratch,
    stored_records,
)

USER = {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "hi"}]}
PROBE = {"type": "data-probe", "data": {"after": "garbage"}}
"""A chunk that applies in any state: it appends a data part."""


def _examples(backend: Backend, scale: float = 1.0) -> Any:
    return settings(
        max_examples=max(10, int(EXAMPLES[backend.name] * scale)),
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
        deadline=None,
    )


def _new_chat() -> str:
    return f"chat-{uuid.uuid4().hex[:12]}"


def _write(store: ConversationStore, chat: str, scenario: Scenario) -> Conversation:
    """Write ``scenario``; return the last writer's in-memory conversation (the live state)."""
    store.start_conversation(chat)
    writer: StreamWriter | None = None
    for step in scenario.steps:
        if step.kind == "user":
            store.append_message(chat, copy.deepcopy(step.message or {}))
            continue
        if step.kind in ("approve", "output"):
            _act(store, chat, step)
            continue
        writer = store.open_stream(chat, continuation=step.continuation)
        for chunk in step.chunks:
            if chunk is FLUSH:
                writer.flush()
            else:
                writer.append(copy.deepcopy(chunk))
        if step.outcome is None:
            writer.flush()  # left open: everything received is committed, nothing closes it
        else:
            writer.close(step.outcome)
    assert writer is not None, "a scenario ends with a stream"
    return writer.conversation


def _act(store: ConversationStore, chat: str, step: Step) -> None:
    """A client action; the generator's model of tool states is rough, so a refusal is fine here."""
    try:
        if step.kind == "approve":
            store.respond_to_approval(
                chat, tool_call_id=step.call, approved=step.approved, reason="scripted"
            )
        elif step.error_text is not None:
            store.add_tool_output(chat, step.call, state="output-error", error_text=step.error_text)
        else:
            store.add_tool_output(chat, step.call, output=copy.deepcopy(step.output))
    except ChatLedgerError:
        pass


def _state(conversation: Conversation) -> str:
    """Everything a conversation's state holds, as canonical JSON (tool index included)."""
    state = conversation.state
    return as_json({"state": state.to_json(), "toolIndex": sorted(state.tool_index.items())})


def test_folding_the_stored_events_from_scratch_gives_the_live_state(backend: Backend) -> None:
    """For generated conversations, replaying every stored event rebuilds the writer's state."""
    store = backend.open(batch_chunks=8, batch_ms=600_000)

    @_examples(backend)
    @given(scenario=scenarios())
    def check(scenario: Scenario) -> None:
        chat = _new_chat()
        live = _write(store, chat, scenario)
        assert store.version(chat) == live.version
        assert _state(replay_from_scratch(store, chat)) == _state(live)
        assert as_json(store.messages(chat)) == as_json(live.state.messages)

    check()


def test_sdk_streams_written_after_imported_messages_replay_to_the_live_state(
    backend: Backend,
) -> None:
    """SDK-valid streams (conformance strategies) after imported messages replay exactly."""
    store = backend.open(batch_chunks=3, batch_ms=600_000)

    @_examples(backend, 0.5)
    @given(case=conversation_streams(), leave_open=st.booleans())
    def check(case: ConversationStream, leave_open: bool) -> None:
        chat = _new_chat()
        store.start_conversation(chat)
        for message in case.messages:
            store.append_message(chat, copy.deepcopy(message))
        writer = store.open_stream(
            chat,
            continuation=case.continuation,
            message_id=None if case.continuation else case.message_id,
        )
        for chunk in case.chunks:
            received = writer.append(copy.deepcopy(chunk))
            assert received.verdict is Verdict.APPLIED, (chunk, received)
        if leave_open:
            writer.flush()
        else:
            writer.close()
        assert _state(replay_from_scratch(store, chat)) == _state(writer.conversation)
        assert _state(load_with_snapshots(store, chat)) == _state(writer.conversation)

    check()


def test_messages_without_snapshots_equal_the_live_state(backend: Backend) -> None:
    """With every snapshot deleted, ``messages(at_version=version)`` gives the live messages."""
    store = backend.open(batch_chunks=8, batch_ms=600_000)

    @_examples(backend, 0.5)
    @given(scenario=scenarios())
    def check(scenario: Scenario) -> None:
        chat = _new_chat()
        live = _write(store, chat, scenario)
        drop_snapshots(store)
        version = store.version(chat)
        assert as_json(store.messages(chat, at_version=version)) == as_json(live.state.messages)
        assert _state(load_with_snapshots(store, chat)) == _state(live)

    check()


def test_loading_with_and_without_snapshots_gives_the_same_state_at_every_version(
    backend: Backend,
) -> None:
    """At every version, the newest snapshot plus later events equals the fold of all events."""
    store = backend.open(batch_chunks=8, batch_ms=600_000)

    @_examples(backend, 0.4)
    @given(scenario=scenarios())
    def check(scenario: Scenario) -> None:
        chat = _new_chat()
        _write(store, chat, scenario)
        for version in range(1, store.version(chat) + 1):
            with_snapshots = load_with_snapshots(store, chat, version)
            assert with_snapshots.version == version
            assert _state(with_snapshots) == _state(replay_from_scratch(store, chat, version)), (
                version
            )

    check()


def test_a_snapshot_round_trip_keeps_the_whole_state(backend: Backend) -> None:
    """``ConversationState.from_json(to_json())`` of any reachable state is the same state."""
    store = backend.open(batch_chunks=8, batch_ms=600_000)

    @_examples(backend, 0.4)
    @given(scenario=scenarios())
    def check(scenario: Scenario) -> None:
        live = _write(store, _new_chat(), scenario)
        restored = ConversationState.from_json(json.loads(json.dumps(live.state.to_json())))
        assert as_json(restored.to_json()) == as_json(live.state.to_json())
        assert sorted(restored.tool_index.items()) == sorted(live.state.tool_index.items())

    check()


def _live_view(writer: StreamWriter) -> str:
    """The writer's messages and fold state, without the position counter refusals advance
    and the stream's lease time (a refused chunk committed at once renews it: a commit happened)."""
    state = writer.conversation.state.to_json()
    assert state["stream"] is not None
    state["stream"].pop("nextSeq")
    state["stream"].pop("renewedAt", None)
    return as_json(state)


def _open_with_content(store: ConversationStore, prefix: list[Any]) -> tuple[str, StreamWriter]:
    chat = _new_chat()
    store.start_conversation(chat)
    store.append_message(chat, copy.deepcopy(USER))
    writer = store.open_stream(chat)
    # Content first, so that a ``start`` naming another message is refused too.
    for chunk in [
        {"type": "text-start", "id": "p"},
        {"type": "text-delta", "id": "p", "delta": "so far"},
        *prefix,
    ]:
        if chunk is FLUSH:
            writer.flush()
        else:
            writer.append(copy.deepcopy(chunk))
    writer.flush()
    return chat, writer


def _assert_refused_without_a_trace(
    store: ConversationStore, chat: str, writer: StreamWriter, junk: list[Any]
) -> None:
    """Each input is refused (InvalidChunkError); nothing stored or folded changes."""
    records = stored_records(store, chat)
    messages = as_json(store.messages(chat))
    live = _live_view(writer)
    position = writer.conversation.state.stream.next_seq  # type: ignore[union-attr]
    for item in junk:
        received = writer.append(item)  # anything raised here fails the property
        assert received.verdict is Verdict.REFUSED, f"accepted as {received.verdict}: {item!r}"
        assert isinstance(received.error, InvalidChunkError), repr(received.error)
        assert received.position == received.error.position == position
        assert f"position {position}" in str(received.error)
        assert received.error.chunk_type is None or isinstance(received.error.chunk_type, str)
        assert _live_view(writer) == live, "a refused chunk changed the live state"
        position += 1
    writer.flush()
    assert stored_records(store, chat)[: len(records)] == records, "an earlier stored event changed"
    assert as_json(store.messages(chat)) == messages, "a refused chunk changed the stored messages"

    received = writer.append(copy.deepcopy(PROBE))
    assert (received.verdict, received.position) == (Verdict.APPLIED, position)
    writer.close()
    assert store.messages(chat)[-1]["parts"][-1] == PROBE
    assert _state(replay_from_scratch(store, chat)) == _state(writer.conversation)


def test_garbage_chunks_are_refused_and_change_nothing(backend: Backend) -> None:
    """Arbitrary values, broken chunks and non-JSON objects are refused and change nothing."""
    store = backend.open(batch_chunks=8, batch_ms=600_000)

    @_examples(backend)
    @given(prefix=stream_chunks(), junk=st.lists(garbage(), min_size=1, max_size=6))
    def check(prefix: list[Any], junk: list[Any]) -> None:
        note(f"garbage, as Python sees it: {junk!r}")
        chat, writer = _open_with_content(store, prefix)
        _assert_refused_without_a_trace(store, chat, writer, junk)

    check()


# Inputs hypothesis cannot print (its reports repr them), each as a named case.


def _nested(depth: int) -> Any:
    value: Any = 0
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda: {"type": "data-deep", "data": _nested(5000)}, id="nested-5000-levels"),
        pytest.param(lambda: _nested(5000), id="bare-list-nested-5000-levels"),
        pytest.param(lambda: {"type": "data-big", "data": 10**5000}, id="integer-of-5001-digits"),
        pytest.param(lambda: 10**5000, id="bare-integer-of-5001-digits"),
    ],
)
def test_python_values_beyond_any_json_are_refused(store: ConversationStore, make: Any) -> None:
    """Nesting deeper than Python walks, and integers too long to print, are refused."""
    chat, writer = _open_with_content(store, [])
    _assert_refused_without_a_trace(store, chat, writer, [make()])


def _refused_or_stored(store: ConversationStore, chunk: Any) -> None:
    """``chunk`` is JSON the SDK accepts: it may be refused; if accepted it is stored faithfully."""
    chat, writer = _open_with_content(store, [])
    records = stored_records(store, chat)
    received = writer.append(chunk)
    if received.verdict is Verdict.REFUSED:
        assert isinstance(received.error, InvalidChunkError)
    writer.flush()  # must not raise: an accepted chunk that cannot be stored wedges the stream
    assert stored_records(store, chat)[: len(records)] == records
    writer.append(copy.deepcopy(PROBE))
    writer.close()
    assert _state(replay_from_scratch(store, chat)) == _state(writer.conversation)
    assert as_json(store.messages(chat)) == as_json(writer.conversation.state.messages)


def test_json_nested_three_hundred_levels_deep_is_refused_or_stored(
    store: ConversationStore,
) -> None:
    """A data chunk nested 300 levels deep (json.loads reads it) is refused, or stored intact."""
    _refused_or_stored(
        store, json.loads('{"type": "data-deep", "data": ' + "[" * 300 + "]" * 300 + "}")
    )


def test_a_lone_surrogate_in_a_chunk_is_refused_or_stored(store: ConversationStore) -> None:
    r"""A ``\ud800`` escape (valid JSON, a lone surrogate once parsed) is refused or stored."""
    _refused_or_stored(store, json.loads('{"type": "text-delta", "id": "p", "delta": "\\ud800"}'))


def test_garbage_messages_are_refused_with_a_chatledger_error_or_stored_intact(
    backend: Backend,
) -> None:
    """``append_message`` of hostile values raises only chatledger errors, then stores nothing."""
    store = backend.open()
    store.start_conversation("chat")

    @_examples(backend)
    @given(message=garbage_messages())
    def check(message: Any) -> None:
        note(f"message, as Python sees it: {message!r}")
        records = stored_records(store, "chat")
        try:
            store.append_message("chat", message)
        except ChatLedgerError:
            assert stored_records(store, "chat") == records, "a refused message changed the log"
            return
        assert as_json(store.messages("chat")[-1]) == as_json(message), "accepted, but changed"

    check()


def _deep_json(depth: int) -> Any:
    return json.loads("[" * depth + "]" * depth)


@pytest.mark.parametrize(
    ("chat_id", "options"),
    [
        pytest.param("chat-\ud800", {}, id="lone-surrogate-in-chat-id"),
        pytest.param("chat", {"tenant": "acme-\udfff"}, id="lone-surrogate-in-tenant"),
        pytest.param("chat", {"metadata": {"note": "\ud800"}}, id="lone-surrogate-in-metadata"),
        pytest.param("chat", {"metadata": {"x\ud800": 1}}, id="lone-surrogate-in-metadata-key"),
        pytest.param(
            "chat", {"metadata": {"deep": _deep_json(300)}}, id="metadata-300-levels-deep"
        ),
        pytest.param("chat", {"metadata": {"n": float("nan")}}, id="nan-in-metadata"),
        pytest.param("chat", {"metadata": {"s": {1, 2}}}, id="set-in-metadata"),
    ],
)
def test_hostile_values_given_to_start_conversation_raise_only_chatledger_errors(
    store: ConversationStore, chat_id: str, options: dict[str, Any]
) -> None:
    """A conversation that cannot be stored faithfully is refused with a chatledger error."""
    try:
        store.start_conversation(chat_id, **options)
    except ChatLedgerError:
        return
    # Accepted: then it must read back as given.
    tenant = options.get("tenant")
    assert store.messages(chat_id, tenant=tenant) == []
    assert store.version(chat_id, tenant=tenant) == 1


def _message(**extra: Any) -> dict[str, Any]:
    return {"id": "m1", "role": "user", "parts": [{"type": "text", "text": "hi"}], **extra}


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda: _message(metadata={"deep": _deep_json(300)}), id="metadata-300-deep"),
        pytest.param(lambda: _message(**{"x\ud800": float("inf")}), id="surrogate-key-non-json"),
        pytest.param(lambda: _message(metadata={"big": 10**5000}), id="integer-of-5001-digits"),
    ],
)
def test_hostile_values_given_to_append_message_raise_only_chatledger_errors(
    store: ConversationStore, make: Any
) -> None:
    """A message that cannot be stored faithfully is refused with a chatledger error."""
    store.start_conversation("chat")
    records = stored_records(store, "chat")
    message = make()
    try:
        store.append_message("chat", message)
    except ChatLedgerError:
        assert stored_records(store, "chat") == records
    else:
        assert as_json(store.messages("chat")[-1]) == as_json(message)
    store.append_message("chat", _message(id="m2"))
    assert store.messages("chat")[-1]["id"] == "m2"
