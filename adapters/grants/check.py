"""The grant ledgers checked for ``verify``: every row decodes, and every event names a grant that was given.

Read through the ledgers' own table, row by row in the order written:

- a row that does not decode (damaged bytes, an unknown event) is named;
- a ledger whose first event is not its ``Started``, or that starts for a
  tenant whose ledger id differs, is named;
- a ``GrantUsed``, ``GrantRevoked`` or ``GrantExpired`` naming a grant the
  ledger never issued (before it) is named; so is a grant issued twice.

Each finding is ``(where, chat_id, tenant, what)`` with ``where`` ``grants``;
nothing is changed.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from chatledger.domain.grant_ledger import GrantLedger, ledger_id

__all__ = ["grant_findings"]

_PAGE = 500

Finding = tuple[str, str | None, str | None, str]


def grant_findings(log: Any) -> list[Finding]:
    """What is wrong in the grant ledgers of ``log`` (a ``GrantLog``); empty when nothing is."""
    findings: list[Finding] = []
    issued: dict[UUID, set[str]] = {}
    tenants: dict[UUID, str] = {}
    start: int | None = None
    while True:
        rows = log.recorder.select_notifications(start, _PAGE, inclusive_of_start=start is None)
        for row in rows:
            findings.extend(_check(log, row, issued, tenants))
        if len(rows) < _PAGE:
            return findings
        start = rows[-1].id


def _check(
    log: Any, row: Any, issued: dict[UUID, set[str]], tenants: dict[UUID, str]
) -> list[Finding]:
    key, version = row.originator_id, row.originator_version
    tenant = tenants.get(key)
    where = f"grant ledger {key} event {version}"
    try:
        event = log.mapper.to_domain_event(row)
    except Exception as error:
        return [("grants", None, tenant, f"{where} cannot be decoded: {str(error)[:200]}")]
    if isinstance(event, GrantLedger.Started):  # type: ignore[attr-defined]
        tenants[key], issued[key] = event.tenant, set()
        if ledger_id(event.tenant) != key:
            return [("grants", None, event.tenant, f"{where}: the ledger of tenant "
                     f"{event.tenant!r} is stored under another ledger's id")]  # fmt: skip
        return []
    if key not in issued:
        return [("grants", None, None, f"{where}: the ledger has no Started event before it")]
    grant_id = str(getattr(event, "grant_id", ""))
    if isinstance(event, GrantLedger.GrantIssued):  # type: ignore[attr-defined]
        if grant_id in issued[key]:
            return [("grants", None, tenant, f"{where}: grant {grant_id} is issued twice")]
        issued[key].add(grant_id)
        return []
    if grant_id not in issued[key]:
        name = type(event).__name__
        return [("grants", None, tenant, f"{where}: {name} names grant {grant_id!r}, "
                 "which the ledger never issued")]  # fmt: skip
    return []
