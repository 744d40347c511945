"""``ChatLedgerConversationStore`` keeps Pydantic AI's store contract under concurrency and aliasing.

Pydantic AI ships no tests of its ``ConversationStore`` contract, so these
check ours against the contract's docstrings and, where it says what a store
does, side by side with Pydantic AI's own ``InMemoryConversationStore`` (same
calls, same results): two writers saving one revision, objects given to or
returned by the store changed afterwards, and entries read by an instance
that never read their conversation. Every test runs on memory, SQLite and
PostgreSQL.
"""

from __future__ import annotations

import asyncio
import threading
from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic_ai.conversation import Conversation
from pydantic_ai.conversation_store import (
    ConversationConflict,
    ConversationEntry,
    ConversationRecord,
    InMemoryConversationStore,
)
from pydantic_ai.conversation_store import ConversationStore as PydanticAIStore
from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart

from chatledger.adapters.frameworks.pydantic_ai import ChatLedgerConversationStore
from tests.integration.conftest import Backend

ROUNDS = 8


def run(coroutine: Any) -> Any:
    """Run a coroutine to completion (the tests are synchronous)."""
    return asyncio.run(coroutine)


AT = datetime(2026, 1, 1, tzinfo=UTC)


def turn(prompt: str, answer: str) -> list[Any]:
    """A request and its response (fixed times, so equal turns compare equal)."""
    return [
        ModelRequest(parts=[UserPromptPart(prompt, timestamp=AT)], timestamp=AT),
        ModelResponse(parts=[TextPart(answer)], timestamp=AT),
    ]


