"""Names with NUL, other control characters or lone surrogates, and events that cannot be projected.

A name (chat id, tenant, actor, tool call id, tool name, message id, kind,
query parameter) ends up in a SQL text column; PostgreSQL refuses NUL there.
Such names are refused at the door with a chatledger error, before anything
is recorded. An event that cannot be projected anyway (stored by an older
version, or by hand) is quarantined: the rest of the store keeps working and
``verify`` names it.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chatledger import ChatLedgerError, ConversationStore, InvalidInputError, StoredDataError
from chatledger.adapters.persistence.config import parse_url
from chatledger.adapters.persistence.log import ConversationLog
from chatledger.adapters.responders import demo
from chatledger.domain.aggregate import Conversation, conversation_id
from chatledger.domain.events import ConversationStarted
from chatledger.domain.limits import NAME_LIMIT
from tests.integration.conftest import Backend

BAD = ["a\x00b", "\x00", "tab\there", "bell\x07", "del\x7f", "c1\x85", "lone\ud800"]


def paused(store: ConversationStore, chat: str = "paused") -> None:
    """A conversation waiting on the demo's approval."""
    store.start_conversation(chat)
    store.append_message(chat, demo.USER_MESSAGE)
    store.ingest(chat, demo.first_turn_chunks())


def entry_points(store: ConversationStore, bad: str) -> list[tuple[str, Any]]:
    """Each store call that takes a name, given ``bad`` in that name."""
    message = {"id": bad, "role": "user", "parts": [{"type": "text", "text": "hi"}]}
    tool_part = {
        "type": "tool-x",
        "toolCallId": bad,
        "state": "input-available",
        "input": {},
    }
    return [
        ("chat id", lambda: store.start_conversation(bad)),
        ("tenant", lambda: store.start_conversation("c", tenant=bad)),
        ("actor", lambda: store.start_conversation("c2", actor=bad)),
        ("message actor", lambda: store.append_message("paused", demo.USER_MESSAGE, actor=bad)),
        ("message id", lambda: store.append_message("paused", message)),
        (
            "tool call id in a message",
            lambda: store.append_message(
                "paused", {"id": "a1", "role": "assistant", "parts": [tool_part]}
            ),
        ),
        ("stream actor", lambda: store.open_stream("paused", actor=bad)),
        ("stream message id", lambda: store.open_stream("paused", message_id=bad)),
        (
            "approval id",
            lambda: store.respond_to_approval("paused", approval_id=bad, approved=True),
        ),
        (
            "approval actor",
            lambda: store.respond_to_approval(
                "paused", approval_id=demo.APPROVAL_ID, approved=True, actor=bad
            ),
        ),
        ("tool output call id", lambda: store.add_tool_output("paused", bad, output=1)),
        ("inbox tenant", lambda: store.pending_approvals(tenant=bad)),
        ("continuations tenant", lambda: store.pending_continuations(tenant=bad)),
        ("history actor", lambda: store.history("paused", actor=bad)),
        ("history kind", lambda: store.history("paused", kinds=[bad])),
        ("claim worker", lambda: store.claim_continuation(bad)),
    ]


def fuzz_points(store: ConversationStore, bad: str) -> list[tuple[str, Any]]:
    """The entry points, and free text and chunk fields that reach the read models."""
    chunks = [
        {"type": "start"},
        {"type": "tool-input-available", "toolCallId": bad, "toolName": bad, "input": {bad: bad}},
        {"type": "tool-approval-request", "approvalId": bad, "toolCallId": bad},
        {"type": "error", "errorText": bad},
        {"type": "finish"},
    ]
    return [
        *entry_points(store, bad),
        ("chunk names", lambda: store.ingest("fuzz", chunks)),
        (
            "approval reason",
            lambda: store.respond_to_approval(
                "paused", approval_id=demo.APPROVAL_ID, approved=False, reason=bad
            ),
        ),
        ("metadata", lambda: store.start_conversation(f"m-{len(bad)}", metadata={bad: bad})),
    ]


