"""Erasing a conversation from a tenant's grant ledger: its events stop naming it, in place.

The ledger is the tenant's, not the conversation's, so erasing a
conversation does not delete it; it rewrites the stored events that name
the conversation (as the conversation's own events are rewritten into
tombstones):

- ``GrantIssued`` given with an approval in it: the approval (``source``)
  is dropped (and an input kept before grants kept digests becomes its
  digest, so the grant still covers it elsewhere); limited to it (``chat_id``): the conversation is replaced by
  ``ERASED`` (the grant is revoked first, so it covers nothing);
- ``GrantUsed`` in it: the conversation, call and approval are replaced by
  ``ERASED`` (the use still counts).

An ``input`` grant keeps only its input's digest (``domain.grants``), so a
grant given in the conversation keeps answering the same input elsewhere.
On SQLite the rewrite zeroes the replaced bytes (``secure_delete``); the
erasure's compaction then checkpoints the WAL (SQLite) or rewrites the
ledger's table (PostgreSQL: ``compaction.PURGED_TABLES``).
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from psycopg import sql

from chatledger.domain.grant_ledger import GrantLedger, ledger_id
from chatledger.domain.grants import ERASED, input_digest

__all__ = ["ERASED", "scrub_conversation"]


def scrub_conversation(log: Any, tenant: str, chat_id: str) -> int:
    """Rewrite the events of ``tenant``'s ledger that name ``chat_id`` (see the module); how many."""
    key = ledger_id(tenant)
    recorder = log.recorder
    changed: list[tuple[int, bytes]] = []
    for stored in recorder.select_events(key):
        event = log.mapper.to_domain_event(stored)
        fields = _scrubbed(event, chat_id)
        if fields is not None:
            new = log.mapper.to_stored_event(type(event)(**{**vars(event), **fields}))
            changed.append((stored.originator_version, new.state))
    if changed:
        _update(recorder, key, changed)
    return len(changed)


def _scrubbed(event: Any, chat_id: str) -> dict[str, Any] | None:
    """The fields of ``event`` to replace so it no longer names ``chat_id``; None: it does not."""
    if isinstance(event, GrantLedger.GrantUsed):  # type: ignore[attr-defined]
        if event.chat_id == chat_id:
            return {"chat_id": ERASED, "tool_call_id": ERASED, "approval_id": ERASED}
        return None
    if isinstance(event, GrantLedger.GrantIssued):  # type: ignore[attr-defined]
        fields: dict[str, Any] = {}
        if isinstance(event.source, dict) and event.source.get("chatId") == chat_id:
            fields |= {"source": None}
            if event.input is not None:  # kept before grants kept digests: its digest instead
                fields |= {"input": None, "input_digest": input_digest(event.input)}
        if event.chat_id == chat_id:
            fields |= {"chat_id": ERASED}
        return fields or None
    return None


def _update(recorder: Any, key: UUID, states: list[tuple[int, bytes]]) -> None:
    """Store ``states`` (version, bytes) in place of the ledger's events, zeroing what they replace."""
    table = recorder.events_table_name
    template = "UPDATE {table} SET state = ? WHERE originator_id = ? AND originator_version = ?"
    with recorder.datastore.transaction(commit=True) as c:
        if hasattr(recorder.datastore, "schema"):  # PostgreSQL
            statement: Any = sql.SQL(template.replace("?", "%s")).format(
                table=sql.Identifier(recorder.datastore.schema or "public", table)
            )
            c.executemany(statement, [(state, key, version) for version, state in states])
            return
        c.execute("PRAGMA secure_delete=ON")
        c.executemany(
            template.format(table=table), [(state, key.hex, version) for version, state in states]
        )
