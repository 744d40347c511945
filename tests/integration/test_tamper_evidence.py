"""Tamper evidence: hand edits of a real SQLite file and a real PostgreSQL schema are detected and named.

Each test fills a store, seals it, closes it, tampers with plain SQL, and
checks that the first bad event of the conversation and the kind of damage
are named (and nothing else is).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from chatledger import ConversationStore
from chatledger.adapters.persistence.chain import split_link
from chatledger.adapters.responders import demo
from chatledger.adapters.store.operations.integrity import IntegrityReport, check_integrity
from chatledger.domain.aggregate import conversation_id
from chatledger.domain.errors import LogTamperedError
from chatledger.domain.seal import SealKey
from tests.integration.conftest import Backend
from tests.integration.tamper import Tamperer

KEY = SealKey.from_text("an operator secret of thirty-two bytes")


def fill(store: ConversationStore) -> None:
    """A finished conversation ('done', 14-16 events by commit timing), a paused one, and one in another tenant."""
    demo.record_demo(store, "done")
    store.start_conversation("paused")
    store.append_message("paused", demo.USER_MESSAGE)
    store.ingest("paused", demo.first_turn_chunks())
    store.start_conversation("done", tenant="other")
    store.append_message("done", demo.USER_MESSAGE, tenant="other")


def integrity(url: str, key: SealKey | None = KEY) -> IntegrityReport:
    with ConversationStore.open(url) as store:
        report = check_integrity(store.log, store.config.backend, key=key)
    assert report is not None
    return report


def found(report: IntegrityReport) -> list[tuple[str, str | None, int | None]]:
    return [(t.kind, t.chat_id, t.version) for t in report.tampered]


@pytest.fixture
def sealed(durable_backend: Backend) -> Iterator[Tamperer]:
    """A filled, sealed store on each durable backend (closed), and raw SQL access to it."""
    with ConversationStore.open(durable_backend.url) as store:
        fill(store)
        store.operations.seal(KEY)
    yield Tamperer(durable_backend.url)


def test_a_clean_store_verifies_and_says_what_is_covered(sealed: Tamperer) -> None:
    report = integrity(sealed.url)
    assert report.ok, report.tampered
    coverage = report.coverage
    assert coverage.conversations == 3 and coverage.chain_start == 0
    assert coverage.seal is not None and coverage.seal.conversations == 3
    assert coverage.unsealed == 0 and coverage.signatures_checked
    assert coverage.lines()[0] == "chain: every event of 3 conversation(s)"


def test_changed_content_is_named(sealed: Tamperer) -> None:
    sealed.edit("done", 2, b"old build logs", b"new build logs")
    assert found(integrity(sealed.url)) == [("changed", "done", 2)]


def test_a_changed_event_type_is_named(sealed: Tamperer) -> None:
    topic, _ = sealed.state("done", 5)
    sealed.run(
        f"UPDATE {sealed.events} SET topic = ? WHERE originator_id = ? AND originator_version = 5",
        topic.replace("Chunk", "Chunks"),
        sealed.key("done"),
    )
    assert found(integrity(sealed.url))[0][:3] == ("changed", "done", 5)


def test_a_missing_event_is_named(sealed: Tamperer) -> None:
    sealed.run(
        f"DELETE FROM {sealed.events} WHERE originator_id = ? AND originator_version = 3",
        sealed.key("done"),
    )
    assert found(integrity(sealed.url)) == [("missing", "done", 3)]


def test_a_reordering_is_named(sealed: Tamperer) -> None:
    four, five = sealed.state("done", 4), sealed.state("done", 5)
    for version, (topic, state) in ((4, five), (5, four)):
        sealed.run(
            f"UPDATE {sealed.events} SET topic = ?, state = ? WHERE originator_id = ? "
            "AND originator_version = ?",
            topic,
            state,
            sealed.key("done"),
            version,
        )
    report = integrity(sealed.url)
    assert found(report) == [("reordered", "done", 4)]
    assert report.tampered[0].what == "the event chained at version 4 is at version 5"


def test_a_truncated_tail_is_named_by_the_seal(sealed: Tamperer) -> None:
    head = sealed.head("done")
    sealed.run(
        f"DELETE FROM {sealed.events} WHERE originator_id = ? AND originator_version > 10",
        sealed.key("done"),
    )
    report = integrity(sealed.url)
    assert found(report) == [("truncated", "done", 11)]
    assert f"up to version {head}" in report.tampered[0].what


def test_a_deleted_conversation_is_named(sealed: Tamperer) -> None:
    for table in (sealed.events, sealed.snapshots):
        sealed.run(f"DELETE FROM {table} WHERE originator_id = ?", sealed.key("paused"))
    report = integrity(sealed.url)
    assert [(t.kind, t.conversation, t.version) for t in report.tampered] == [
        ("deleted", sealed.uuid("paused"), 1)
    ]


def test_a_forged_seal_is_named(sealed: Tamperer) -> None:
    sealed.run(
        "UPDATE chatledger_seals SET body = replace(body, '\"conversations\":3', "
        "'\"conversations\":2')"
    )
    report = integrity(sealed.url)
    assert [t.kind for t in report.tampered] == ["forged"]
    assert "signature does not verify" in report.tampered[0].what


def test_a_seal_made_with_another_key_is_named(sealed: Tamperer) -> None:
    report = integrity(sealed.url, key=SealKey.from_text("somebody else's secret, 32 bytes"))
    assert [t.kind for t in report.tampered] == ["forged"]
    assert "not with the given key" in report.tampered[0].what


def test_a_consistent_rewrite_is_named_by_the_seal(sealed: Tamperer) -> None:
    """Edit an event and recompute every link after it: the chain holds, the seal does not."""
    head = sealed.head("done")
    sealed.edit("done", 2, b"old build logs", b"new build logs")
    sealed.relink("done", 2)
    report = integrity(sealed.url)
    assert found(report) == [("rewritten", "done", head)]


@pytest.mark.parametrize("linked", [True, False], ids=["copied-link", "no-link"])
def test_an_inserted_event_is_named(sealed: Tamperer, linked: bool) -> None:
    topic, state = sealed.state("paused", 2)
    ((head,),) = sealed.run(
        f"SELECT MAX(originator_version) FROM {sealed.events} WHERE originator_id = ?",
        sealed.key("paused"),
    )
    sealed.run(
        f"INSERT INTO {sealed.events} (originator_id, originator_version, topic, state) "
        "VALUES (?, ?, ?, ?)",
        sealed.key("paused"),
        head + 1,
        topic,
        state if linked else split_link(state)[1],
    )
    report = integrity(sealed.url)
    assert found(report) == [("changed" if linked else "unchained", "paused", head + 1)]
    if linked:
        assert "a copy inserted by hand" in report.tampered[0].what


def test_writes_after_a_seal_are_chained_and_counted_as_unsealed(durable_backend: Backend) -> None:
    with ConversationStore.open(durable_backend.url) as store:
        fill(store)
        store.operations.seal(KEY)
        store.append_message("paused", {**demo.USER_MESSAGE, "id": "later"})
        store.operations.seal(KEY)
        store.append_message("done", {**demo.USER_MESSAGE, "id": "later"}, tenant="other")
    report = integrity(durable_backend.url)
    assert report.ok, report.tampered
    assert report.coverage.seal is not None and report.coverage.seal.seq == 2
    assert report.coverage.unsealed == 1


def test_a_deleted_seal_is_named(durable_backend: Backend) -> None:
    with ConversationStore.open(durable_backend.url) as store:
        fill(store)
        for _ in range(3):
            store.operations.seal(KEY)
    tamperer = Tamperer(durable_backend.url)
    tamperer.run("DELETE FROM chatledger_seals WHERE seq = 2")
    report = integrity(durable_backend.url)
    assert [(t.kind, t.what) for t in report.tampered] == [
        ("forged", "seal 3 follows seal 1 (seals 2-2 are gone)")
    ]


def test_verify_names_the_first_bad_event_and_rebuild_refuses(sealed: Tamperer) -> None:
    """The store's verify reports chain damage; rebuild refuses, unless told, and then records it."""
    sealed.edit("done", 2, b"old build logs", b"new build logs")
    with ConversationStore.open(sealed.url) as store:
        report = store.operations.verify(seal_key=KEY)
        chain = [p for p in report.problems if p.where == "chain"]
        assert [(p.kind, p.chat_id, p.version) for p in chain] == [("changed", "done", 2)]
        assert "restore the database from a backup" in report.advice
        with pytest.raises(LogTamperedError, match="changed: chat 'done'"):
            store.operations.rebuild()
        assert store.operations.read_model_counts()["conversations"] == 3  # nothing was dropped
        store.operations.rebuild(accept_broken_chain=True)
        coverage = store.operations.verify(seal_key=KEY).coverage
    assert coverage is not None
    ((_, action, detail),) = coverage.notes
    assert action == "rebuild the read models"
    assert "changed: chat 'done' (tenant 'default') at version 2" in detail


