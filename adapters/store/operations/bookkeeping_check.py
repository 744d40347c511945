"""The conversation list, the tracking table and the settings compared with the log (for ``verify``).

``conversation_check`` compares what is kept per conversation; this module
checks the rest of what chatledger writes:

- **the conversation list**: every conversation of the log has its row, with
  the values its events give (chat id, title, times, version, counts,
  status, metadata), and the list holds no row the log does not account for;
- **the tracking table**: the read models' position is not after the log's
  newest event (events written later would be skipped), and it holds only
  the rows chatledger and ``eventsourcing`` write;
- **the settings**: only the settings chatledger writes, with values of the
  form it writes them.

Each finding is ``(where, chat_id, tenant, what)``; nothing is changed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any
from uuid import UUID

from chatledger.adapters.persistence.read_models.columns import list_time
from chatledger.adapters.store.operations.subject import SECRET_SETTING
from chatledger.domain.errors import StoredDataError, StoreUnavailableError
from chatledger.projections.listing import MAX_LIMIT, ListQuery

if TYPE_CHECKING:
    from chatledger.projections.listing import ConversationSummary
    from chatledger.projections.read_models import ReadModelView

__all__ = ["Finding", "bookkeeping_findings", "list_findings"]

Finding = tuple[str, str | None, str | None, str]
"""``(where, chat_id, tenant, what)``: one disagreement."""

MIGRATION = "__migration__"
"""``eventsourcing``'s row in the tracking table: its layout's version (1)."""

_SETTINGS = {
    "key_check": re.compile(r"none|v1:[0-9a-f]{32}"),
    SECRET_SETTING: re.compile(r"[0-9a-f]{64}"),
}
"""The settings chatledger writes, and the form of their values."""

_FIELDS = (
    "chat_id",
    "title",
    "titled",
    "created_at",
    "updated_at",
    "version",
    "message_count",
    "status",
    "pending_approvals",
    "metadata",
)
"""What a list row says of its conversation (its search text is not compared)."""


def list_findings(
    view: ReadModelView,
    expected: dict[UUID, ConversationSummary],
    known: Iterable[UUID],
    tenants: Iterable[str],
    *,
    whole: bool,
) -> list[Finding]:
    """The list rows of ``tenants`` against the summaries the events give.

    ``known``: the conversations checked (those whose log cannot be folded
    have no summary in ``expected``; their log problem is named already).
    ``whole``: every conversation of the log is ``known``, so a row for any
    other is named, and rows listed under no tenant of the log too.
    """
    findings: list[Finding] = []
    listed: dict[UUID, ConversationSummary] = {}
    for tenant in sorted(set(tenants)):
        try:
            listed.update(_rows(view, tenant))
        except StoreUnavailableError:  # the database, not the data
            raise
        except Exception as error:  # a row that does not decode
            findings.append(
                (
                    "read-model",
                    None,
                    tenant,
                    f"the conversation list cannot be read: {type(error).__name__}: "
                    f"{str(error)[:300]}",
                )
            )
            return findings
    for key, summary in expected.items():
        row = listed.get(key)
        if row is None:
            findings.append(
                (
                    "read-model",
                    summary.chat_id,
                    summary.tenant,
                    "missing from the conversation list (or listed under another tenant)",
                )
            )
            continue
        differs = [name for name in _FIELDS if _value(row, name) != _value(summary, name)]
        if differs:
            findings.append(
                (
                    "read-model",
                    summary.chat_id,
                    summary.tenant,
                    f"its conversation list row differs from the events ({', '.join(differs)})",
                )
            )
    if whole:
        for key in sorted(set(listed) - set(known), key=str):
            row = listed[key]
            findings.append(
                (
                    "read-model",
                    None,
                    row.tenant,
                    f"the conversation list has a row for conversation {key} (chat "
                    f"{row.chat_id[:80]!r}) that the log does not have",
                )
            )
        stray = view.counts().get("list", 0) - len(listed)
        if stray > 0:
            findings.append(
                (
                    "read-model",
                    None,
                    None,
                    f"{stray} conversation list row(s) belong to no tenant of the log",
                )
            )
    return findings


def _rows(view: ReadModelView, tenant: str) -> dict[UUID, ConversationSummary]:
    """Every list row of ``tenant``, page by page."""
    found: dict[UUID, ConversationSummary] = {}
    cursor = None
    while True:
        page = view.list_conversations(ListQuery(tenant, limit=MAX_LIMIT, cursor=cursor))
        found.update((row.conversation_id, row) for row in page.conversations)
        if page.next_cursor is None:
            return found
        cursor = page.next_cursor


def _value(summary: ConversationSummary, name: str) -> Any:
    value = getattr(summary, name)
    return list_time(value) if name in ("created_at", "updated_at") else value


def bookkeeping_findings(view: ReadModelView, application: str, head: int) -> list[Finding]:
    """The tracking table and the settings: only what chatledger writes, the position not after ``head``."""
    bookkeeping = getattr(view, "bookkeeping", None)
    if bookkeeping is None:
        return []
    try:
        tracking, settings = bookkeeping()
    except StoreUnavailableError:  # the database, not the data
        raise
    except (StoredDataError, ValueError, TypeError) as error:
        return [
            ("read-model", None, None, f"the tracking table or settings cannot be read: {error}")
        ]
    findings: list[Finding] = []
    for name, position in sorted(tracking.items(), key=lambda item: str(item[0])):
        if name == MIGRATION:
            if position != 1:
                findings.append(
                    (
                        "read-model",
                        None,
                        None,
                        f"the tracking table's layout row {MIGRATION!r} says {position!r}, "
                        "not 1 (a hand edit?)",
                    )
                )
        elif name != application:
            findings.append(
                (
                    "read-model",
                    None,
                    None,
                    f"the tracking table has a row {str(name)[:80]!r} that chatledger does not write",
                )
            )
        elif not isinstance(position, int) or position > head:
            findings.append(
                (
                    "read-model",
                    None,
                    None,
                    f"the read models' tracking position {position!r} is after the log's newest "
                    f"event {head}: events written up to it would be skipped by the read models",
                )
            )
    for name, value in sorted(settings.items()):
        form = _SETTINGS.get(name)
        if form is None:
            findings.append(
                (
                    "settings",
                    None,
                    None,
                    f"the settings hold {str(name)[:80]!r}, which chatledger does not write",
                )
            )
        elif not form.fullmatch(str(value)):
            findings.append(
                (
                    "settings",
                    None,
                    None,
                    f"the setting {name!r} holds a value chatledger does not write ({str(value)[:40]!r})",
                )
            )
    return findings
