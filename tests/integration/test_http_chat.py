"""POST /api/chat (``http/chat.py``, ``http/use_chat.py``, ``store/turns/``) against real stores: the
AI SDK ``useChat`` wire conventions.

Requests go through ``httpx.ASGITransport`` into the app, which writes to a
real SQLite file (and PostgreSQL for the main flow). The main flow is the
demo turn as a ``useChat`` client drives it: send, a streamed answer ending on
a tool call awaiting approval, the denial sent back inside ``messages``, the
continuation streamed, and the final messages equal to the store's.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import httpx
import pytest

from chatledger import ConversationStore
from chatledger.adapters.http.app import create_app
from chatledger.adapters.responders import demo
from chatledger.adapters.responders.scripted import (
    Responder,
    ResponderRequest,
    ScriptedResponder,
    ScriptExhaustedError,
    demo_responder,
)
from chatledger.domain.errors import ConversationExistsError
from tests.integration.conftest import Backend
from tests.integration.http_support import (
    Chunk,
    add_output,
    answer_approval,
    client_of,
    error_of,
    send_body,
    sse_events,
    text_turn,
    user,
)
from tests.support.oracle import Oracle

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("via", ["messages", "endpoint"])
async def test_send_deny_continue_like_use_chat(durable_backend: Backend, via: str) -> None:
    """The demo turn through HTTP: the denial arrives inside ``messages`` or by the approvals endpoint.

    Through the endpoint with ``autoContinue: false`` the client then asks for
    the continuation itself, as ``useChat`` does.
    """
    store = durable_backend.open()
    responder = demo_responder()
    app = create_app(store, responder=responder)
    chat = "chat-http"
    async with client_of(app) as client:
        first = sse_events(
            await client.post("/api/chat", json=send_body(chat, [demo.USER_MESSAGE]))
        )
        assert first == demo.first_turn_chunks()  # every chunk applied, sent as produced

        status = (await client.get(f"/api/chats/{chat}/status")).json()
        assert status["status"] == "awaiting-approval"
        assert status["waitingFor"][0]["approvalId"] == demo.APPROVAL_ID
        inbox = (await client.get("/api/approvals")).json()["approvals"]
        assert [(a["chatId"], a["toolCallId"]) for a in inbox] == [(chat, demo.TOOL_CALL_ID)]
        assert (await client.get(f"/api/chat/{chat}/stream")).status_code == 204

        shown = (await client.get(f"/api/chats/{chat}/messages")).json()["messages"]
        assistant = shown[-1]
        if via == "messages":
            assistant = answer_approval(assistant, demo.APPROVAL_ID, False, demo.DENIAL_REASON)
        else:
            answered = await client.post(
                f"/api/chats/{chat}/approvals",
                json={
                    "approvalId": demo.APPROVAL_ID,
                    "approved": False,
                    "reason": demo.DENIAL_REASON,
                    "autoContinue": False,
                },
            )
            assert answered.json() == {
                "toolCallId": demo.TOOL_CALL_ID,
                "changed": True,
                "state": "output-denied",
                "continuationRequested": False,
            }
            status = (await client.get(f"/api/chats/{chat}/status")).json()
            assert status["status"] == "ready-to-continue"
        second = sse_events(
            await client.post(
                "/api/chat",
                json=send_body(chat, [demo.USER_MESSAGE, assistant], messageId=demo.MESSAGE_ID),
            )
        )
        # The provider's replay of the earlier call is recorded, not sent: the
        # client would regress its tool part with it (the SDK applies a re-sent call in place).
        replayed = {"tool-input-start", "tool-input-delta", "tool-input-available"}
        assert second == [c for c in demo.continuation_chunks() if c["type"] not in replayed]

        final = (await client.get(f"/api/chats/{chat}/messages")).json()
        assert final == {"id": chat, "messages": store.messages(chat)}
        assert (await client.get(f"/api/chat/{chat}/stream")).status_code == 204
        status = (await client.get(f"/api/chats/{chat}/status")).json()
        assert (status["status"], status["lastOutcome"]) == ("idle", "finished")
        history = (
            await client.get(f"/api/chats/{chat}/history", params={"kind": "approval-responded"})
        ).json()["entries"]
        assert [(e["actor"], e["marks"]) for e in history] == [("http-client:default", ["denied"])]

    part = store.messages(chat)[-1]["parts"]
    denied = next(p for p in part if p.get("toolCallId") == demo.TOOL_CALL_ID)
    assert denied["state"] == "output-denied"
    assert denied["approval"] == {
        "id": demo.APPROVAL_ID,
        "approved": False,
        "reason": demo.DENIAL_REASON,
    }
    # The same conversation as the demo recorded straight into the store.
    demo.record_demo(store, "direct")
    assert store.messages(chat) == store.messages("direct")
    assert [r.trigger for r in responder.requests] == ["submit-message", "continuation"]
    assert responder.requests[0].messages == [demo.USER_MESSAGE]
    assert responder.requests[1].message_id == demo.MESSAGE_ID


@pytest.mark.oracle
async def test_the_real_sdk_folds_the_streams_into_the_stored_messages(
    sqlite_store: ConversationStore, oracle: Oracle
) -> None:
    """``readUIMessageStream`` over what the app streams gives the messages the store holds."""
    app = create_app(sqlite_store, responder=demo_responder())
    async with client_of(app) as client:
        first = sse_events(await client.post("/api/chat", json=send_body("c", [demo.USER_MESSAGE])))
        folded = oracle.read(first)
        assert folded["ok"], folded
        assert folded["message"] == sqlite_store.messages("c")[-1]

        answered = answer_approval(folded["message"], demo.APPROVAL_ID, False, "no")
        body = send_body("c", [demo.USER_MESSAGE, answered], messageId=demo.MESSAGE_ID)
        second = sse_events(await client.post("/api/chat", json=body))
        continued = oracle.read(second, message=answered)
        assert continued["ok"], continued
        assert continued["message"] == sqlite_store.messages("c")[-1]


async def test_tool_output_inside_messages_continues_the_turn(
    sqlite_store: ConversationStore,
) -> None:
    """A client-side tool's output (``addToolOutput``) sent in ``messages`` is recorded, then answered."""
    call = {
        "type": "tool-input-available",
        "toolCallId": "call-w",
        "toolName": "weather",
        "input": {"city": "Oslo"},
    }
    responder = ScriptedResponder(
        [text_turn("a1", "Checking.", tool=call), text_turn("a1", "It is sunny.")]
    )
    app = create_app(sqlite_store, responder=responder)
    async with client_of(app) as client:
        question = user("u1", "Weather in Oslo?")
        sse_events(await client.post("/api/chat", json=send_body("w", [question])))
        status = (await client.get("/api/chats/w/status")).json()
        assert status["status"] == "awaiting-tool-output"

        assistant = (await client.get("/api/chats/w/messages")).json()["messages"][-1]
        answered = add_output(assistant, "call-w", {"sky": "clear"})
        body = send_body("w", [question, answered], messageId="a1")
        second = sse_events(await client.post("/api/chat", json=body))
        assert second[0] == {"type": "start", "messageId": "a1"}

    messages = sqlite_store.messages("w")
    assert [m["id"] for m in messages] == ["u1", "a1"]
    parts = messages[-1]["parts"]
    tool = next(p for p in parts if p.get("toolCallId") == "call-w")
    assert (tool["state"], tool["output"]) == ("output-available", {"sky": "clear"})
    assert parts[-1]["type"] == "text" and parts[-1]["text"] == "It is sunny."
    assert responder.requests[-1].trigger == "continuation"