def test_a_store_from_before_chains_is_chained_from_a_marked_point(
    durable_backend: Backend,
) -> None:
    """Events written without links (an older store) are reported as not covered; new ones are."""
    with ConversationStore.open(durable_backend.url) as store:
        fill(store)
    old = Tamperer(durable_backend.url)
    for chat, tenant in (("done", "default"), ("paused", "default"), ("done", "other")):
        old.strip_links(chat, tenant)
    for table in (
        "chatledger_chain_start",
        "chatledger_seals",
        "chatledger_seal_heads",
        "chatledger_integrity_notes",
    ):
        old.run(f"DROP TABLE {table}")
    ((last,),) = old.run(
        f"SELECT MAX({'notification_id' if old.postgres else 'rowid'}) FROM {old.events}"
    )
    with ConversationStore.open(durable_backend.url) as store:
        store.append_message("paused", {**demo.USER_MESSAGE, "id": "after-upgrade"})
        store.operations.seal(KEY)
        report = store.operations.verify(seal_key=KEY)
        assert report.ok, report.problems
        version = store.version("paused")
    coverage = report.coverage
    assert coverage is not None and coverage.chain_start == last
    assert coverage.chained_from == {"'paused' (tenant 'default')": version}
    assert coverage.unchained == 2
    assert f"events after log position {last}" in coverage.lines()[0]
    # Unlinking an event written after the mark is still caught.
    old.strip_links("paused")
    assert found(integrity(durable_backend.url)) == [("unchained", "paused", version)]


