"""Compaction: a summary stands in for a range of messages in model input; every view keeps the originals."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatledger import ConversationStore
from chatledger.adapters.cli.commands import main
from chatledger.domain.convert import FORMATS
from chatledger.domain.errors import InvalidInputError, InvalidMessageError, StreamAlreadyOpenError
from tests.integration.conftest import Backend

SUMMARY = "The user asked about Paris and Rome; the assistant compared their museums."


def _user(message_id: str, text: str) -> dict[str, object]:
    return {"id": message_id, "role": "user", "parts": [{"type": "text", "text": text}]}


def _answer(store: ConversationStore, chat: str, message_id: str, text: str) -> None:
    store.ingest(
        chat,
        [
            {"type": "start", "messageId": message_id},
            {"type": "start-step"},
            {"type": "text-start", "id": "t"},
            {"type": "text-delta", "id": "t", "delta": text},
            {"type": "text-end", "id": "t"},
            {"type": "finish-step"},
            {"type": "finish", "finishReason": "stop"},
        ],
    )


def _talk(store: ConversationStore, chat: str, ai_sdk: int) -> None:
    store.start_conversation(chat, ai_sdk=ai_sdk, actor="user:alice")
    for n, (question, answer) in enumerate(
        [("Tell me about Paris", "Paris has the Louvre."),
         ("And Rome?", "Rome has the Vatican museums."),
         ("Which is bigger?", "The Louvre, by area.")], start=1
    ):  # fmt: skip
        store.append_message(chat, _user(f"u{n}", question), actor="user:alice")
        _answer(store, chat, f"a{n}", answer)


def _texts(model: list[dict[str, object]]) -> str:
    return repr(model)


@pytest.mark.parametrize("ai_sdk", [6, 7])
def test_model_input_reads_the_summary_and_messages_keep_the_originals(
    store: ConversationStore, ai_sdk: int
) -> None:
    """Every format shows the summary in place of the range; messages, older versions unchanged."""
    _talk(store, "c", ai_sdk)
    before_messages = store.messages("c")
    before_model = {f: store.model_messages("c", f) for f in FORMATS}
    version_before = store.version("c")

    count = store.compact(
        "c", from_message_id="u1", to_message_id="a2", summary=SUMMARY,
        actor="agent:summarizer", reason="manual",
    )  # fmt: skip

    assert count == 4
    assert store.messages("c") == before_messages  # every original, as before
    ai = store.model_messages("c")
    assert ai[0] == {"role": "system", "content": SUMMARY}
    assert [m["role"] for m in ai] == ["system", "user", "assistant"]
    assert "Paris has the Louvre" not in repr(ai) and "Which is bigger?" in repr(ai)
    anthropic = store.model_messages("c", "anthropic")
    assert anthropic["system"] == [{"type": "text", "text": SUMMARY}]
    assert [m["role"] for m in anthropic["messages"]] == ["user", "assistant"]
    chat = store.model_messages("c", "openai-chat")
    assert chat[0] == {"role": "system", "content": SUMMARY} and len(chat) == 3
    responses = store.model_messages("c", "openai-responses")
    assert responses[0] == {"type": "message", "role": "system", "content": SUMMARY}
    for f in FORMATS:  # a read before the compaction is as it was
        assert store.model_messages("c", f, at_version=version_before) == before_model[f]
    assert store.compactions("c", at_version=version_before) == []
    [record] = store.compactions("c")
    assert record["actor"] == "agent:summarizer" and record["reason"] == "manual"
    assert record["messageIds"] == ["u1", "a1", "u2", "a2"]
    assert record["summary"] == SUMMARY and record["version"] == version_before + 1
    [entry] = store.history("c", kinds=["messages-compacted"])
    assert entry.actor == "agent:summarizer" and entry.details["count"] == 4
    assert "compacted 4 messages" in entry.summary


def test_a_later_compaction_covers_earlier_ones_and_a_cut_undoes_it(
    store: ConversationStore,
) -> None:
    """Summaries of summaries replace the older whole; an edit inside the range lifts it."""
    _talk(store, "c", 7)
    store.compact("c", from_message_id="u1", to_message_id="a1", summary="one", actor="system")
    assert [m.get("content") for m in store.model_messages("c", "openai-chat")][:1] == ["one"]
    with pytest.raises(InvalidInputError, match="cuts through an earlier compaction"):
        store.compact("c", from_message_id="a1", to_message_id="a2", summary="x", actor="system")
    store.compact("c", from_message_id="u1", to_message_id="a2", summary="both", actor="system")
    model = store.model_messages("c", "openai-chat")
    assert [m["content"] for m in model if m["role"] == "system"] == ["both"]
    assert [c["messageIds"] for c in store.compactions("c")] == [[], ["u1", "a1", "u2", "a2"]]
    store.edit("c", "u2", _user("u2b", "And Madrid?"), actor="user:alice")
    model = store.model_messages("c", "openai-chat")  # "both" lost its end: "one" applies again
    assert [m["content"] for m in model if m["role"] == "system"] == ["one"]
    assert model[-1] == {"role": "user", "content": "And Madrid?"}


def test_bad_compactions_are_refused_and_record_nothing(store: ConversationStore) -> None:
    """Unknown ids, a backwards range, the latest message, an empty summary, an open stream."""
    _talk(store, "c", 6)
    version = store.version("c")
    with pytest.raises(InvalidMessageError):
        store.compact("c", from_message_id="nope", to_message_id="a1", summary="s", actor="x")
    with pytest.raises(InvalidInputError, match="comes after its last"):
        store.compact("c", from_message_id="a2", to_message_id="u1", summary="s", actor="x")
    with pytest.raises(InvalidInputError, match="leave the latest message"):
        store.compact("c", from_message_id="u1", to_message_id="a3", summary="s", actor="x")
    with pytest.raises(InvalidInputError, match="needs a summary"):
        store.compact("c", from_message_id="u1", to_message_id="a1", summary=" ", actor="x")
    store.append_message("c", _user("u4", "more"), actor="user:alice")
    store.open_stream("c", message_id="a4")
    with pytest.raises(StreamAlreadyOpenError):
        store.compact("c", from_message_id="u1", to_message_id="a1", summary="s", actor="x")
    assert store.version("c") == version + 2  # the message and the stream, nothing else


def test_compaction_survives_a_reopened_store(backend: Backend) -> None:
    """Stored and read back from the database (and its snapshots), on another store."""
    store = backend.open()
    _talk(store, "c", 7)
    store.compact("c", from_message_id="u1", to_message_id="a2", summary=SUMMARY, actor="system")
    other = backend.other_store(store)
    assert other.model_messages("c", "openai-chat")[0] == {"role": "system", "content": SUMMARY}
    assert other.conversation("c").state.compactions == store.conversation("c").state.compactions


def test_chatledger_compact_on_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``chatledger compact`` records it (summary from a file); a bad range is one error line."""
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    with ConversationStore.open(url) as store:
        _talk(store, "c", 6)
    summary = tmp_path / "summary.txt"
    summary.write_text(SUMMARY, encoding="utf-8")
    base = ["compact", "c", "--url", url, "--from", "u1", "--actor", "user:alice"]
    assert main([*base, "--to", "a2", "--summary-file", str(summary), "--reason", "long"]) == 0
    assert "compacted 4 message(s)" in capsys.readouterr().out
    assert main([*base, "--to", "a3", "--summary", "x"]) != 0
    assert "leave the latest message" in capsys.readouterr().err
    with ConversationStore.open(url) as store:
        [record] = store.compactions("c")
        assert (record["summary"], record["actor"], record["reason"]) == (
            SUMMARY,
            "user:alice",
            "long",
        )


def test_a_branch_switch_lifts_a_compaction_off_its_path_and_back(store: ConversationStore) -> None:
    """A compaction applies on the paths holding its range: switch away and back."""
    _talk(store, "c", 7)
    store.compact("c", from_message_id="u2", to_message_id="a2", summary="S", actor="system")
    store.edit("c", "u2", _user("u2b", "And Madrid?"), actor="user:alice")  # a sibling branch
    _answer(store, "c", "a2b", "Madrid has the Prado.")
    assert "S" not in [m.get("content") for m in store.model_messages("c", "openai-chat")]
    store.switch_branch("c", "u2", actor="user:alice")
    model = store.model_messages("c", "openai-chat")
    assert [m["role"] for m in model] == ["user", "assistant", "system", "user", "assistant"]
    assert model[2] == {"role": "system", "content": "S"}
