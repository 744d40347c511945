"""Signed writes: events appended after the newest seal by someone without the seal key are named.

The chain has no secret, so an event appended with a recomputed link after
the newest seal passes the chain check. With ``sign_writes`` the writers
sign each commit's heads with the seal key; ``verify(signed_writes=True)``
names a head nobody signed (``unsigned-tail``).
"""

from __future__ import annotations

import pytest

from chatledger import ConversationStore
from chatledger.adapters.responders import demo
from chatledger.domain.errors import InvalidInputError
from chatledger.domain.seal import SealKey
from tests.integration.conftest import Backend
from tests.integration.tamper import Tamperer

KEY = SealKey.from_text("an operator secret of thirty-two bytes")


def chain_problems(
    url: str, signed: bool = True
) -> list[tuple[str | None, str | None, int | None]]:
    with ConversationStore.open(url) as store:
        report = store.operations.verify(seal_key=KEY, signed_writes=signed)
    return [(p.kind, p.chat_id, p.version) for p in report.problems if p.where == "chain"]


def _approval(tamperer: Tamperer, chat: str) -> int:
    rows = tamperer.run(
        f"SELECT originator_version, topic FROM {tamperer.events} WHERE originator_id = ? "
        "ORDER BY originator_version",
        tamperer.key(chat),
    )
    return next(v for v, topic in rows if topic.endswith(":ToolApprovalResponded"))


def test_a_copied_denial_appended_after_the_seal_is_named(durable_backend: Backend) -> None:
    with ConversationStore.open(durable_backend.url, sign_writes=KEY) as store:
        demo.record_demo(store, "done")
        store.operations.seal(KEY)
        store.append_message("done", {**demo.USER_MESSAGE, "id": "later"})  # honest, unsealed
    tamperer = Tamperer(durable_backend.url)
    denial = _approval(tamperer, "done")
    forged = tamperer.append_copy(
        "done", denial, demo.DENIAL_REASON.encode()[:20], b"approved after review"
    )
    assert chain_problems(durable_backend.url, signed=False) == []  # the chain alone holds
    with ConversationStore.open(durable_backend.url) as store:
        report = store.operations.verify(seal_key=KEY, signed_writes=True)
    problems = [p for p in report.problems if p.where == "chain"]
    assert [(p.kind, p.chat_id, p.version) for p in problems] == [
        ("unsigned-tail", "done", forged - 1)
    ]
    assert f"the newest signature is of version {forged - 1}" in problems[0].what


def test_a_new_conversation_inserted_without_the_key_is_named(durable_backend: Backend) -> None:
    with ConversationStore.open(durable_backend.url, sign_writes=KEY) as store:
        store.start_conversation("real")
        store.operations.seal(KEY)
    with ConversationStore.open(durable_backend.url) as store:  # a writer without the key
        store.start_conversation("planted")
    assert chain_problems(durable_backend.url) == [("unsigned-tail", "planted", 1)]


def test_an_honest_signing_store_has_no_false_alarm(durable_backend: Backend) -> None:
    """Old events (before signing) covered by a seal; later writes signed, sealed or not."""
    with ConversationStore.open(durable_backend.url) as store:
        demo.record_demo(store, "old")
    with ConversationStore.open(durable_backend.url, sign_writes=KEY) as store:
        assert chain_problems(durable_backend.url) == [("unsigned-tail", "old", 1)]
        store.operations.seal(KEY)  # seal once when turning signed writes on
        demo.record_demo(store, "done")
        store.operations.seal(KEY)
        store.append_message("old", {**demo.USER_MESSAGE, "id": "later"})
        store.start_conversation("new")
        store.append_message("new", demo.USER_MESSAGE)
    assert chain_problems(durable_backend.url) == []


def test_checking_signed_writes_needs_the_key(durable_backend: Backend) -> None:
    with ConversationStore.open(durable_backend.url) as store:
        store.start_conversation("c")
        with pytest.raises(InvalidInputError, match="checking signed writes needs the seal key"):
            store.operations.verify(signed_writes=True)


def test_a_signing_store_checks_its_signed_heads_by_default(durable_backend: Backend) -> None:
    with ConversationStore.open(durable_backend.url) as store:  # a writer without the key
        store.start_conversation("planted")
    with ConversationStore.open(durable_backend.url, sign_writes=KEY) as store:
        report = store.operations.verify()
    assert [(p.kind, p.chat_id) for p in report.problems] == [("unsigned-tail", "planted")]
