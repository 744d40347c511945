"""The read models' tables on SQLite and PostgreSQL (``ReadModelView`` implementations).

They live next to the event log, in the same SQLite file or PostgreSQL
schema, and are created on first use. One object per table set, each
writing its statements through the database's ``Dialect``:

- ``conversations``: ``chatledger_conversations_v2`` and ``chatledger_messages_v2``;
- ``timeline``: ``chatledger_timeline_v2``, the audit timeline;
- ``inbox``: ``chatledger_pending_approvals`` and ``chatledger_pending_continuations_v2``;
- ``conversation_list`` (with ``search``): ``chatledger_conversation_list_v2``
  and its full-text search;
- ``bookkeeping``: the tracking table (``tracking`` on SQLite,
  ``chatledger_tracking`` on PostgreSQL), ``chatledger_quarantine`` and
  ``chatledger_settings``.

``view.ReadModels`` composes them; ``backends`` gives one per database
(``memory://`` stores keep their read models in an in-memory SQLite database).

The ``_v2`` names are the layout of these tables: a store whose read models
were laid out before (tables without the suffix) has them dropped when it is
opened, and projected again from the log (``drop_old_layout``).
"""

from __future__ import annotations

from chatledger.adapters.persistence.read_models.backends import (
    MemoryReadModels,
    PostgresReadModels,
    SQLiteReadModels,
    memory_read_models,
    open_read_models,
)

__all__ = [
    "MemoryReadModels",
    "PostgresReadModels",
    "SQLiteReadModels",
    "memory_read_models",
    "open_read_models",
]
