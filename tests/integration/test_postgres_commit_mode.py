"""``?synchronous_commit=`` on a PostgreSQL store URL: what the store's connections commit with.

``off`` lets a commit return before its WAL reaches the disk (the server still
has it: a ``kill -9`` of the writing process loses nothing committed); the
default stays ``on``. A value PostgreSQL does not know is refused up front.
"""

from __future__ import annotations

import pytest

from chatledger import ConversationStore
from chatledger.domain.errors import StoreConfigurationError
from tests.integration.conftest import Backend
from tests.support.builders import user

pytestmark = pytest.mark.postgres


def _mode(store: ConversationStore) -> str:
    """``synchronous_commit`` as the store's own pooled connections see it."""
    datastore = store.log.recorder.datastore  # type: ignore[attr-defined]
    with datastore.get_connection() as connection:
        row = connection.execute("SHOW synchronous_commit").fetchone()
    return str(row["synchronous_commit"])


def test_synchronous_commit_off_is_used_by_the_log_and_writes_read_back(
    postgres_backend: Backend,
) -> None:
    """The default store commits with ``on``; ``&synchronous_commit=off`` with ``off``, and
    what it writes is there for another store."""
    default = postgres_backend.open()
    relaxed = ConversationStore.open(postgres_backend.url + "&synchronous_commit=off")
    postgres_backend.stores.append(relaxed)
    assert _mode(default) == "on"
    assert _mode(relaxed) == "off"
    relaxed.start_conversation("chat")
    with relaxed.open_stream("chat", user_message=user("u1")) as stream:
        stream.append({"type": "start"})
        stream.append({"type": "finish"})
    assert [m["role"] for m in default.messages("chat")] == ["user", "assistant"]


def test_an_unknown_synchronous_commit_is_refused_naming_the_url_parameter() -> None:
    """Refused when the URL is read, before any connection, naming the parameter and the choices."""
    with pytest.raises(StoreConfigurationError, match="synchronous_commit must be one of"):
        ConversationStore.open("postgresql://u@127.0.0.1:5432/test?synchronous_commit=sometimes")