@pytest.mark.parametrize("bad", BAD, ids=[ascii(b) for b in BAD])
def test_names_with_control_characters_are_refused_at_the_door(backend: Backend, bad: str) -> None:
    """Every entry point refuses the name with InvalidInputError; nothing is recorded; the store serves."""
    store = backend.open()
    paused(store)
    head = store.operations.head()
    for what, call in entry_points(store, bad):
        with pytest.raises(InvalidInputError):
            call()
            pytest.fail(f"{what}: {bad!r} was accepted")
    assert store.operations.head() == head, "a refused name recorded something"
    assert store.messages("paused")[-1]["role"] == "assistant"
    assert [a.tool_call_id for a in store.pending_approvals()] == [demo.TOOL_CALL_ID]
    assert store.operations.verify().ok


def test_a_chunk_naming_a_tool_call_with_nul_is_refused_and_the_stream_goes_on(
    backend: Backend,
) -> None:
    """The chunk is refused (reported), the next good chunk applies, and reads work."""
    store = backend.open()
    store.start_conversation("c")
    with store.open_stream("c") as stream:
        stream.append({"type": "start"})
        for field in ("toolCallId", "toolName"):
            chunk = {"type": "tool-input-start", "toolCallId": "call_1", "toolName": "x"}
            chunk[field] = "bad\x00"
            received = stream.append(chunk)
            assert received.error is not None and field in str(received.error)
        assert stream.append({"type": "text-start", "id": "t"}).error is None
    assert store.messages("c")[0]["parts"] == [{"type": "text", "text": "", "state": "streaming"}]


def test_bad_choices_and_numbers_are_chatledger_errors(backend: Backend) -> None:
    """Outcome, state, trigger, non-string names, out-of-range numbers, huge ints, deep nesting."""
    store = backend.open()
    paused(store)
    deep: list[object] = []
    for _ in range(5000):
        deep = [deep]
    calls = [
        lambda: store.close_stream("paused", outcome="exploded"),
        lambda: store.add_tool_output("paused", demo.TOOL_CALL_ID, output=1, state="bogus"),
        lambda: store.open_stream("paused", trigger="bogus"),
        lambda: store.start_conversation("c", actor=42),  # type: ignore[arg-type]
        lambda: store.respond_to_approval(
            "paused",
            approval_id=demo.APPROVAL_ID,
            approved="yes",  # type: ignore[arg-type]
        ),
        lambda: store.history("paused", limit=-1),
        lambda: store.history("paused", after=2**63),
        lambda: store.messages("paused", at_version=2**63),
        lambda: store.messages("paused", at_version=-1),
        lambda: store.conversation("paused", at_version=2**70),
        lambda: store.start_conversation("c", metadata={"n": 10**5000}),
        lambda: store.add_tool_output("paused", demo.TOOL_CALL_ID, output=10**5000),
        lambda: store.add_tool_output("paused", demo.TOOL_CALL_ID, output=deep),
        lambda: store.append_message(
            "paused", {"id": "u9", "role": "user", "parts": [], "metadata": deep}
        ),
        lambda: store.append_message("paused", {"id": "u9", "role": "user", "parts": "x"}),
        lambda: store.pending_approvals(tenant=5),  # type: ignore[arg-type]
        lambda: store.history("paused", actor={"a": 1}),  # type: ignore[arg-type]
    ]
    for call in calls:
        with pytest.raises(InvalidInputError):
            call()
    assert store.operations.verify().ok


NAMES = st.text(
    alphabet=st.characters(codec=None, categories=["Cc", "Cs", "L", "N", "P"]), max_size=8
)