def test_moving_the_chain_start_is_caught(sealed: Tamperer) -> None:
    head = sealed.head("paused")
    sealed.run("UPDATE chatledger_chain_start SET after_position = 1000")
    sealed.strip_links("paused")
    report = integrity(sealed.url)
    assert sorted((t.kind, t.chat_id or "", t.version or 0) for t in report.tampered) == [
        ("rewritten", "paused", head),  # its links are gone: the sealed head no longer matches
        ("unchained", "", 0),  # the seal recorded another chain start
        ("unchained", "done", 1),  # chained events before the claimed start (both tenants)
        ("unchained", "done", 1),
    ]


def test_an_encrypted_store_is_chained_and_a_flipped_ciphertext_byte_is_named(
    durable_backend: Backend,
) -> None:
    """Encryption and compression happen below the chain: links verify, damage is named."""
    from eventsourcing.cryptography import AESCipher

    cipher_key = AESCipher.create_key(16)
    with ConversationStore.open(durable_backend.url, cipher_key=cipher_key) as store:
        fill(store)
        store.operations.seal(KEY)
        assert store.operations.verify(seal_key=KEY).ok
    tamperer = Tamperer(durable_backend.url)
    _, state = tamperer.state("done", 6)
    flipped = state[:-3] + bytes([state[-3] ^ 1]) + state[-2:]
    tamperer.run(
        f"UPDATE {tamperer.events} SET state = ? WHERE originator_id = ? AND originator_version = 6",
        flipped,
        tamperer.key("done"),
    )
    with ConversationStore.open(durable_backend.url, cipher_key=cipher_key) as store:
        report = store.operations.verify(seal_key=KEY)
    chain = [(p.kind, p.chat_id, p.version) for p in report.problems if p.where == "chain"]
    assert chain == [("changed", "done", 6)]


