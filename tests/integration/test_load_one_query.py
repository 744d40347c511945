"""A load on a fresh handle reads the messages row and the log's newest version in one statement.

``messages()`` on a conversation not cached yet asks the log nothing apart (no
``has_events_after``): the read model's row and the log's head come from one
query outside a transaction. When the log is ahead of the row, the read
catches the projection up, as before.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from chatledger import ConversationStore
from chatledger.domain.aggregate import conversation_id
from tests.integration.conftest import Backend


def _user(message_id: str, text: str = "hi") -> dict[str, Any]:
    return {"id": message_id, "role": "user", "parts": [{"type": "text", "text": text}]}


@contextmanager
def counted(obj: Any, name: str) -> Iterator[list[int]]:
    """Count calls of ``obj.name`` (the real method runs; it is only counted)."""
    real = getattr(obj, name)
    count = [0]

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        count[0] += 1
        return real(*args, **kwargs)

    setattr(obj, name, wrapper)
    try:
        yield count
    finally:
        setattr(obj, name, real)


def _written(backend: Backend) -> ConversationStore:
    writer = backend.open()
    writer.start_conversation("c")
    writer.append_message("c", _user("u1", "first"))
    with writer.open_stream("c") as stream:
        for chunk in (
            {"type": "start"},
            {"type": "text-start", "id": "t"},
            {"type": "text-delta", "id": "t", "delta": "answer"},
            {"type": "text-end", "id": "t"},
            {"type": "finish"},
        ):
            stream.append(chunk)
    return writer


@pytest.mark.timeout(60)
def test_a_load_on_a_fresh_handle_is_one_query(durable_backend: Backend) -> None:
    """The fresh handle reads the row and the log's head together: the log is not asked apart,
    the projection is not caught up, and the messages are the conversation's."""
    written = _written(durable_backend).messages("c")
    reader = durable_backend.open()
    with (
        counted(reader.log, "has_events_after") as checks,
        counted(reader.projector, "catch_up") as catch_ups,
        counted(reader.read_models, "conversation_at_head") as reads,
    ):
        assert reader.messages("c") == written
    assert (checks[0], catch_ups[0], reads[0]) == (0, 0, 1)


@pytest.mark.timeout(60)
def test_a_load_catches_up_when_the_log_is_ahead_of_the_row(durable_backend: Backend) -> None:
    """The row says an older version than the log's newest: the read catches the projection up
    (the one statement's head is what tells it)."""
    _written(durable_backend)
    reader = durable_backend.open()
    key = conversation_id(reader.tenant, "c")
    dialect: Any = reader.read_models.dialect  # type: ignore[attr-defined]
    with dialect.transaction(commit=True) as c:
        c.execute(
            dialect.statement(
                "UPDATE {conversations} SET version = version - 1 WHERE conversation_id = ?"
            ),
            (str(key),),
        )
    with counted(reader.projector, "catch_up") as catch_ups:
        messages = reader.messages("c")
    assert catch_ups[0] == 1
    assert [m["id"] for m in messages][:1] == ["u1"]


@pytest.mark.timeout(60)
def test_an_unknown_conversation_still_reads_as_unknown(durable_backend: Backend) -> None:
    """No row and no events: the one statement returns nothing, and the read says so as before."""
    _written(durable_backend)
    reader = durable_backend.open()
    at_head = reader.read_models.conversation_at_head(conversation_id(reader.tenant, "nope"))
    assert at_head == (None, 0)
