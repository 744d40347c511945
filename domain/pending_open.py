"""What became of a stream's open that was decided but not committed when another writer committed.

``open_stream`` decides a stream's open (and the user message given with it)
on the conversation as it is, and commits it with the stream's first batch.
If another writer commits to the conversation in between, the stream's writer
reloads the conversation and asks ``fate`` with the events that came since
its decision:

- ``RECORDED``: its open is among them (a commit that went through although
  its answer was lost); the writer goes on with the stored stream.
- ``STANDS``: only bookkeeping came in between (a title, metadata, a
  redaction, a claim of a continuation request, or the close of an expired
  stream that its own decision closed too), so the messages the answer was
  given are unchanged: the open is decided again on the new state.
- ``LOST``: anything else (another stream opened, a message appended, a cut,
  an answer to a tool call): the answer was begun on a conversation that is
  no longer the stored one. The open is not recorded and the writer ends.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from chatledger.domain.events import (
    ContinuationClaimed,
    ContinuationRequested,
    MetadataSet,
    Redacted,
    StreamClosed,
    StreamOpened,
    TitleSet,
)

__all__ = ["LOST", "RECORDED", "STANDS", "Fate", "fate", "opened_since"]

Fate = Literal["recorded", "stands", "lost"]
RECORDED: Fate = "recorded"
STANDS: Fate = "stands"
LOST: Fate = "lost"

_BOOKKEEPING = (TitleSet, MetadataSet, Redacted, ContinuationClaimed)
"""Events that change neither the messages nor the open stream."""


def fate(stream_id: str, own: Sequence[Any], since: Sequence[Any]) -> Fate:
    """What became of the open of ``stream_id``, decided as the events ``own``, given ``since``.

    ``since`` are the events stored after the version the open was decided on.
    """
    if any(isinstance(event, StreamOpened) and event.stream_id == stream_id for event in since):
        return RECORDED
    closed_too = {event.stream_id for event in own if isinstance(event, StreamClosed)}
    requested_too = any(isinstance(event, ContinuationRequested) for event in own)
    for event in since:
        if isinstance(event, _BOOKKEEPING):
            continue
        if isinstance(event, StreamClosed) and event.stream_id in closed_too:
            continue  # an expired stream closed by someone else, as the decision closed it too
        if isinstance(event, ContinuationRequested) and requested_too:
            continue  # what that close asked for, as the decision's close asked for it
        return LOST
    return STANDS


def opened_since(since: Sequence[Any]) -> str | None:
    """The id of the last stream opened among ``since`` (None if none was)."""
    opened = [event.stream_id for event in since if isinstance(event, StreamOpened)]
    return opened[-1] if opened else None
