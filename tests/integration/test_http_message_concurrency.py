"""``PUT /api/chats/{id}/message-concurrency``: a conversation's own mid-answer policy, set over HTTP.

A ``drop`` set this way refuses a message sent while another writer's answer
streams (409), on SQLite and PostgreSQL; the other metadata keys are kept;
``null`` gives the conversation back to the server's default; a value that is
not a policy is 422 naming the allowed ones, and changes nothing.
"""

from __future__ import annotations

import pytest

from chatledger import ConversationStore
from chatledger.adapters.http.app import create_app
from chatledger.adapters.responders.scripted import ScriptedResponder
from chatledger.domain.concurrency import parse_concurrency
from chatledger.domain.errors import ConversationNotFoundError, InvalidInputError
from tests.integration.conftest import Backend
from tests.integration.http_support import client_of, error_of, send_body, user
from tests.integration.test_http_steering import _running

pytestmark = pytest.mark.anyio

ROUTE = "/api/chats/c/message-concurrency"


def _metadata(store: ConversationStore) -> object:
    """The conversation's metadata now: what its last ``metadata-set`` entry set."""
    return store.history("c", kinds=["metadata-set"])[-1].details["metadata"]


async def test_drop_set_over_http_answers_409_mid_answer(durable_backend: Backend) -> None:
    store = durable_backend.open()
    store.start_conversation("c", ai_sdk=7)  # 7 steers by default: drop is the route's doing
    store.set_metadata("c", {"topic": "weather"}, actor="user:alice")
    store.append_message("c", user("u1", "hi"))
    app = create_app(store, responder=ScriptedResponder([]))
    async with client_of(app) as client:
        put = await client.put(ROUTE, json={"messageConcurrency": " drop "})
        again = await client.put(ROUTE, json={"messageConcurrency": "drop"})
        assert put.status_code == 200, put.text
        assert put.json() == {"id": "c", "messageConcurrency": "drop", "changed": True}
        assert again.json()["changed"] is False
        assert _metadata(store) == {"topic": "weather", "messageConcurrency": "drop"}
        stream = _running(durable_backend.other_store(store), "c")
        seen = [user("u1", "hi"), {"id": "a1", "role": "assistant", "parts": []}]
        sent = await client.post("/api/chat", json=send_body("c", [*seen, user("u2", "x")]))
        assert "'drop'" in error_of(sent, 409, "MessageDroppedError")
        stream.close()
        cleared = await client.put(ROUTE, json={"messageConcurrency": None})
    assert cleared.json() == {"id": "c", "messageConcurrency": None, "changed": True}
    assert _metadata(store) == {"topic": "weather"}
    assert [m["id"] for m in store.messages("c")] == ["u1", "a1"]
    [entry] = store.history("c", kinds=["mid-answer-message"])
    assert entry.details["policy"] == "drop" and entry.details["outcome"] == "dropped"
    [_, by_route, _] = store.history("c", kinds=["metadata-set"])
    assert by_route.actor.startswith("http-client:")


@pytest.mark.parametrize(
    "body", [{"messageConcurrency": "sometimes"}, {"messageConcurrency": 5}, {}, {"policy": "drop"}]
)
async def test_a_value_that_is_not_a_policy_is_422_and_changes_nothing(
    durable_backend: Backend, body: dict[str, object]
) -> None:
    store = durable_backend.open()
    store.start_conversation("c")
    app = create_app(store, responder=ScriptedResponder([]))
    async with client_of(app) as client:
        put = await client.put(ROUTE, json=body)
        missing = await client.put(
            "/api/chats/nobody/message-concurrency", json={"messageConcurrency": "drop"}
        )
    message = error_of(put, 422, "InvalidRequestError")
    assert "'messageConcurrency'" in message
    if "messageConcurrency" in body:
        assert "queue, latest, merge, drop, debounce" in message
    assert len(store.history("c")) == 1
    error_of(missing, 404, "ConversationNotFoundError")


async def test_a_policy_given_when_starting_over_http_applies_at_once(
    durable_backend: Backend,
) -> None:
    """``POST /api/chats`` ``{messageConcurrency}``: recorded with the start, a drop refuses (409)."""
    store = durable_backend.open()
    app = create_app(store, responder=ScriptedResponder([]))
    async with client_of(app) as client:
        bad = await client.post("/api/chats", json={"id": "c", "messageConcurrency": "never"})
        assert "queue, latest, merge, drop, debounce" in error_of(bad, 422, "InvalidRequestError")
        with pytest.raises(ConversationNotFoundError):  # nothing started
            store.history("c")
        body = {"id": "c", "aiSdk": 7, "metadata": {"topic": "x"}, "messageConcurrency": "drop"}
        started = await client.post("/api/chats", json=body)
        assert started.status_code == 201, started.text
        kinds = [entry.kind for entry in store.history("c")]
        assert kinds == ["conversation-started", "metadata-set"]  # one commit, version 2
        assert _metadata(store) == {"topic": "x", "messageConcurrency": "drop"}
        store.append_message("c", user("u1", "hi"))
        stream = _running(durable_backend.other_store(store), "c")
        seen = [user("u1", "hi"), {"id": "a1", "role": "assistant", "parts": []}]
        sent = await client.post("/api/chat", json=send_body("c", [*seen, user("u2", "x")]))
        assert "'drop'" in error_of(sent, 409, "MessageDroppedError")
        stream.close()


def test_the_library_records_a_policy_given_at_the_start(durable_backend: Backend) -> None:
    store = durable_backend.open()
    with pytest.raises(InvalidInputError, match="message_concurrency must be one of"):
        store.start_conversation("c", message_concurrency="sometimes")
    assert store.start_conversation("c", message_concurrency="debounce:2")
    assert _metadata(store) == {"messageConcurrency": "debounce:2"}
    fresh = durable_backend.other_store(store)  # folded: another process sees the policy
    state = fresh.chats._uow.load(fresh.tenant, "c").state
    assert fresh.turns.mid_answer.policy(state) == parse_concurrency("debounce:2")