async def test_custom_denial_as_tool_error_inside_messages(sqlite_store: ConversationStore) -> None:
    """An ``output-error`` the client gives (a custom denial) is recorded; the turn continues."""
    call = {
        "type": "tool-input-available",
        "toolCallId": "call-x",
        "toolName": "wipe",
        "input": {},
    }
    responder = ScriptedResponder(
        [text_turn("a1", "Wiping?", tool=call), text_turn("a1", "Not wiping then.")]
    )
    app = create_app(sqlite_store, responder=responder)
    async with client_of(app) as client:
        question = user("u1", "Wipe it")
        sse_events(await client.post("/api/chat", json=send_body("e", [question])))
        assistant = (await client.get("/api/chats/e/messages")).json()["messages"][-1]
        for part in assistant["parts"]:
            if part.get("toolCallId") == "call-x":
                part.update(state="output-error", errorText="User said no: keep it.")
        body = send_body("e", [question, assistant], messageId="a1")
        second = sse_events(await client.post("/api/chat", json=body))
        assert [c["type"] for c in second][-2:] == ["finish-step", "finish"]
    tool = next(
        p for p in sqlite_store.messages("e")[-1]["parts"] if p.get("toolCallId") == "call-x"
    )
    assert (tool["state"], tool["errorText"]) == ("output-error", "User said no: keep it.")


