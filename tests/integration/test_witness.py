"""Seals kept outside the database (a witness file, an expected seal): deleted seals and a rolled-back store are named.

Someone who can write the database can delete every seal, or put back an
older copy of the whole store; both leave a store that checks out on its
own. A witness file written by ``seal(witness=)`` (or a pinned ``N:DIGEST``)
is out of their reach, and ``verify`` measures the store against it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chatledger import ConversationStore
from chatledger.adapters.responders import demo
from chatledger.domain.errors import InvalidInputError
from chatledger.domain.seal import SealKey
from tests.integration.conftest import Backend
from tests.integration.tamper import Tamperer

KEY = SealKey.from_text("an operator secret of thirty-two bytes")


def seal_problems(url: str, **witness: object) -> list[tuple[str | None, str]]:
    with ConversationStore.open(url) as store:
        report = store.operations.verify(seal_key=KEY, **witness)  # type: ignore[arg-type]
    return [(p.kind, p.what) for p in report.problems if p.where == "seal"]


def test_each_seal_is_appended_to_the_witness_and_an_honest_store_agrees(
    durable_backend: Backend, tmp_path: Path
) -> None:
    witness = tmp_path / "witness.jsonl"
    with ConversationStore.open(durable_backend.url) as store:
        demo.record_demo(store, "done")
        first = store.operations.seal(KEY, witness=witness)
        store.start_conversation("later")
        second = store.operations.seal(KEY, witness=witness)
        report = store.operations.verify(
            seal_key=KEY, witness=witness, expect_seals=[f"{first.seq}:{first.digest}"]
        )
    lines = [json.loads(line) for line in witness.read_text().splitlines()]
    assert lines == [
        {"seq": s.seq, "sealed_at": s.sealed_at, "digest": s.digest} for s in (first, second)
    ]
    assert report.ok, report.problems
    assert report.coverage is not None and report.coverage.witnessed == 3


def test_deleting_every_seal_is_named_with_a_witness(
    durable_backend: Backend, tmp_path: Path
) -> None:
    witness = tmp_path / "witness.jsonl"
    with ConversationStore.open(durable_backend.url) as store:
        demo.record_demo(store, "done")
        store.operations.seal(KEY, witness=witness)
        store.operations.seal(KEY, witness=witness)
    tamperer = Tamperer(durable_backend.url)
    tamperer.run("DELETE FROM chatledger_seal_heads")
    tamperer.run("DELETE FROM chatledger_seals")
    assert seal_problems(durable_backend.url) == []  # alone, the store cannot tell
    problems = seal_problems(durable_backend.url, witness=witness)
    assert [kind for kind, _ in problems] == ["rolled-back", "rolled-back"]
    assert "records seal 2" in problems[1][1] and "it holds no seal" in problems[1][1]


def test_rolling_the_whole_store_back_is_named_with_a_witness_or_an_expected_seal(
    durable_backend: Backend, tmp_path: Path
) -> None:
    witness = tmp_path / "witness.jsonl"
    with ConversationStore.open(durable_backend.url) as store:
        demo.record_demo(store, "done")
        store.operations.seal(KEY, witness=witness)
    tamperer = Tamperer(durable_backend.url)
    tamperer.copy()  # an older backup, taken after seal 1
    with ConversationStore.open(durable_backend.url) as store:
        store.append_message("done", {**demo.USER_MESSAGE, "id": "later"})
        newest = store.operations.seal(KEY, witness=witness)
    tamperer.roll_back()
    assert seal_problems(durable_backend.url) == []  # alone, the store cannot tell
    problems = seal_problems(durable_backend.url, witness=witness)
    assert [kind for kind, _ in problems] == ["rolled-back"]
    assert "records seal 2" in problems[0][1] and "its newest seal is 1" in problems[0][1]
    pinned = seal_problems(durable_backend.url, expect_seals=[f"2:{newest.digest}"])
    assert [kind for kind, _ in pinned] == ["rolled-back"]


def test_a_replaced_seal_is_named_by_its_witnessed_digest(
    durable_backend: Backend, tmp_path: Path
) -> None:
    witness = tmp_path / "witness.jsonl"
    with ConversationStore.open(durable_backend.url) as store:
        demo.record_demo(store, "done")
        store.operations.seal(KEY, witness=witness)
    tamperer = Tamperer(durable_backend.url)
    tamperer.run("DELETE FROM chatledger_seal_heads")
    tamperer.run("DELETE FROM chatledger_seals")
    with ConversationStore.open(durable_backend.url) as store:
        store.operations.seal(KEY)  # a fresh seal 1, e.g. made by whoever holds the key
    problems = seal_problems(durable_backend.url, witness=witness)
    assert [kind for kind, _ in problems] == ["forged"]
    assert "the seal was replaced" in problems[0][1]


def test_a_bad_witness_line_or_expected_seal_is_named(
    durable_backend: Backend, tmp_path: Path
) -> None:
    witness = tmp_path / "witness.jsonl"
    witness.write_text('{"seq": 1, "digest": "abc"}\n')
    with ConversationStore.open(durable_backend.url) as store:
        with pytest.raises(InvalidInputError, match="line 1 is not a witnessed seal"):
            store.operations.verify(witness=witness)
        with pytest.raises(InvalidInputError, match="is not N:DIGEST"):
            store.operations.verify(expect_seals=["one:abc"])
        with pytest.raises(InvalidInputError, match="nothing was sealed"):
            store.operations.seal(KEY, witness=tmp_path / "no" / "such" / "dir")
        assert store.operations.verify().coverage.seals == 0  # type: ignore[union-attr]
