"""The use cases: ``ConversationStore`` and what it delegates to.

Every public operation of chatledger is a method of ``ConversationStore``
(``store.py``); the modules here hold them by concept: ``actions`` (approvals,
tool outputs, cuts), ``inbox`` (status and the queues), ``audit``, ``follow``,
``streams`` (opening streams, the stream writer and the flusher that
group-commits them), ``operations`` (what operators run: verify, seal,
export, erase, retain; ``store.operations``) and ``shards`` (one store over
several PostgreSQL databases). No SQL, no HTTP, no argparse:
storage is reached through ``chatledger.adapters.persistence``.
"""

from chatledger.adapters.store.actions import ActionResult
from chatledger.adapters.store.store import DEFAULT_TENANT, ConversationStore
from chatledger.adapters.store.streams.service import IngestReport
from chatledger.adapters.store.streams.writer import StreamWriter

__all__ = ["DEFAULT_TENANT", "ActionResult", "ConversationStore", "IngestReport", "StreamWriter"]