async def test_a_new_answer_never_takes_an_existing_message_id(
    sqlite_store: ConversationStore,
) -> None:
    """A responder ``start`` naming an id the conversation already has is refused, then stored without it."""
    responder = ScriptedResponder([text_turn("a1", "One."), text_turn("a1", "Two.")])
    app = create_app(sqlite_store, responder=responder)
    async with client_of(app) as client:
        sse_events(await client.post("/api/chat", json=send_body("d", [user("u1", "1")])))
        shown = (await client.get("/api/chats/d/messages")).json()["messages"]
        body = send_body("d", [*shown, user("u2", "2")])
        events = sse_events(await client.post("/api/chat", json=body))
        assert events[0]["type"] == "start" and events[0]["messageId"] != "a1"
    ids = [m["id"] for m in sqlite_store.messages("d")]
    assert ids == ["u1", "a1", "u2", events[0]["messageId"]]
    (refusal,) = [e for e in sqlite_store.history("d") if "refused" in e.marks]
    assert "'a1', the id of message 2" in json.dumps(refusal.details)


async def test_a_result_for_an_earlier_message_is_stored_not_streamed(
    sqlite_store: ConversationStore,
) -> None:
    """The store puts it on the earlier part (docs/behaviour.md §3.3); the SDK client could not fold it."""
    call = {
        "type": "tool-input-available",
        "toolCallId": "call-old",
        "toolName": "lookup",
        "input": {"q": "x"},
    }
    late = {"type": "tool-output-available", "toolCallId": "call-old", "output": {"found": 1}}
    second = text_turn("a2", "Moving on.")
    responder = ScriptedResponder(
        [text_turn("a1", "Looking.", tool=call), [*second[:2], late, *second[2:]]]
    )
    app = create_app(sqlite_store, responder=responder)
    async with client_of(app) as client:
        sse_events(await client.post("/api/chat", json=send_body("late", [user("u1", "?")])))
        shown = (await client.get("/api/chats/late/messages")).json()["messages"]
        body = send_body("late", [*shown, user("u2", "Never mind.")])
        events = sse_events(await client.post("/api/chat", json=body))
        assert events == second
    earlier = sqlite_store.messages("late")[1]
    tool = next(p for p in earlier["parts"] if p.get("toolCallId") == "call-old")
    assert (tool["state"], tool["output"]) == ("output-available", {"found": 1})


async def test_regenerate_and_edit(sqlite_store: ConversationStore) -> None:
    """``regenerate-message`` cuts the answer and streams a new one; a changed user message is an edit."""
    responder = ScriptedResponder(
        [text_turn("a1", "One."), text_turn("a2", "Two."), text_turn("a3", "Three.")]
    )
    app = create_app(sqlite_store, responder=responder)
    async with client_of(app) as client:
        question = user("u1", "Count?")
        sse_events(await client.post("/api/chat", json=send_body("r", [question])))
        body = {
            "id": "r",
            "messages": [question],
            "trigger": "regenerate-message",
            "messageId": "a1",
        }
        events = sse_events(await client.post("/api/chat", json=body))
        assert events[0] == {"type": "start", "messageId": "a2"}
        assert [m["id"] for m in sqlite_store.messages("r")] == ["u1", "a2"]
        assert responder.requests[-1].trigger == "regenerate-message"
        assert responder.requests[-1].messages == [question]

        edited = user("u1", "Count again?")
        sse_events(await client.post("/api/chat", json=send_body("r", [edited], messageId="u1")))
        messages = sqlite_store.messages("r")
        assert [m["id"] for m in messages] == ["u1", "a3"]
        assert messages[0]["parts"][0]["text"] == "Count again?"
        entries = (await client.get("/api/chats/r/history")).json()["entries"]
        cuts = [e["position"] for e in entries if e["kind"] == "messages-cut"]
        assert len(cuts) == 2
        # Earlier answers stay in the log.
        before = {"atVersion": cuts[0] - 1}
        old = (await client.get("/api/chats/r/messages", params=before)).json()
        assert [m["id"] for m in old["messages"]] == ["u1", "a1"]


