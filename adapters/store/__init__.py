"""The application layer: ``ConversationStore`` and the services it is composed of.

``ConversationStore`` (``store.py``) is a thin façade over services by
concern: ``chats`` (writing a conversation), ``streams`` (a model's answer),
``turns`` (a request recorded and answered, for any transport), ``reads``
(the one reader), ``inbox`` (what waits across conversations) and
``operations`` (what operators run). No SQL, no web server, no command line: storage is
reached through ``chatledger.adapters.persistence``. The names below load on
first use, so importing a service module (the responder port, say) does not
load the whole store.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from chatledger.adapters.store.actions import ActionResult
    from chatledger.adapters.store.store import DEFAULT_TENANT, ConversationStore
    from chatledger.adapters.store.streams.service import IngestReport
    from chatledger.adapters.store.streams.writer import StreamWriter

__all__ = ["DEFAULT_TENANT", "ActionResult", "ConversationStore", "IngestReport", "StreamWriter"]

_LAZY = {
    "ActionResult": "chatledger.adapters.store.actions",
    "ConversationStore": "chatledger.adapters.store.store",
    "DEFAULT_TENANT": "chatledger.adapters.store.store",
    "IngestReport": "chatledger.adapters.store.streams.service",
    "StreamWriter": "chatledger.adapters.store.streams.writer",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