def _save_both_at_once(
    first: ChatLedgerConversationStore, second: ChatLedgerConversationStore, chat: str
) -> list[str]:
    """Two workers load the same revision and save a different turn at the same moment."""
    loaded = [run(first.load(chat)), run(second.load(chat))]
    assert loaded[0] is not None and loaded[1] is not None
    assert loaded[0].revision == loaded[1].revision
    start = threading.Barrier(2)
    outcomes: list[str] = ["", ""]

    def save(index: int, pai: ChatLedgerConversationStore) -> None:
        conversation = loaded[index]
        conversation.messages.extend(turn(f"from worker {index}", f"answer {index}"))
        start.wait(timeout=30)
        try:
            run(pai.save(conversation))
            outcomes[index] = "saved"
        except ConversationConflict:
            outcomes[index] = "conflict"
        except Exception as error:
            outcomes[index] = f"{type(error).__name__}: {error}"

    threads = [threading.Thread(target=save, args=(i, p)) for i, p in enumerate((first, second))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return outcomes


def test_two_workers_saving_one_revision_one_wins_one_conflicts(backend: Backend) -> None:
    first = ChatLedgerConversationStore(backend.open())
    second = ChatLedgerConversationStore(backend.other_store(first.store))
    run(first.save(Conversation(messages=turn("hi", "hello"), conversation_id="race")))
    for _ in range(ROUNDS):
        outcomes = _save_both_at_once(first, second, "race")
        assert sorted(outcomes) == ["conflict", "saved"], outcomes
        winner = outcomes.index("saved")
        loaded = run(ChatLedgerConversationStore(first.store).load("race"))
        assert loaded is not None
        assert loaded.messages[-2].parts[0].content == f"from worker {winner}"  # type: ignore[union-attr]
    history = run(ChatLedgerConversationStore(second.store).load("race"))
    assert history is not None and len(history.messages) == 2 + 2 * ROUNDS  # no turn was cut


def test_a_write_against_a_stale_revision_leaves_nothing(backend: Backend) -> None:
    """The contract: a conflict leaves neither the record nor its entries behind."""
    for store in (ChatLedgerConversationStore(backend.open()), InMemoryConversationStore()):
        run(store.save(Conversation(messages=turn("hi", "hello"), conversation_id="s")))
        record = run(store.read_record("s"))
        entry = ConversationEntry(parent_id=record.head_id, message=turn("x", "y")[0])
        stale = ConversationRecord(conversation_id="s", head_id=entry.id)
        with pytest.raises(ConversationConflict):
            run(store.write_record(stale, new_entries=[entry], expected_revision="not-it"))
        assert run(store.read_record("s")) == record
        loaded = run(store.load("s"))
        assert loaded is not None and loaded.messages == turn("hi", "hello")


def _stores(backend: Backend) -> list[PydanticAIStore]:
    return [ChatLedgerConversationStore(backend.open()), InMemoryConversationStore()]


def test_changing_a_loaded_or_saved_conversation_changes_nothing_stored(backend: Backend) -> None:
    """As ``InMemoryConversationStore``: the store keeps and gives copies."""
    for store in _stores(backend):
        saved = Conversation(messages=turn("hi", "hello"), conversation_id="c")
        run(store.save(saved))
        saved.messages[0].parts[0].content = "changed after save"  # type: ignore[union-attr]
        loaded = run(store.load("c"))
        assert loaded is not None
        assert loaded.messages == turn("hi", "hello"), type(store).__name__
        loaded.messages[1].parts[0].content = "changed after load"  # type: ignore[union-attr]
        entries = run(store.load_entries("c"))
        assert [entry.message for entry in entries] == turn("hi", "hello"), type(store).__name__
        again = run(store.load("c"))
        assert again is not None and again.messages == turn("hi", "hello"), type(store).__name__


def test_a_branch_back_to_an_old_tip_writes_the_stored_messages(backend: Backend) -> None:
    """An edit made to a loaded conversation never reaches the log through a branch."""
    for store in _stores(backend):
        run(store.save(Conversation(messages=turn("one", "1"), conversation_id="b")))
        loaded = run(store.load("b"))
        assert loaded is not None
        loaded.messages.extend(turn("two", "2"))
        run(store.save(loaded))
        old_tip = run(store.read_record("b")).head_id
        branched = run(store.branch("b", at=2, expected_revision=loaded.revision))
        branched.messages.extend(turn("three", "3"))
        run(store.save(branched))
        edited = run(store.load("b"))
        assert edited is not None
        for message in edited.messages:  # edit every object the store handed out
            message.parts[0].content = "edited"  # type: ignore[union-attr]
        back = run(store.branch("b", from_entry=old_tip, expected_revision=edited.revision))
        expected = turn("one", "1") + turn("two", "2")
        assert back.messages == expected, type(store).__name__
        reloaded = run(store.load("b"))
        assert reloaded is not None and reloaded.messages == expected, type(store).__name__


def test_a_fresh_instance_reads_stored_entries(backend: Backend) -> None:
    """``read_entry`` and ``read_history`` answer for any stored entry, read first or not."""
    writer = ChatLedgerConversationStore(backend.open())
    entries = run(writer.save(Conversation(messages=turn("hi", "hello"), conversation_id="f")))
    assert len(entries) == 2
    fresh = ChatLedgerConversationStore(backend.other_store(writer.store))
    assert run(fresh.read_entry(entries[0].id)) == entries[0]
    other = ChatLedgerConversationStore(backend.other_store(writer.store))
    assert run(other.read_history(entries[-1].id)) == entries
    with pytest.raises(KeyError):
        run(ChatLedgerConversationStore(writer.store).read_entry("no-such-entry"))


async def _script(store: PydanticAIStore) -> list[Any]:
    """One sequence of contract calls; what each returned, with revisions and times left out."""
    seen: list[Any] = []

    def record(value: ConversationRecord | None) -> Any:
        if value is None:
            return None
        return (value.conversation_id, value.scope, value.forked_from, len(value.branches))

    first = Conversation(messages=turn("one", "1"), conversation_id="a")
    seen.append(len(await store.save(first, scope="alice")))
    loaded = await store.load("a")
    assert loaded is not None
    loaded.messages.extend(turn("two", "2"))
    seen.append(len(await store.save(loaded)))
    seen.append(len(await store.save(loaded)))  # nothing new
    seen.append([m.parts[0].content for m in (await store.load("a", limit=2)).messages])  # type: ignore[union-attr]
    branched = await store.branch("a", at=2, expected_revision=loaded.revision)
    branched.messages.extend(turn("three", "3"))
    await store.save(branched)
    seen.append(record(await store.read_record("a")))
    fork = await store.fork("a", at=2, new_conversation_id="b")
    seen.append([m.parts[0].content for m in fork.messages])  # type: ignore[union-attr]
    seen.append(sorted(r.conversation_id for r in await store.list_conversations()))
    seen.append([r.conversation_id for r in await store.list_conversations(scope="alice")])
    try:
        await store.save(Conversation(messages=turn("x", "y"), conversation_id="b"))
    except ConversationConflict:
        seen.append("conflict: b exists")
    await store.delete("a", scope="bob")  # another scope: left as it is
    seen.append(record(await store.read_record("a")))
    await store.delete("a")
    seen.append(await store.load("a"))
    seen.append(sorted(r.conversation_id for r in await store.list_conversations()))
    again = Conversation(messages=turn("new", "life"), conversation_id="a")
    await store.save(again)
    seen.append([m.parts[0].content for m in (await store.load("a")).messages])  # type: ignore[union-attr]
    return seen


def test_the_same_calls_give_the_same_results_as_the_in_memory_store(backend: Backend) -> None:
    ours = run(_script(ChatLedgerConversationStore(backend.open())))
    theirs = run(_script(InMemoryConversationStore()))
    assert ours == theirs