async def test_a_failing_responder_ends_the_stream_with_an_error(
    sqlite_store: ConversationStore,
) -> None:
    """The client gets an ``error`` chunk; the stream is recorded as errored; the chat stays usable."""

    def blocking(request: ResponderRequest) -> Iterator[Chunk]:
        yield {"type": "start-step"}
        raise RuntimeError("model exploded")

    class Sync:
        actor = "agent:sync"

        def respond(self, request: ResponderRequest) -> Iterator[Chunk]:
            return blocking(request)

    app = create_app(sqlite_store, responder=Sync())
    async with client_of(app) as client:
        events = sse_events(await client.post("/api/chat", json=send_body("f", [user("u1", "hi")])))
        assert events[0]["type"] == "start" and isinstance(events[0]["messageId"], str)
        assert events[1:] == [
            {"type": "start-step"},
            {"type": "error", "errorText": "The responder failed."},
        ]
        status = (await client.get("/api/chats/f/status")).json()
        assert (status["status"], status["lastOutcome"]) == ("idle", "errored")
        assert "model exploded" in status["lastReason"]
        assert sqlite_store.messages("f")[-1]["id"] == events[0]["messageId"]

    exhausted = create_app(sqlite_store, responder=ScriptedResponder([]))
    async with client_of(exhausted) as client:
        events = sse_events(await client.post("/api/chat", json=send_body("f", [user("u2", "?")])))
        assert [event["type"] for event in events] == ["start", "error"]
        assert sqlite_store.messages("f")[-1]["id"] == events[0]["messageId"]


async def test_one_open_stream_per_conversation(sqlite_store: ConversationStore) -> None:
    """An AI SDK 6 send while an answer is streaming is refused with 409 (v7: test_http_steering)."""
    sqlite_store.start_conversation("busy", ai_sdk=6)
    sqlite_store.append_message("busy", user("u1", "hi"))
    with sqlite_store.open_stream("busy") as stream:
        stream.append({"type": "start", "messageId": "a1"})
        app = create_app(sqlite_store, responder=ScriptedResponder([]))
        async with client_of(app) as client:
            response = await client.post("/api/chat", json=send_body("busy", [user("u2", "?")]))
            error_of(response, 409, "StreamAlreadyOpenError")


async def test_scripted_responder_plays_its_answers_in_order() -> None:
    """Each request gets the next answer (a copy); ``cycle`` starts over; without it, it runs out."""
    request = ResponderRequest("c", "t", [], "submit-message", "m")
    scripted = ScriptedResponder([[{"type": "start"}], [{"type": "finish"}]])
    first = [chunk async for chunk in scripted.respond(request)]
    first[0]["type"] = "changed by the store"
    assert [chunk async for chunk in scripted.respond(request)] == [{"type": "finish"}]
    assert scripted.remaining == 0 and len(scripted.requests) == 2
    with pytest.raises(ScriptExhaustedError):
        [chunk async for chunk in scripted.respond(request)]
    assert scripted.scripts[0] == [{"type": "start"}]
    looping = ScriptedResponder([[{"type": "start"}], [{"type": "finish"}]], cycle=True)
    answers = [[c["type"] async for c in looping.respond(request)] for _ in range(3)]
    assert answers == [["start"], ["finish"], ["start"]]
    # The demo answers by trigger, whatever came before (so every server process agrees).
    demo_bot = demo_responder()
    continuing = ResponderRequest("c", "t", [], "continuation", "m")
    answers = [[c async for c in demo_bot.respond(r)] for r in (continuing, request, continuing)]
    assert answers == [
        demo.continuation_chunks(),
        demo.first_turn_chunks(),
        demo.continuation_chunks(),
    ]
    assert isinstance(demo_bot, Responder)


async def test_stop_ends_the_answer_being_written(sqlite_store: ConversationStore) -> None:
    """``POST /stop`` stops the responder; the stream closes aborted with who and why."""
    app = create_app(sqlite_store, responder=demo_responder(delay=0.2))
    chat = "stopped"
    async with client_of(app) as client:
        idle = await client.post(f"/api/chats/{chat}/stop", json={})
        error_of(idle, 404, "ConversationNotFoundError")

        async def send() -> httpx.Response:
            return await client.post("/api/chat", json=send_body(chat, [demo.USER_MESSAGE]))

        sending = asyncio.create_task(send())
        for _ in range(500):
            await asyncio.sleep(0.01)
            shown = await client.get(f"/api/chats/{chat}/status")
            if shown.status_code == 200 and shown.json()["status"] == "streaming":
                break
        stopped = await client.post(f"/api/chats/{chat}/stop", json={"reason": "too slow"})
        assert stopped.json()["stopped"] is True
        chunks = sse_events(await sending)
        assert chunks[-1] == {
            "type": "abort",
            "reason": "stopped by http-client:default: too slow",
        }
        assert len(chunks) < len(demo.first_turn_chunks())
        again = await client.post(f"/api/chats/{chat}/stop")  # no body at all is fine
        assert again.json() == {"stopped": False, "streamId": None}
        plain = await client.post(
            f"/api/chats/{chat}/stop", content="{}", headers={"content-type": "text/plain"}
        )
        assert plain.status_code == 415  # a body must still be JSON-typed
    status = sqlite_store.status(chat)
    assert (status.status, status.last_outcome) == ("idle", "aborted")
    assert status.last_reason == "stopped by http-client:default: too slow"
    (closed,) = sqlite_store.history(chat, kinds=["stream-closed"])
    assert closed.actor == demo_responder().actor


