"""A conversation's stream: opened, written in batches, group-committed, expired when its writer dies.

``service`` holds the use cases (``Streams``, what ``ConversationStore``'s
stream methods forward to); ``writer`` the ``StreamWriter`` a stream is
written through, on ``committer`` (its commit path); ``flusher`` the thread
that commits the due batches of all open streams together, over the
``GroupMember`` protocol; ``policy`` when batches are due; ``pending_open``
an open decided but not committed yet; ``leases`` closing the streams whose
writers died.
"""

from chatledger.adapters.store.streams.policy import BatchPolicy
from chatledger.adapters.store.streams.service import IngestReport, Streams
from chatledger.adapters.store.streams.writer import StreamWriter

__all__ = ["BatchPolicy", "IngestReport", "StreamWriter", "Streams"]
