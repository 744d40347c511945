"""Erasure and export by data subject (``store.operations.erase_subject``, ``.export_subject``).

Two subjects, several conversations, two tenants, on a real SQLite file and a
real PostgreSQL schema. Erasing one subject in one tenant erases exactly the
conversations they took part in there; the audit skeleton names their
pseudonym, never the user id, in the history and in the raw bytes of the
store's files (searched as ``test_erasure_on_disk`` does for canaries);
``verify`` passes. Exporting a subject writes exactly their conversations.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from eventsourcing.cryptography import AESCipher

from chatledger import ConversationErasedError, ConversationStore
from chatledger.domain.bundle import verify_bundle
from chatledger.domain.errors import InvalidInputError
from tests.integration.conftest import Backend
from tests.integration.on_disk import files_holding, store_files
from tests.integration.test_erasure import SEAL
from tests.integration.test_erasure_on_disk import SETTLE

ZED = "user:zed-Q7X"
"""The subject erased: a user id found nowhere else, so it can be searched for on disk."""
YAN = "user:yan-P3W"
"""The other subject, who shares one conversation with ZED."""
PSEUDONYM = re.compile(r"^subject:[0-9a-f]{16}$")


def talk(store: ConversationStore, chat: str, tenant: str, *users: str) -> str:
    """A conversation started by the first user, each user writing one message."""
    store.start_conversation(chat, tenant=tenant, actor=users[0])
    for n, user in enumerate(users):
        message = {"id": f"{chat}-m{n}", "role": "user", "parts": [{"type": "text", "text": "hi"}]}
        store.append_message(chat, message, tenant=tenant, actor=user)
    return chat


def world(store: ConversationStore) -> None:
    """acme: zed alone, zed with yan, yan alone, a zed chat erased before; globex: zed alone."""
    talk(store, "a-zed", "acme", ZED)
    talk(store, "a-both", "acme", YAN, ZED)
    talk(store, "a-yan", "acme", YAN)
    talk(store, "a-old", "acme", ZED)
    talk(store, "g-zed", "globex", ZED)
    store.operations.erase("a-old", tenant="acme", actor="operator:olga", reason="ticket 1")


def on_disk(backend: Backend, what: str) -> list[str]:
    """The store's files (not PostgreSQL's WAL, outside chatledger's reach) holding ``what``."""
    kinds = ["file", "wal"] if backend.name == "sqlite" else ["relations"]
    files = store_files(backend)
    return [name for kind in kinds for name in files_holding(files[kind], [what.encode()])]


@pytest.fixture(params=[pytest.param(False, id="no-key"), pytest.param(True, id="key")])
def options(request: pytest.FixtureRequest) -> dict[str, Any]:
    """A store without a cipher key (texts and actors in the clear), or with one (actors sealed)."""
    return {"cipher_key": AESCipher.create_key(32)} if request.param else {"compress": False}


@pytest.mark.timeout(180)
def test_erase_subject_erases_their_conversations_and_pseudonymises_them(
    durable_backend: Backend, options: dict[str, Any]
) -> None:
    store = durable_backend.open(**options)
    world(store)
    ops = store.operations

    found = ops.conversations_of(ZED, tenant="acme")
    assert [(c.chat_id, c.erased) for c in found] == [
        ("a-both", False), ("a-zed", False), (None, True)
    ]  # fmt: skip
    assert {c.chat_id for c in ops.conversations_of(YAN, tenant="acme")} == {"a-both", "a-yan"}
    assert [c.chat_id for c in ops.conversations_of(ZED, tenant="globex")] == ["g-zed"]

    steps: list[tuple[int, int]] = []
    report = ops.erase_subject(
        ZED, tenant="acme", actor="operator:olga", reason="DSR 42",
        progress=lambda done, total: steps.append((done, total)), wait_for_readers=SETTLE,
    )  # fmt: skip
    assert PSEUDONYM.match(report.pseudonym), report.pseudonym
    assert sorted(r.chat_id or "" for r in report.erased) == ["a-both", "a-zed"]
    assert len(report.pseudonymised) == 1  # a-old, erased before
    assert steps == [(1, 3), (2, 3), (3, 3)]
    assert report.compaction is not None and report.compaction.done, report.compaction.pending

    for chat in ("a-zed", "a-both", "a-old"):
        with pytest.raises(ConversationErasedError):
            store.messages(chat, tenant="acme")
        actors = {entry.actor for entry in store.history(chat, tenant="acme")}
        assert ZED not in actors and report.pseudonym in actors, (chat, actors)
    assert YAN in {e.actor for e in store.history("a-both", tenant="acme")}  # others stay named
    assert len(store.messages("a-yan", tenant="acme")) == 1  # yan's own chat stays
    assert len(store.messages("g-zed", tenant="globex")) == 1  # the other tenant's stays
    assert ops.conversations_of(ZED, tenant="acme") == []
    assert ops.verify(tenant="acme").ok, ops.verify(tenant="acme").problems

    # the same user id in globex: erased there too, the store no longer holds it anywhere
    again = ops.erase_subject(
        ZED, tenant="globex", actor="operator:olga", reason="DSR 43", wait_for_readers=SETTLE
    )
    assert again.compaction is not None and again.compaction.done, again.compaction.pending
    assert [r.chat_id for r in again.erased] == ["g-zed"]
    assert again.pseudonym != report.pseudonym  # a pseudonym per tenant
    assert on_disk(durable_backend, ZED) == []
    if "compress" in options:  # actors in the clear: the search does find what remains
        assert on_disk(durable_backend, YAN)
    store.close()
    reopened = durable_backend.open(**options)
    assert reopened.operations.verify().ok, reopened.operations.verify().problems
    reopened.operations.rebuild()  # the skeleton rebuilt from the tombstones names the pseudonym
    assert ZED not in {e.actor for e in reopened.history("a-zed", tenant="acme")}
    assert reopened.operations.verify().ok


def test_erase_subject_refuses_a_reason_naming_the_subject(durable_backend: Backend) -> None:
    store = durable_backend.open()
    talk(store, "a-zed", "acme", ZED)
    with pytest.raises(InvalidInputError, match="reason names the subject"):
        store.operations.erase_subject(
            ZED, tenant="acme", actor="operator:olga", reason=f"request of {ZED}"
        )
    assert len(store.messages("a-zed", tenant="acme")) == 1


def test_export_subject_writes_exactly_their_conversations(
    durable_backend: Backend, tmp_path: Path
) -> None:
    store = durable_backend.open()
    world(store)
    store.operations.seal(SEAL)
    report = store.operations.export_subject(YAN, tmp_path / "yan", tenant="acme")
    assert sorted(chat for chat, _, _ in report.files) == ["a-both", "a-yan"]
    assert sorted(p.name for p in (tmp_path / "yan").iterdir()) == sorted(
        path.name for _, path, _ in report.files
    )
    for chat, path, _ in report.files:
        checked = verify_bundle(path.read_bytes(), SEAL)
        assert checked.ok, checked
        assert f'"chat_id":"{chat}"' in path.read_text().replace(" ", "")
    zed = store.operations.export_subject(ZED, tmp_path / "zed", tenant="acme")
    assert sorted(chat for chat, _, _ in zed.files) == ["a-both", "a-zed"]
    assert len(zed.erased) == 1  # a-old: nothing left of it to export
    globex = store.operations.export_subject(ZED, tmp_path / "g", tenant="globex")
    assert [chat for chat, _, _ in globex.files] == ["g-zed"]