# -- the write path ------------------------------------------------------------------------


async def test_a_turn_never_waits_for_the_projection(sqlite_store: ConversationStore) -> None:
    """Two turns over HTTP leave every event to the projector: the write path reads the aggregate.

    The responder is still given the conversation as stored (from the
    aggregate just saved), equal to what the read models show afterwards.
    """
    responder = ScriptedResponder([text_turn("a1", "One."), text_turn("a2", "Two.")])
    app = create_app(sqlite_store, responder=responder)
    assistant = {"id": "a1", "role": "assistant"}
    async with client_of(app) as client:
        sse_events(await client.post("/api/chat", json=send_body("c", [user("u1", "hi")])))
        body = send_body("c", [user("u1", "hi"), assistant, user("u2", "again")])
        sse_events(await client.post("/api/chat", json=body))
    assert (
        sqlite_store.operations.catch_up() == sqlite_store.operations.head()
    )  # nothing was projected before
    stored = sqlite_store.messages("c")
    assert [r.messages for r in responder.requests] == [stored[:1], stored[:3]]


async def test_a_refused_first_message_creates_no_conversation(
    sqlite_store: ConversationStore,
) -> None:
    """A POST whose new conversation's message is refused (invalid, oversized) changes nothing."""
    app = create_app(sqlite_store, responder=ScriptedResponder([text_turn("a1", "Hi.")]))
    bad_parts = {"id": "u1", "role": "user", "parts": "not a list"}
    huge = user("u1", "x" * (sqlite_store.limits.max_message_bytes + 1))
    async with client_of(app) as client:
        refused = await client.post("/api/chat", json=send_body("new", [bad_parts]))
        error_of(refused, 422, "InvalidMessageError")
        too_big = await client.post("/api/chat", json=send_body("new", [huge]))
        error_of(too_big, 413, "OversizedInputError")
        assistant = {"id": "a", "role": "assistant"}
        unknown = await client.post("/api/chat", json=send_body("new", [assistant]))
        error_of(unknown, 409, "OutOfDateError")
        nothing = await client.post(
            "/api/chat", json={"id": "new", "messages": [], "trigger": "regenerate-message"}
        )
        error_of(nothing, 422, "InvalidRequestError")
        error_of(await client.get("/api/chats/new/status"), 404, "ConversationNotFoundError")
    assert sqlite_store.operations.head() == 0


def test_start_conversation_exist_ok_leaves_an_existing_one_alone(
    sqlite_store: ConversationStore,
) -> None:
    """``exist_ok=True`` creates a conversation once; later calls change nothing and raise nothing."""
    assert sqlite_store.start_conversation("c", actor="alice", exist_ok=True) is True
    head = sqlite_store.operations.head()
    assert sqlite_store.start_conversation("c", actor="bob", exist_ok=True) is False
    assert sqlite_store.operations.head() == head
    with pytest.raises(ConversationExistsError):
        sqlite_store.start_conversation("c")


async def test_the_same_first_request_posted_again_is_recorded_as_a_regenerate(
    sqlite_store: ConversationStore,
) -> None:
    """Re-posting an identical body (the client lost the answer) records no edit: nothing changed."""
    responder = ScriptedResponder([text_turn("a1", "One."), text_turn("a2", "Again.")])
    app = create_app(sqlite_store, responder=responder)
    body = send_body("c", [user("u1", "hi")])
    async with client_of(app) as client:
        sse_events(await client.post("/api/chat", json=body))
        sse_events(await client.post("/api/chat", json=body))
    (cut,) = sqlite_store.history("c", kinds=["messages-cut"])
    assert cut.details["trigger"] == "regenerate-message", cut.details
    assert [m["id"] for m in sqlite_store.messages("c")] == ["u1", "a2"]
    appended = sqlite_store.history("c", kinds=["message-appended"])
    assert len(appended) == 1  # u1 was not appended again