def test_an_event_encrypted_before_chains_that_starts_like_a_link_still_loads(
    durable_backend: Backend,
) -> None:
    """One old ciphertext in 256 starts with the link marker byte: it must load and count as unchained."""
    from eventsourcing.cryptography import AESCipher

    cipher_key = AESCipher.create_key(16)
    with ConversationStore.open(durable_backend.url, cipher_key=cipher_key) as store:
        store.start_conversation("old")
        store.append_message("old", demo.USER_MESSAGE)
        mapper = store.log.mapper
        expected = store.messages("old")
    tamperer = Tamperer(durable_backend.url)
    _, state = tamperer.state("old", 2)
    content = mapper.content(state, conversation_id("default", "old"))  # its data key decrypts it
    packed = mapper.compressor.compress(content)
    while (legacy := mapper.cipher.encrypt(packed))[0] != 0xFF:  # about 256 tries
        pass
    tamperer.strip_links("old")
    tamperer.run(
        f"UPDATE {tamperer.events} SET state = ? WHERE originator_id = ? AND originator_version = 2",
        legacy,
        tamperer.key("old"),
    )
    tamperer.run("UPDATE chatledger_chain_start SET after_position = 1000")
    with ConversationStore.open(durable_backend.url, cipher_key=cipher_key) as store:
        store.operations.rebuild()
        assert store.messages("old") == expected
        report = store.operations.verify()
    assert report.ok, report.problems
    assert report.coverage is not None and report.coverage.unchained == 1


def test_two_stores_writing_one_conversation_in_turn_keep_one_chain(
    durable_backend: Backend,
) -> None:
    """Each store remembers the heads it wrote; the other's writes in between are read, not assumed."""
    first, second = durable_backend.open(), durable_backend.open()
    first.start_conversation("shared")
    for n in range(6):
        writer = first if n % 2 == 0 else second
        writer.append_message("shared", {**demo.USER_MESSAGE, "id": f"m{n}"})
    assert first.version("shared") == 7
    report = first.operations.verify("shared")
    assert report.ok, report.problems


def test_forget_cached_after_a_restore_keeps_the_chain_right(durable_backend: Backend) -> None:
    """A restore can put back another event at a version this process wrote: its link is read again."""
    store = durable_backend.open()
    store.start_conversation("restored")
    store.append_message("restored", {**demo.USER_MESSAGE, "id": "original"})
    tamperer = Tamperer(durable_backend.url)
    tamperer.run(
        f"DELETE FROM {tamperer.events} WHERE originator_id = ? AND originator_version = 2",
        tamperer.key("restored"),
    )
    store.operations.forget_cached()
    store.append_message("restored", {**demo.USER_MESSAGE, "id": "restored"})  # version 2 again
    store.operations.forget_cached()
    store.append_message("restored", {**demo.USER_MESSAGE, "id": "after"})
    report = store.operations.verify("restored")
    assert report.ok, report.problems


def _version_of(tamperer: Tamperer, chat: str, topic_end: str) -> int:
    rows = tamperer.run(
        f"SELECT originator_version, topic FROM {tamperer.events} WHERE originator_id = ? "
        "ORDER BY originator_version",
        tamperer.key(chat),
    )
    return next(version for version, topic in rows if topic.endswith(topic_end))


@pytest.mark.parametrize("edit", ["reason", "actor", "final-denial-deleted", "rewrite-and-rebuild"])
def test_the_edits_that_used_to_pass_verify_are_named(sealed: Tamperer, edit: str) -> None:
    """A changed approval reason or actor, a deleted final denial, an edit made permanent by a rebuild."""
    approval = _version_of(sealed, "done", ":ToolApprovalResponded")
    expected: tuple[str, str, int]
    if edit == "reason":
        sealed.edit("done", approval, demo.DENIAL_REASON.encode()[:20], b"approved after review")
        expected = ("changed", "done", approval)
    elif edit == "actor":
        sealed.edit("done", approval, b'"actor":"user:', b'"actor":"user:x')
        expected = ("changed", "done", approval)
    elif edit == "final-denial-deleted":
        sealed.run(
            f"DELETE FROM {sealed.events} WHERE originator_id = ? AND originator_version >= ?",
            sealed.key("done"),
            approval,
        )
        expected = ("truncated", "done", approval)
    else:
        sealed.edit("done", 2, b"old build logs", b"new build logs")
        sealed.run(f"DELETE FROM {sealed.snapshots}")
        with ConversationStore.open(sealed.url) as store, pytest.raises(LogTamperedError):
            store.operations.rebuild()
        expected = ("changed", "done", 2)
    with ConversationStore.open(sealed.url) as store:
        report = store.operations.verify(seal_key=KEY)
    chain = [(p.kind, p.chat_id, p.version) for p in report.problems if p.where == "chain"]
    assert chain == [expected]
