"""The use cases: ``ConversationStore`` and what it delegates to.

Every public operation of chatledger is a method of ``ConversationStore``
(``store.py``); the modules here hold them by concept: ``actions`` (approvals,
tool outputs, cuts), ``inbox`` (status and the queues), ``audit``, ``follow``,
``verify``, ``writer`` (the stream writer) and ``shards`` (one store over
several PostgreSQL databases). No SQL, no HTTP, no argparse:
storage is reached through ``chatledger.adapters.persistence``.
"""

from chatledger.adapters.store.actions import ActionResult
from chatledger.adapters.store.store import DEFAULT_TENANT, ConversationStore, IngestReport
from chatledger.adapters.store.writer import StreamWriter

__all__ = ["DEFAULT_TENANT", "ActionResult", "ConversationStore", "IngestReport", "StreamWriter"]
