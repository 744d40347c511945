"""The HTTP app's promise, as a property: the client's fold of what it streams equals the store.

Three ways a client gets an answer: streamed by ``POST /api/chat`` (a new
message), a continuation of the last message (chunk by chunk, ``deliver``),
and a resume replayed from the log (``follow`` and ``resumed``).

Any conversation the store can hold, any valid stream the responder sends
into a new answer (with replays of known tool calls inserted anywhere, and
results for calls of earlier messages): the real AI SDK's
``readUIMessageStream`` over the SSE events must give exactly the message the
store holds. This is what the turn runner's ``deliver`` decides chunk by chunk
(``chatledger.domain.delivery``).
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chatledger import ConversationStore
from chatledger.adapters.http.app import create_app
from chatledger.adapters.responders.scripted import ScriptedResponder
from chatledger.adapters.store.turns.runner import deliver
from chatledger.domain.delivery import resumed
from tests.conformance.checks import assert_json_equal, sdk_message
from tests.conformance.replays import known_calls, with_replays
from tests.conformance.strategies import ConversationStream, conversation_streams
from tests.support.oracle import Oracle

pytestmark = pytest.mark.oracle

QUESTION = {"id": "question", "role": "user", "parts": [{"type": "text", "text": "and now?"}]}


async def _post(
    store: ConversationStore, chunks: list[dict[str, Any]], body: dict[str, Any]
) -> str:
    app = create_app(store, responder=ScriptedResponder([chunks]))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
        response = await client.post("/api/chat", json=body)
    assert response.status_code == 200, response.text
    return response.text


def _events(text: str) -> list[dict[str, Any]]:
    data = [line[6:] for line in text.split("\n") if line.startswith("data: ")]
    assert data[-1] == "[DONE]"
    return [json.loads(item) for item in data[:-1]]


@contextmanager
def holding(messages: list[dict[str, Any]]) -> Iterator[ConversationStore]:
    """A store on a fresh SQLite file whose conversation ``c`` holds ``messages``."""
    with tempfile.TemporaryDirectory() as folder:
        store = ConversationStore.open(f"sqlite:///{Path(folder) / 'p.db'}")
        try:
            store.start_conversation("c", ai_sdk=6)  # the clients here run ai@6
            for message in messages:
                store.append_message("c", message)
            yield store
        finally:
            store.close()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=conversation_streams(continuation=False), data=st.data())
def test_the_client_fold_of_the_stream_equals_the_stored_message(
    oracle: Oracle, case: ConversationStream, data: st.DataObject
) -> None:
    chunks = data.draw(with_replays(known_calls(case.messages), case.chunks), label="sent")
    with holding(case.messages) as store:
        body = {"id": "c", "messages": [*case.messages, QUESTION], "trigger": "submit-message"}
        events = _events(asyncio.run(_post(store, chunks, body)))
        stored = store.messages("c")
    assert_json_equal(sdk_message(oracle.read(events), "the client's fold"), stored[-1], "store")
    assert len(stored) == len(case.messages) + 2 and stored[-2] == QUESTION


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=conversation_streams(continuation=True), data=st.data())
def test_the_client_fold_of_a_continuation_equals_the_stored_message(
    oracle: Oracle, case: ConversationStream, data: st.DataObject
) -> None:
    """The same for a continuation of the last assistant message, chunk by chunk (``deliver``).

    The client continues the message as it holds it; replayed results of its
    calls are sent as the results the store holds.
    """
    chunks = data.draw(with_replays(known_calls(case.messages), case.chunks), label="sent")
    with holding(case.messages) as store:
        with store.open_stream("c", continuation=True) as writer:
            sent = [deliver(writer, chunk) for chunk in chunks]
        stored = store.messages("c")
    events = [chunk for chunk in sent if chunk is not None]
    folded = sdk_message(oracle.read(events, message=case.messages[-1]), "the client's fold")
    assert_json_equal(folded, stored[-1], "store")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=conversation_streams(continuation=False), data=st.data())
def test_a_resumed_answer_folds_to_the_stored_message(
    oracle: Oracle, case: ConversationStream, data: st.DataObject
) -> None:
    """What ``GET /api/chat/{id}/stream`` replays from the log (``follow`` + ``resumed``) folds right."""
    chunks = data.draw(with_replays(known_calls(case.messages), case.chunks), label="sent")
    with holding([*case.messages, QUESTION]) as store:
        with store.open_stream("c") as writer:
            writer.append({"type": "start"})
            for chunk in chunks:
                writer.append(chunk)
        stored = store.messages("c")
        followed = [item.chunk for item in store.follow("c")]
    events = [sent for chunk in followed if (sent := resumed(chunk, stored[-1])) is not None]
    folded = sdk_message(oracle.read(events), "the resuming client's fold")
    assert_json_equal(folded, stored[-1], "store")
