"""LangGraph with chatledger, in one import: the responder, approvals, and durable checkpoints.

* ``LangGraphResponder`` (``chatledger.adapters.responders.langgraph``): a
  compiled graph answering conversations in ``serve``, the worker and
  ``create_app``; an ``interrupt()`` becomes an approval, the answer resumes it.
* ``LangGraphBridge`` (``chatledger.adapters.frameworks.langgraph``): an app's
  own LangGraph loop recorded as it streams, resumed with ``resume(chat_id)``.
* ``request_approval``: ask the human about a tool call from inside the tool.
* ``checkpointer_for`` (``chatledger.adapters.persistence.langgraph_checkpoints``):
  LangGraph's own SQLite or PostgreSQL checkpointer beside a store, so any
  process can resume a paused graph.
"""

from chatledger.adapters.frameworks.langgraph import LANGGRAPH, LangGraphBridge
from chatledger.adapters.persistence.langgraph_checkpoints import checkpointer_for
from chatledger.adapters.responders.langgraph import (
    LangGraphResponder,
    NothingToResumeError,
    UnmatchedInterruptError,
    decisions_of,
    request_approval,
    stream_chunks,
    thread_id,
)

__all__ = [
    "LANGGRAPH",
    "LangGraphBridge",
    "LangGraphResponder",
    "NothingToResumeError",
    "UnmatchedInterruptError",
    "checkpointer_for",
    "decisions_of",
    "request_approval",
    "stream_chunks",
    "thread_id",
]
