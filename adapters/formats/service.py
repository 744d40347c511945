"""Importing a conversation from a format into the store, and exporting one to a format.

``import_conversation`` reads the value with the format's ``read``, starts
the conversation (speaking the AI SDK major the messages need) unless it is
there, and records every step (messages appended, tool calls answered) in
**one commit**: an import is whole or not at all. ``export_conversation``
reads the conversation's messages (and, for formats that order by it, its
audit) and writes them with the format's ``write``; the chatledger bundle is
written by ``store.operations.export``. Both return the format's
``LossReport``: what could not be carried is named there, never dropped
silently.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from chatledger.adapters.formats.bundle import read_bundle
from chatledger.adapters.formats.format import Exported, Imported, ToolOutput
from chatledger.adapters.formats.losses import LossReport
from chatledger.adapters.formats.registry import BUNDLE, format_named
from chatledger.domain.errors import InvalidInputError

if TYPE_CHECKING:
    from chatledger.adapters.store import ConversationStore
    from chatledger.adapters.store.transaction import Transaction
    from chatledger.domain.seal import SealKey

__all__ = ["ImportResult", "Progress", "export_conversation", "import_conversation", "read_format"]

Progress = Callable[[int, int], None]
"""Called with (steps recorded, steps in all) as an import is recorded."""


@dataclass
class ImportResult:
    """What ``import_conversation`` recorded."""

    chat_id: str
    created: bool
    """Whether the import started the conversation (False: appended to an existing one)."""
    report: LossReport


def read_format(value: Any, format: str, *, seal_key: SealKey | None = None) -> Imported:
    """Read a value in ``format`` as chatledger steps, without a store (``seal_key``: bundles only)."""
    chosen = format_named(format)
    if format == BUNDLE:
        return read_bundle(value, seal_key)
    return chosen.read(value)


def import_conversation(
    store: ConversationStore,
    chat_id: str,
    value: Any,
    format: str,
    *,
    actor: str = "system",
    tenant: str | None = None,
    seal_key: SealKey | None = None,
    progress: Progress | None = None,
) -> ImportResult:
    """Record a conversation given in ``format`` as chat ``chat_id`` (new, or appended to).

    ``value`` is what the format's file holds, parsed (a JSON value; the
    bundle's text for ``chatledger``), or the framework's own objects where
    the format says so. The messages are checked as ``append_message``
    checks them and recorded by ``actor`` in one commit; an existing
    conversation must speak the AI SDK major they need. Returns the
    ``LossReport`` of the reading in an ``ImportResult``.
    """
    imported = read_format(value, format, seal_key=seal_key)
    created = store.start_conversation(
        chat_id, tenant=tenant, actor=actor, exist_ok=True, ai_sdk=imported.ai_sdk
    )
    if imported.title and created:
        store.set_title(chat_id, imported.title, tenant=tenant, actor=actor)
    if not created and imported.ai_sdk is not None:
        speaks = store.ai_sdk_of(chat_id, tenant=tenant)
        if speaks != imported.ai_sdk:
            raise InvalidInputError(
                f"conversation {chat_id!r} speaks AI SDK {speaks}; these {format} messages need "
                f"AI SDK {imported.ai_sdk}: import them into a new conversation"
            )
    steps = imported.steps

    def record(tx: Transaction) -> None:
        for done, step in enumerate(steps, 1):
            if isinstance(step, ToolOutput):
                tx.add_tool_output(
                    step.call_id,
                    actor=actor,
                    output=step.output,
                    state="output-error" if step.error_text is not None else "output-available",
                    error_text=step.error_text,
                )
            else:
                tx.append_message(step, actor=actor)
            if progress is not None:
                progress(done, len(steps))

    store.transact(chat_id, record, tenant=tenant)
    return ImportResult(chat_id, created, imported.report)


def export_conversation(
    store: ConversationStore,
    chat_id: str,
    format: str,
    *,
    tenant: str | None = None,
    at_version: int | None = None,
    progress: Progress | None = None,
) -> Exported:
    """The conversation (as it stood at ``at_version``) in ``format``, with what was dropped.

    The value is JSON (for ``chatledger``: the bundle's text, which needs a
    seal first, see ``store.operations.export``).
    """
    chosen = format_named(format)
    if chosen.write is None:
        out = io.StringIO()
        store.operations.export(
            chat_id, out, tenant=tenant, at_version=at_version, progress=progress
        )
        messages = store.messages(chat_id, tenant=tenant, at_version=at_version)
        return Exported(out.getvalue(), LossReport(format, "export", len(messages)))
    messages = store.messages(chat_id, tenant=tenant, at_version=at_version)
    major = store.ai_sdk_of(chat_id, tenant=tenant)

    def history(kinds: list[str]) -> Any:
        return store.history(chat_id, tenant=tenant, kinds=kinds)

    return chosen.write(messages, major, history)