@pytest.mark.timeout(300)
def test_fuzzed_names_give_only_chatledger_errors_on_postgres(postgres_backend: Backend) -> None:
    """Hypothesis: names full of control characters and surrogates, into every entry point."""
    store = postgres_backend.open()
    paused(store)
    store.start_conversation("fuzz")
    points = len(fuzz_points(store, "x"))

    @settings(
        max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
    )
    @given(bad=NAMES, which=st.integers(min_value=0, max_value=points - 1))
    def check(bad: str, which: int) -> None:
        _, call = fuzz_points(store, bad)[which]
        with contextlib.suppress(ChatLedgerError):
            call()
        for chat in ("paused", "fuzz"):
            if store.status(chat).status == "streaming":  # a valid name opened a stream
                store.close_stream(chat, outcome="aborted")

    check()
    assert store.operations.quarantined() == []
    assert store.messages("fuzz") is not None and store.history("fuzz")
    report = store.operations.verify()
    assert report.ok, report.problems


def poison(backend: Backend, chat_id: str) -> None:
    """Record, past every check (as an older version could), a conversation whose id has NUL."""
    log = ConversationLog(parse_url(backend.url))
    try:
        conversation = Conversation._create(
            ConversationStarted,
            id=conversation_id("default", chat_id),
            tenant="default",
            chat_id=chat_id,
            actor="system",
            metadata=None,
        )
        log.record(conversation)
    finally:
        log.close()


def test_a_poison_event_is_quarantined_and_the_rest_keeps_working(
    durable_backend: Backend,
) -> None:
    """PostgreSQL refuses the row; the event is quarantined, reads and writes go on, verify names it."""
    store = durable_backend.open()
    store.start_conversation("before")
    poison(durable_backend, "evil\x00")
    paused(store, "after")
    assert store.messages("after")[0]["id"] == demo.USER_MESSAGE["id"]
    assert [a.chat_id for a in store.pending_approvals()] == ["after"]
    quarantined = store.operations.quarantined()
    if durable_backend.name == "postgres":
        assert [q.conversation_id for q in quarantined] == [conversation_id("default", "evil\x00")]
        assert "NUL" in quarantined[0].error
        report = store.operations.verify()
        assert any("is quarantined" in str(problem) for problem in report.problems), report
    else:  # SQLite stores NUL: nothing to quarantine
        assert quarantined == []
    assert store.operations.rebuild() > 0
    assert store.messages("after")[-1]["role"] == "assistant"


def test_a_store_opened_with_settings_that_do_not_fit_its_log_quarantines_nothing(
    tmp_path: Path,
) -> None:
    """Compressed events read without compression: the projector raises, nothing is set aside."""
    url = f"sqlite:///{tmp_path / 'compressed.db'}"
    with ConversationStore.open(url) as store:
        paused(store)
    with ConversationStore.open(url, compress=False) as store:
        with pytest.raises(StoredDataError):
            store.operations.rebuild()
        assert store.operations.quarantined() == []
    with ConversationStore.open(url) as store:
        assert store.operations.catch_up() > 0 and store.operations.quarantined() == []
        assert store.operations.verify().ok


def test_names_over_the_length_limit_are_refused_naming_the_limit(backend: Backend) -> None:
    """A name one character over NAME_LIMIT is refused everywhere (the limit named); one at it is kept."""
    store = backend.open()
    paused(store)
    head = store.operations.head()
    long = "x" * (NAME_LIMIT + 1)
    for what, call in entry_points(store, long):
        if what == "history kind":
            continue  # no such kind: refused as unknown
        with pytest.raises(InvalidInputError, match=str(NAME_LIMIT)):
            call()
            pytest.fail(f"{what}: a {len(long)}-character name was accepted")
    with store.open_stream("paused", continuation=True) as stream:
        for field in ("toolCallId", "toolName", "approvalId"):
            chunk = {"type": "tool-input-start", "toolCallId": "call_1", "toolName": "x"}
            chunk[field] = long
            received = stream.append(chunk)
            assert received.error is not None and str(NAME_LIMIT) in str(received.error)
    assert (
        store.messages("paused")[-1]["parts"]
        == store.messages("paused", at_version=head)[-1]["parts"]
    )
    longest = "y" * NAME_LIMIT
    assert store.start_conversation(longest, actor=longest, tenant=longest)
    store.append_message(longest, {**demo.USER_MESSAGE, "id": longest}, tenant=longest)
    assert store.messages(longest, tenant=longest)[0]["id"] == longest
