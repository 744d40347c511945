"""``verify`` reads the grant ledgers: every row decodes, every use names a grant that was given."""

from __future__ import annotations

import json
from typing import Any

from chatledger.adapters.persistence.schema import GRANTS_TABLE
from tests.integration.tamper import Tamperer
from tests.integration.test_grants import ask

USER = "user:alice"


def _used_row(tamper: Tamperer) -> tuple[Any, int, bytes]:
    """(ledger id as stored, version, state) of the ledger's GrantUsed event."""
    rows = tamper.run(
        f"SELECT originator_id, originator_version, state FROM {GRANTS_TABLE} "
        "WHERE topic LIKE ? ORDER BY originator_version",
        "%GrantUsed",
    )
    assert len(rows) == 1
    return rows[0][0], rows[0][1], bytes(rows[0][2])


def test_verify_names_a_use_of_a_grant_never_given_and_an_undecodable_row(
    durable_backend: Any,
) -> None:
    store = durable_backend.open(compress=False)
    first = ask(store, "a", "search", {"q": "x"})
    grant = store.grants.approve("a", tool_call_id=first, actor=USER)
    ask(store, "b", "search", {"q": "x"})  # approved by the grant: a GrantUsed
    assert store.operations.verify().ok  # a sound ledger: nothing named

    tamper = Tamperer(durable_backend.url)
    key, version, state = _used_row(tamper)
    forged = json.loads(state)
    forged["grant_id"] = "grant_never_given"
    update = (
        f"UPDATE {GRANTS_TABLE} SET state = ? WHERE originator_id = ? AND originator_version = ?"
    )
    tamper.run(update, json.dumps(forged).encode(), key, version)
    report = store.operations.verify()
    named = [p for p in report.problems if p.where == "grants"]
    assert not report.ok and len(named) == 1, report.problems
    assert "grant_never_given" in named[0].what and "never issued" in named[0].what

    tamper.run(update, b"\x00 not json", key, version)
    named = [p for p in store.operations.verify().problems if p.where == "grants"]
    assert len(named) == 1 and "cannot be decoded" in named[0].what, named
    assert grant.grant_id not in named[0].what
