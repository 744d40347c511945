"""The conversation list: summaries, full-text search, filters, cursor paging, titles, tenants, rebuilds."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from chatledger import ConversationStore
from chatledger.domain.errors import ConversationNotFoundError, InvalidInputError
from chatledger.projections.listing import ConversationSummary
from tests.integration.conftest import Backend
from tests.integration.hitl_support import (
    ALICE,
    BOB,
    DELETE,
    WIRE,
    new_chat,
    paused_turn,
    text_chunks,
    user,
)


def _ids(rows: list[ConversationSummary]) -> list[str]:
    return [row.chat_id for row in rows]


def _chat(store: ConversationStore, chat: str, text: str, *, tenant: str | None = None) -> None:
    store.start_conversation(chat, tenant=tenant, actor=ALICE)
    store.append_message(chat, user(f"{chat}-u1", text), tenant=tenant, actor=ALICE)


def _answer(store: ConversationStore, chat: str, text: str) -> None:
    chunks = [{"type": "start"}, *text_chunks("t1", text), {"type": "finish"}]
    store.ingest(chat, chunks, actor="agent:bot")


def test_a_summary_shows_title_times_counts_status_and_pending_approvals(
    store: ConversationStore,
) -> None:
    """Untitled: the first user text; counts and status follow the conversation; approvals are counted."""
    paused_turn(store, "c1", (DELETE, WIRE))
    [row] = store.list_conversations().conversations
    assert row.chat_id == "c1"
    assert row.title == "Please clean up the old report."
    assert not row.titled
    assert row.message_count == 2
    assert row.status == "awaiting-approval"
    assert row.pending_approvals == 2
    assert row.version == store.version("c1")
    assert row.created_at <= row.updated_at
    store.respond_to_approval("c1", approved=False, tool_call_id=DELETE.call_id, actor=BOB)
    [row] = store.list_conversations().conversations
    assert row.pending_approvals == 1


def test_a_title_set_wins_over_the_first_user_text_and_is_audited(
    store: ConversationStore,
) -> None:
    """set_title records an event (with its actor); None goes back to the derived title."""
    _chat(store, "c1", "What is the capital of France?")
    assert store.set_title("c1", "  Geography   quiz ", actor=BOB) is True
    assert store.set_title("c1", "Geography quiz", actor=BOB) is False  # already so: no event
    [row] = store.list_conversations().conversations
    assert (row.title, row.titled) == ("Geography quiz", True)
    [entry] = store.history("c1", kinds=["title-set"])
    assert entry.actor == BOB and entry.details["title"] == "Geography quiz"
    store.set_title("c1", None)
    [row] = store.list_conversations().conversations
    assert (row.title, row.titled) == ("What is the capital of France?", False)


def test_metadata_is_replaced_whole_and_audited(store: ConversationStore) -> None:
    """set_metadata replaces the metadata; the list shows it; the timeline has the change."""
    _chat(store, "c1", "hello")
    assert store.set_metadata("c1", {"customer": "acme", "priority": 2}) is True
    assert store.set_metadata("c1", {"customer": "acme", "priority": 2}) is False
    store.set_metadata("c1", {"customer": "globex"})
    [row] = store.list_conversations().conversations
    assert row.metadata == {"customer": "globex"}
    assert [e.kind for e in store.history("c1", kinds=["metadata-set"])] == ["metadata-set"] * 2


def test_bad_titles_and_metadata_are_refused_clearly(store: ConversationStore) -> None:
    _chat(store, "c1", "hello")
    with pytest.raises(InvalidInputError, match="blank"):
        store.set_title("c1", "   ")
    with pytest.raises(InvalidInputError, match="at most 200"):
        store.set_title("c1", "x" * 201)
    with pytest.raises(InvalidInputError, match="JSON object"):
        store.set_metadata("c1", ["not", "a", "dict"])  # type: ignore[arg-type]
    with pytest.raises(ConversationNotFoundError):
        store.set_title("nope", "x")
    assert store.version("c1") == 2


def test_search_finds_every_word_as_a_prefix_in_titles_and_all_message_text(
    store: ConversationStore,
) -> None:
    _chat(store, "deploy", "How do I deploy to production?")
    _chat(store, "cake", "A recipe for chocolate cake, please")
    _answer(store, "cake", "Preheat the oven to 180 degrees.")
    _chat(store, "misc", "Tell me something")
    store.set_title("misc", "Kubernetes notes")

    def found(query: str) -> set[str]:
        return set(_ids(store.list_conversations(query=query).conversations))

    assert found("deploy") == {"deploy"}
    assert found("PRODUCT deplo") == {"deploy"}  # case-insensitive prefixes, every word
    assert found("oven") == {"cake"}  # the assistant's text too
    assert found("kubernetes") == {"misc"}  # and the title set
    assert found("chocolate oven") == {"cake"}
    assert found("chocolate production") == set()
    assert found('"); DROP TABLE x; -- *:') == set()  # operators are not syntax
    assert found("  ") == {"deploy", "cake", "misc"}  # no words: no filter


def test_search_words_joined_by_underscores_are_found_not_a_server_error(
    store: ConversationStore,
) -> None:
    """``otel_exporter`` (found by the HTTP fuzz: SQLite's index splits it in two, a phrase it refused)."""
    _chat(store, "otel", "Configure the otel_exporter endpoint")
    _chat(store, "other", "Nothing about exports here")

    def found(query: str) -> set[str]:
        return set(_ids(store.list_conversations(query=query).conversations))

    assert found("otel_exporter") == {"otel"}
    assert found("otel_exp") == {"otel"}
    assert found("_exporter_") == {"otel"}
    assert found("otel_nothing") == set()


def test_status_and_update_time_filters(store: ConversationStore) -> None:
    _chat(store, "idle", "hi")
    paused_turn(store, "waiting")
    assert _ids(store.list_conversations(status="awaiting-approval").conversations) == ["waiting"]
    rows = store.list_conversations().conversations
    newest = max(row.updated_at for row in rows)
    assert _ids(store.list_conversations(updated_after=newest).conversations) == []
    before = store.list_conversations(updated_before=newest).conversations
    assert _ids(before) == ["idle"]
    later = datetime.now(UTC) + timedelta(hours=1)
    assert len(store.list_conversations(updated_before=later).conversations) == 2
    with pytest.raises(InvalidInputError, match="unknown status 'busy'"):
        store.list_conversations(status="busy")


def test_pages_follow_the_cursor_newest_first_without_repeats(store: ConversationStore) -> None:
    for n in range(7):
        _chat(store, f"c{n}", f"message {n}")
    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        page = store.list_conversations(limit=3, cursor=cursor)
        seen += _ids(page.conversations)
        pages += 1
        cursor = page.next_cursor
        if cursor is None:
            break
    assert pages == 3
    assert seen == [f"c{n}" for n in reversed(range(7))]
    with pytest.raises(InvalidInputError, match="cursor"):
        store.list_conversations(cursor="garbage!")
    with pytest.raises(InvalidInputError, match="limit"):
        store.list_conversations(limit=0)


def test_another_tenants_conversations_never_appear(store: ConversationStore) -> None:
    """Listing and search see only the asked tenant's conversations, however they match."""
    _chat(store, "shared-id", "secret plans for acme", tenant="acme")
    _chat(store, "shared-id", "secret plans for globex", tenant="globex")
    _chat(store, "only-globex", "secret globex things", tenant="globex")
    acme = store.list_conversations(tenant="acme", query="secret").conversations
    assert [(r.tenant, r.chat_id) for r in acme] == [("acme", "shared-id")]
    assert all(
        r.tenant == "globex" for r in store.list_conversations(tenant="globex").conversations
    )
    assert store.list_conversations(tenant="acme", query="globex").conversations == []
    assert store.list_conversations(tenant="nobody").conversations == []


def test_the_list_is_rebuilt_exactly(store: ConversationStore) -> None:
    """A rebuild from the log gives the same list, search included."""
    paused_turn(store, "c1")
    _chat(store, "c2", "rebuild me please")
    store.set_title("c2", "Titled")
    store.set_metadata("c1", {"k": "v"})
    before = store.list_conversations().conversations
    store.operations.rebuild()
    assert store.list_conversations().conversations == before
    assert _ids(store.list_conversations(query="rebuild").conversations) == ["c2"]


def test_read_models_from_before_the_list_are_rebuilt_on_open(durable_backend: Backend) -> None:
    """A database whose read models predate the list gets it filled at the next open."""
    store = durable_backend.open()
    new_chat(store, "c1")
    store.operations.catch_up()
    dialect = store.read_models.dialect  # type: ignore[attr-defined]
    with dialect.transaction(commit=True) as c:
        c.execute(dialect.statement("DELETE FROM {list}"))
    store.close()
    again = durable_backend.open()
    assert _ids(again.list_conversations().conversations) == ["c1"]


def test_an_encrypted_store_lists_and_searches_whole_words_without_readable_text(
    tmp_path: Path,
) -> None:
    """With a key the list is sealed; search matches keyed word tags (whole words only)."""
    from eventsourcing.cryptography import AESCipher

    path = tmp_path / "sealed.db"
    key = AESCipher.create_key(32)
    with ConversationStore.open(f"sqlite:///{path}", cipher_key=key, tenant="acme") as store:
        _chat(store, "c1", "Confidential merger with Globex")
        store.set_title("c1", "Project Falcon")
        store.set_metadata("c1", {"owner": "zed"})
        _chat(store, "c2", "Lunch menu")
        [row] = store.list_conversations(query="merger").conversations
        assert (row.chat_id, row.title, row.metadata, row.tenant) == (
            "c1",
            "Project Falcon",
            {"owner": "zed"},
            "acme",
        )
        assert _ids(store.list_conversations(query="falcon globex").conversations) == ["c1"]
        assert store.list_conversations(query="merg").conversations == []  # no prefixes
        assert _ids(store.list_conversations().conversations) == ["c2", "c1"]
        assert store.list_conversations(tenant="other").conversations == []
    raw = path.read_bytes()
    for secret in (b"Falcon", b"merger", b"Confidential", b"zed", b"acme"):
        assert secret not in raw
