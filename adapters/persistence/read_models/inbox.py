"""The inbox read model: tool calls awaiting approval and pending continuation requests, across conversations.

- ``chatledger_pending_approvals``: one row per tool call awaiting approval;
- ``chatledger_pending_continuations_v2``: at most one row per conversation, with its owner.

Both are looked up by tenant (a keyed tag with a store key, every other
column but the times sealed), oldest request first.
"""

from __future__ import annotations

import json
from datetime import datetime
from functools import partial
from typing import Any

from chatledger.adapters.persistence.keys import ColumnKey
from chatledger.adapters.persistence.read_models.columns import (
    iso_time,
    json_text,
    parse_time,
    readable,
)
from chatledger.adapters.persistence.read_models.dialect import Dialect
from chatledger.domain.limits import check_name
from chatledger.projections.read_models import ContinuationRequest, Page, PendingApproval

__all__ = ["InboxTables"]

_DELETE_APPROVALS = "DELETE FROM {approvals} WHERE conversation_id = ?"
_INSERT_APPROVAL = "INSERT INTO {approvals} VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
_DELETE_CONTINUATION = "DELETE FROM {continuations} WHERE conversation_id = ?"
_INSERT_CONTINUATION = "INSERT INTO {continuations} VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
_SELECT_APPROVALS = (
    "SELECT tenant, chat_id, message_id, tool_call_id, tool_name, input, approval_id,"
    " requested_at FROM {approvals} WHERE tenant = ? ORDER BY requested_at, conversation_id"
)
_SELECT_CONTINUATIONS = (
    "SELECT tenant, chat_id, request_id, message_id, cause, requested_at, claimed_by,"
    " lease_until, owner FROM {continuations} WHERE tenant = ?"
    " ORDER BY requested_at, conversation_id"
)


class InboxTables:
    """Pending approvals and continuations: a page replaces each touched conversation's set."""

    DDL = (
        "CREATE TABLE IF NOT EXISTS {approvals} ("
        " conversation_id TEXT NOT NULL, tool_call_id TEXT NOT NULL, tenant TEXT NOT NULL,"
        " chat_id TEXT NOT NULL, message_id TEXT NOT NULL, tool_name TEXT NOT NULL,"
        " input TEXT NOT NULL, approval_id TEXT NOT NULL, requested_at TEXT NOT NULL,"
        " PRIMARY KEY (conversation_id, tool_call_id))",
        "CREATE INDEX IF NOT EXISTS {approvals_by_tenant} ON {approvals} (tenant, requested_at)",
        "CREATE TABLE IF NOT EXISTS {continuations} ("
        " conversation_id TEXT PRIMARY KEY, tenant TEXT NOT NULL, chat_id TEXT NOT NULL,"
        " request_id TEXT NOT NULL, message_id TEXT NOT NULL, cause TEXT NOT NULL,"
        " requested_at TEXT NOT NULL, claimed_by TEXT, lease_until TEXT, owner TEXT NOT NULL)",
        "CREATE INDEX IF NOT EXISTS {continuations_by_tenant}"
        " ON {continuations} (tenant, requested_at)",
    )
    PURGE = (_DELETE_APPROVALS, _DELETE_CONTINUATION)

    def __init__(self, dialect: Dialect, key: ColumnKey) -> None:
        self._dialect = dialect
        self._key = key

    def purge(self, c: Any, key: str) -> None:
        """In transaction ``c``: delete the conversation's rows."""
        self._dialect.run(c, self.PURGE, (key,))

    def replace(self, c: Any, page: Page) -> None:
        """In transaction ``c``: the page's approvals and continuations in place of the conversations' old ones."""
        seal, statement = self._key, self._dialect.statement
        keys = [(str(key),) for key in page.approvals]
        if keys:
            c.executemany(statement(_DELETE_APPROVALS), keys)
        approvals = [
            (
                str(key),
                seal.seal(row.tool_call_id),
                seal.tag(row.tenant),
                seal.seal(row.chat_id),
                seal.seal(row.message_id),
                seal.seal(row.tool_name),
                seal.seal(json_text(row.input)),
                seal.seal(row.approval_id),
                iso_time(row.requested_at),
            )
            for key, rows in page.approvals.items()
            for row in rows
        ]
        if approvals:
            c.executemany(statement(_INSERT_APPROVAL), approvals)
        keys = [(str(key),) for key in page.continuations]
        if keys:
            c.executemany(statement(_DELETE_CONTINUATION), keys)
        continuations = [
            (
                str(key),
                seal.tag(row.tenant),
                seal.seal(row.chat_id),
                seal.seal(row.request_id),
                seal.seal(row.message_id),
                seal.seal(row.cause),
                iso_time(row.requested_at),
                seal.seal(row.claimed_by),
                iso_time(row.lease_until) if row.lease_until else None,
                seal.seal(row.owner),
            )
            for key, row in page.continuations.items()
            if row is not None
        ]
        if continuations:
            c.executemany(statement(_INSERT_CONTINUATION), continuations)

    def pending_approvals(self, tenant: str) -> list[PendingApproval]:
        """The tenant's tool calls awaiting approval, oldest first."""
        check_name("tenant", tenant)
        rows = self._select(_SELECT_APPROVALS, tenant)
        return [readable("approvals inbox", partial(self._approval, tenant, row)) for row in rows]

    def pending_continuations(self, tenant: str) -> list[ContinuationRequest]:
        """The tenant's pending continuation requests, oldest first."""
        check_name("tenant", tenant)
        rows = self._select(_SELECT_CONTINUATIONS, tenant)
        return [
            readable("continuation queue", partial(self._continuation, tenant, row)) for row in rows
        ]

    def _approval(self, tenant: str, row: Any) -> PendingApproval:
        unseal = self._key.unseal
        return PendingApproval(
            tenant,
            unseal(row["chat_id"]) or "",
            unseal(row["message_id"]) or "",
            unseal(row["tool_call_id"]) or "",
            unseal(row["tool_name"]) or "",
            json.loads(unseal(row["input"]) or "null"),
            unseal(row["approval_id"]) or "",
            datetime.fromisoformat(row["requested_at"]),
        )

    def _continuation(self, tenant: str, row: Any) -> ContinuationRequest:
        unseal = self._key.unseal
        return ContinuationRequest(
            tenant,
            unseal(row["chat_id"]) or "",
            unseal(row["request_id"]) or "",
            unseal(row["message_id"]) or "",
            unseal(row["cause"]) or "",
            datetime.fromisoformat(row["requested_at"]),
            unseal(row["claimed_by"]),
            parse_time(row["lease_until"]),
            unseal(row["owner"]) or "any",
        )

    def _select(self, template: str, tenant: str) -> list[Any]:
        with self._dialect.transaction(commit=False) as c:
            c.execute(self._dialect.statement(template), (self._key.tag(tenant),))
            rows: list[Any] = c.fetchall()
        return rows
