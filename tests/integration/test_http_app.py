"""The HTTP adapter (SPEC §9) against real stores: the AI SDK ``useChat`` wire conventions.

Requests go through ``httpx.ASGITransport`` into the app, which writes to a
real SQLite file (and PostgreSQL for the main flow). The main flow is the
demo turn as a ``useChat`` client drives it: send, a streamed answer ending on
a tool call awaiting approval, the denial sent back inside ``messages``, the
continuation streamed, and the final messages equal to the store's.
"""

from __future__ import annotations

import asyncio
import copy
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from starlette.applications import Starlette
from starlette.routing import Route

from chatledger import ConversationStore
from chatledger.adapters.http.app import create_app, openapi_document
from chatledger.adapters.responders import demo
from chatledger.adapters.responders.scripted import (
    Responder,
    ResponderRequest,
    ScriptedResponder,
    ScriptExhaustedError,
    demo_responder,
)
from tests.integration.conftest import Backend
from tests.support.oracle import ORACLE_DIR, Oracle, ensure_installed

pytestmark = pytest.mark.anyio

Chunk = dict[str, Any]


@asynccontextmanager
async def client_of(app: Starlette, token: str | None = None) -> AsyncIterator[httpx.AsyncClient]:
    """An HTTP client talking to ``app`` in-process (with a bearer token if given)."""
    headers = {"authorization": f"Bearer {token}"} if token else {}
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(
        transport=transport, base_url="http://chatledger.test", headers=headers, timeout=30
    ) as client:
        yield client


def sse_events(response: httpx.Response) -> list[Chunk]:
    """The chunks of an SSE answer, checked to follow the AI SDK framing (ends with ``[DONE]``)."""
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["x-vercel-ai-ui-message-stream"] == "v1"
    assert response.headers["cache-control"] == "no-cache"
    data = []
    for event in response.text.split("\n\n"):
        lines = [line[6:] for line in event.split("\n") if line.startswith("data: ")]
        if lines:
            data.append("\n".join(lines))
    assert data and data[-1] == "[DONE]", response.text[-200:]
    return [json.loads(item) for item in data[:-1]]


def send_body(chat_id: str, messages: list[Chunk], **extra: Any) -> dict[str, Any]:
    """The body ``DefaultChatTransport`` posts."""
    return {"id": chat_id, "messages": messages, "trigger": "submit-message", **extra}


def answer_approval(
    message: dict[str, Any], approval_id: str, approved: bool, reason: str | None = None
) -> dict[str, Any]:
    """What the SDK client's ``addToolApprovalResponse`` does to the assistant message."""
    answered = copy.deepcopy(message)
    for part in answered["parts"]:
        if part.get("state") == "approval-requested" and part["approval"]["id"] == approval_id:
            part["state"] = "approval-responded"
            part["approval"] = {**part["approval"], "approved": approved, "reason": reason}
    return answered


def add_output(message: dict[str, Any], tool_call_id: str, output: Any) -> dict[str, Any]:
    """What the SDK client's ``addToolOutput`` does to the assistant message."""
    answered = copy.deepcopy(message)
    for part in answered["parts"]:
        if part.get("toolCallId") == tool_call_id:
            part["state"] = "output-available"
            part["output"] = output
            part.pop("errorText", None)
    return answered


def error_of(response: httpx.Response, status: int, type_name: str) -> str:
    """Check a JSON error answer; returns its message."""
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["type"] == type_name, error
    assert isinstance(error["message"], str) and error["message"]
    return str(error["message"])


def text_turn(message_id: str, text: str, *, tool: Chunk | None = None) -> list[Chunk]:
    """A small answer: one text part, then optionally one tool chunk, in one step."""
    chunks: list[Chunk] = [
        {"type": "start", "messageId": message_id},
        {"type": "start-step"},
        {"type": "text-start", "id": "t1"},
        {"type": "text-delta", "id": "t1", "delta": text},
        {"type": "text-end", "id": "t1"},
    ]
    if tool is not None:
        chunks.append(tool)
    return [*chunks, {"type": "finish-step"}, {"type": "finish"}]


def user(message_id: str, text: str) -> dict[str, Any]:
    return {"id": message_id, "role": "user", "parts": [{"type": "text", "text": text}]}


# -- the main flow ------------------------------------------------------------------


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
        # client would regress its tool part with it (ai-sdk-v6.md §c.3).
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


async def test_an_approval_by_the_endpoint_continues_the_turn_in_the_background(
    sqlite_store: ConversationStore,
) -> None:
    """The approvals endpoint runs the continuation itself; a client follows it with resume."""
    responder = demo_responder(delay=0.05)  # the continuation streams ~0.5 s: time to resume it
    app = create_app(sqlite_store, responder=responder)
    chat = "by-endpoint"
    async with client_of(app) as client:
        sse_events(await client.post("/api/chat", json=send_body(chat, [demo.USER_MESSAGE])))
        deny = {"approvalId": demo.APPROVAL_ID, "approved": False, "reason": demo.DENIAL_REASON}
        answered = await client.post(f"/api/chats/{chat}/approvals", json=deny)
        assert answered.json()["continuationRequested"] is True
        resumed = await client.get(f"/api/chat/{chat}/stream")
        assert resumed.status_code == 200, "the continuation should be streaming"
        # The log holds the provider's replays (the earlier call, its denial) as
        # replays: resume sends only what was applied.
        replayed = {"tool-input-start", "tool-input-delta", "tool-input-available"}
        replayed.add("tool-output-denied")
        assert sse_events(resumed) == [
            c for c in demo.continuation_chunks() if c["type"] not in replayed
        ]
        status = (await client.get(f"/api/chats/{chat}/status")).json()
        assert (status["status"], status["lastOutcome"]) == ("idle", "finished")
    assert [r.trigger for r in responder.requests] == ["submit-message", "continuation"]
    assert sqlite_store.pending_continuations() == []
    demo.record_demo(sqlite_store, "direct")
    assert sqlite_store.messages(chat) == sqlite_store.messages("direct")


async def test_the_sweep_runs_continuations_nobody_took(sqlite_store: ConversationStore) -> None:
    """A request recorded by another program (here: the store directly) is claimed and run."""
    responder = demo_responder()
    app = create_app(
        sqlite_store,
        responder=responder,
        continuation_poll_seconds=0.05,
        continuation_grace_seconds=0.2,
    )
    chat = "swept"
    sqlite_store.start_conversation(chat)
    sqlite_store.append_message(chat, demo.USER_MESSAGE)
    sqlite_store.ingest(chat, demo.first_turn_chunks(), actor="agent:elsewhere")
    sqlite_store.respond_to_approval(
        chat, approval_id=demo.APPROVAL_ID, approved=False, reason="no", actor="alice"
    )
    (pending,) = sqlite_store.pending_continuations()
    async with app.router.lifespan_context(app):
        for _ in range(200):
            if sqlite_store.status(chat).status == "idle":
                break
            await asyncio.sleep(0.02)
    assert sqlite_store.status(chat).last_outcome == "finished"
    assert sqlite_store.pending_continuations() == []
    (request,) = responder.requests
    assert (request.trigger, request.message_id) == ("continuation", pending.message_id)
    opened = sqlite_store.history(chat, kinds=["stream-opened"])[-1]
    assert opened.actor == responder.actor


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
    """The store puts it on the earlier part (SPEC §3.3); the SDK client could not fold it."""
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


# -- resuming ----------------------------------------------------------------------------


async def test_resume_replays_the_open_stream_from_its_start(
    sqlite_store: ConversationStore,
) -> None:
    """``GET /api/chat/{id}/stream`` while the answer streams: the whole answer, from the log."""
    responder = ScriptedResponder([demo.first_turn_chunks()], delay=0.02)
    app = create_app(sqlite_store, responder=responder)
    async with client_of(app) as client:
        sending = asyncio.create_task(
            client.post("/api/chat", json=send_body("live", [demo.USER_MESSAGE]))
        )
        for _ in range(500):
            status = await client.get("/api/chats/live/status")
            if status.status_code == 200 and status.json()["status"] == "streaming":
                break
            await asyncio.sleep(0.01)
        else:
            pytest.fail("the answer never started streaming")
        resumed = await client.get("/api/chat/live/stream")
        sent = sse_events(await sending)
        assert sse_events(resumed) == sent == demo.first_turn_chunks()
        assert "\nid: " in "\n" + resumed.text  # every resumed event carries its cursor

        # A cursor resumes after it, even once the stream has closed.
        cursors = [line[4:] for line in resumed.text.split("\n") if line.startswith("id: ")]
        rest = await client.get("/api/chat/live/stream", params={"after": cursors[4]})
        assert sse_events(rest) == sent[5:]
        assert (await client.get("/api/chat/live/stream")).status_code == 204


async def test_quiet_streams_send_keep_alive_comments(sqlite_store: ConversationStore) -> None:
    """While nothing arrives, both the send and the resume answer send SSE comments, then go on."""
    responder = ScriptedResponder([text_turn("a1", "Slow.")], delay=0.15)
    app = create_app(sqlite_store, responder=responder, keepalive_seconds=0.05)
    async with client_of(app) as client:
        sent = await client.post("/api/chat", json=send_body("k", [user("u1", "hi")]))
        assert ": keep-alive\n\n" in sent.text
        assert sse_events(sent) == text_turn("a1", "Slow.")

        sqlite_store.append_message("k", user("u2", "more"))
        stream = sqlite_store.open_stream("k")

        def write_slowly() -> None:
            for chunk in text_turn("a2", "Later."):
                time.sleep(0.12)
                stream.append(chunk)
            stream.close()

        writer = asyncio.get_running_loop().run_in_executor(None, write_slowly)
        resumed = await client.get("/api/chat/k/stream")
        await writer
        assert ": keep-alive\n\n" in resumed.text
        assert sse_events(resumed) == text_turn("a2", "Later.")


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


# -- JSON endpoints and errors ---------------------------------------------------------------


async def test_json_endpoints_and_error_mapping(sqlite_store: ConversationStore) -> None:
    """Model messages, approvals, tool outputs; chatledger errors as status codes with typed JSON."""
    app = create_app(sqlite_store, responder=demo_responder())
    async with client_of(app) as client:
        error_of(await client.get("/api/chats/nope/messages"), 404, "ConversationNotFoundError")
        error_of(await client.get("/api/nowhere"), 404, "NotFoundError")
        error_of(await client.get("/api/chat"), 405, "MethodNotAllowedError")
        error_of(await client.get("/api/chat/nope/stream"), 404, "ConversationNotFoundError")
        error_of(
            await client.post("/api/chat", content=b"{not json", headers={"content-type": "x"}),
            400,
            "InvalidJSONError",
        )
        error_of(await client.post("/api/chat", json={"id": "x"}), 422, "InvalidRequestError")
        error_of(
            await client.post("/api/chat", json=send_body("x", [demo.USER_MESSAGE], trigger="go")),
            422,
            "InvalidRequestError",
        )
        bad_message = {"id": "u1", "role": "user", "parts": "not a list"}
        error_of(
            await client.post("/api/chat", json=send_body("x", [bad_message])),
            422,
            "InvalidMessageError",
        )

        sse_events(await client.post("/api/chat", json=send_body("j", [demo.USER_MESSAGE])))
        # A paused turn: the providers' formats refuse it unless asked to omit the call.
        paused = await client.get("/api/chats/j/model-messages", params={"format": "anthropic"})
        error_of(paused, 409, "UnansweredToolCallError")
        omitted = await client.get(
            "/api/chats/j/model-messages", params={"format": "anthropic", "unanswered": "omit"}
        )
        assert omitted.json() == {
            "format": "anthropic",
            "messages": sqlite_store.model_messages("j", "anthropic", unanswered="omit"),
        }
        error_of(
            await client.get("/api/chats/j/model-messages", params={"format": "cobol"}),
            422,
            "InvalidRequestError",
        )
        error_of(
            await client.get("/api/chats/j/history", params={"kind": "gossip"}),
            422,
            "InvalidRequestError",
        )
        # Nothing to continue while the call awaits its approval.
        assistant = sqlite_store.messages("j")[-1]
        body = send_body("j", [demo.USER_MESSAGE, assistant], messageId=demo.MESSAGE_ID)
        error_of(await client.post("/api/chat", json=body), 409, "NothingToContinueError")
        # Tool outputs: unknown call, not ready, bad body.
        error_of(
            await client.post(
                "/api/chats/j/tool-outputs", json={"toolCallId": "ghost", "output": 1}
            ),
            404,
            "UnknownToolCallError",
        )
        error_of(
            await client.post("/api/chats/j/tool-outputs", json={"toolCallId": "x"}),
            422,
            "InvalidRequestError",
        )
        approve = {"approvalId": demo.APPROVAL_ID, "approved": True, "autoContinue": False}
        first = await client.post("/api/chats/j/approvals", json=approve)
        assert first.json()["changed"] is True and first.json()["state"] == "approval-responded"
        again = await client.post("/api/chats/j/approvals", json=approve)
        assert again.json()["changed"] is False
        error_of(
            await client.post("/api/chats/j/approvals", json={**approve, "approved": False}),
            409,
            "ApprovalConflictError",
        )
        # A contradicting answer inside messages is refused the same way.
        denied = answer_approval(assistant, demo.APPROVAL_ID, False, "no")
        body = send_body("j", [demo.USER_MESSAGE, denied], messageId=demo.MESSAGE_ID)
        error_of(await client.post("/api/chat", json=body), 409, "ApprovalConflictError")
        # The approved call ran on the client: its output, then the continuation.
        output = await client.post(
            "/api/chats/j/tool-outputs",
            json={
                "toolCallId": demo.TOOL_CALL_ID,
                "output": {"deleted": 12},
                "autoContinue": False,
            },
        )
        assert output.json() == {
            "toolCallId": demo.TOOL_CALL_ID,
            "changed": True,
            "state": "output-available",
            "continuationRequested": False,
        }
        assert (await client.get("/api/chats/j/status")).json()["status"] == "ready-to-continue"
        assert (await client.get("/api/approvals")).json() == {"approvals": []}
        ai_sdk = await client.get("/api/chats/j/model-messages")
        assert ai_sdk.json()["messages"] == sqlite_store.model_messages("j")
        error_of(
            await client.get("/api/chats/j/messages", params={"atVersion": "x"}),
            422,
            "InvalidRequestError",
        )


async def test_chat_ids_with_slashes_and_body_limit(sqlite_store: ConversationStore) -> None:
    """Any chat id works in the paths (percent-encoded, as the SDK does); huge bodies get 413."""
    app = create_app(
        sqlite_store, responder=ScriptedResponder([text_turn("a1", "Hi.")]), max_body_bytes=5000
    )
    chat = "team/a b?c"
    async with client_of(app) as client:
        sse_events(await client.post("/api/chat", json=send_body(chat, [user("u1", "hi")])))
        path = quote(chat, safe="")
        shown = (await client.get(f"/api/chats/{path}/messages")).json()
        assert shown == {"id": chat, "messages": sqlite_store.messages(chat)}
        assert (await client.get(f"/api/chat/{path}/stream")).status_code == 204
        huge = send_body(chat, [user("u2", "x" * 6000)])
        error_of(await client.post("/api/chat", json=huge), 413, "RequestTooLargeError")


async def test_one_open_stream_per_conversation(sqlite_store: ConversationStore) -> None:
    """A send while an answer is streaming is refused with 409."""
    sqlite_store.start_conversation("busy")
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


# -- tenancy and the description ----------------------------------------------------------------


async def test_tenants_are_isolated(sqlite_store: ConversationStore) -> None:
    """Bearer tokens map to tenants; one tenant never reads or writes another's conversation."""
    tokens = {"token-acme": "acme", "token-globex": "globex"}
    responder = ScriptedResponder([demo.first_turn_chunks(), text_turn("g1", "Hello globex.")])
    app = create_app(sqlite_store, responder=responder, tokens=tokens)
    chat = "shared-name"
    async with client_of(app) as anonymous:
        missing = await anonymous.get(f"/api/chats/{chat}/messages")
        error_of(missing, 401, "UnauthorizedError")
        assert missing.headers["www-authenticate"].startswith("Bearer")
        error_of(
            await anonymous.post("/api/chat", json=send_body(chat, [])), 401, "UnauthorizedError"
        )
        assert (await anonymous.get("/openapi.json")).status_code == 200
    async with client_of(app, "wrong") as stranger:
        error_of(await stranger.get("/api/approvals"), 401, "UnauthorizedError")

    async with client_of(app, "token-acme") as acme, client_of(app, "token-globex") as globex:
        sse_events(await acme.post("/api/chat", json=send_body(chat, [demo.USER_MESSAGE])))
        for path in ("messages", "status", "history", "model-messages"):
            error_of(
                await globex.get(f"/api/chats/{chat}/{path}"), 404, "ConversationNotFoundError"
            )
        error_of(await globex.get(f"/api/chat/{chat}/stream"), 404, "ConversationNotFoundError")
        deny = {"approvalId": demo.APPROVAL_ID, "approved": False}
        error_of(
            await globex.post(f"/api/chats/{chat}/approvals", json=deny),
            404,
            "ConversationNotFoundError",
        )
        error_of(
            await globex.post(
                f"/api/chats/{chat}/tool-outputs",
                json={"toolCallId": demo.TOOL_CALL_ID, "output": 1},
            ),
            404,
            "ConversationNotFoundError",
        )
        assert (await globex.get("/api/approvals")).json() == {"approvals": []}
        assert len((await acme.get("/api/approvals")).json()["approvals"]) == 1

        # The same chat id for globex is a conversation of its own.
        sse_events(await globex.post("/api/chat", json=send_body(chat, [user("g-u1", "Hi")])))
        mine = (await globex.get(f"/api/chats/{chat}/messages")).json()["messages"]
        assert [m["id"] for m in mine] == ["g-u1", "g1"]
        theirs = (await acme.get(f"/api/chats/{chat}/messages")).json()["messages"]
        assert [m["id"] for m in theirs] == [demo.USER_MESSAGE["id"], demo.MESSAGE_ID]

    assert sqlite_store.messages(chat, tenant="acme") == theirs
    assert sqlite_store.status(chat, tenant="acme").status == "awaiting-approval"
    assert {r.tenant for r in responder.requests} == {"acme", "globex"}
    actors = {
        e.actor for e in sqlite_store.history(chat, tenant="acme", kinds=["message-appended"])
    }
    assert actors == {"http-client:acme"}


async def test_openapi_lists_every_route(sqlite_store: ConversationStore) -> None:
    """``GET /openapi.json`` describes each route and method of the app."""
    app = create_app(sqlite_store, responder=ScriptedResponder([]))
    async with client_of(app) as client:
        document = (await client.get("/openapi.json")).json()
    assert document == json.loads(json.dumps(openapi_document()))
    assert document["openapi"].startswith("3.")
    routes = [route for route in app.routes if isinstance(route, Route)]
    described = {
        (path, method.upper()) for path, item in document["paths"].items() for method in item
    }
    served = {
        (route.path.replace("{chat_id:path}", "{id}"), method)
        for route in routes
        for method in route.methods or ()
        if method != "HEAD"
    }
    assert served == described


# -- a real server: uvicorn in a subprocess, the real AI SDK client -----------------------------


@contextmanager
def running_server(url: str, *options: str) -> Iterator[str]:
    """``chatledger serve`` on ``url`` in a subprocess, on a free port; yields its base URL.

    The demo responder answers (``--delay 0.02`` unless ``options`` say
    otherwise); the token ``token-node`` is tenant ``node-tenant``.
    """
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [sys.executable, "-m", "chatledger", "serve", "--url", url, "--port", str(port)]
    command += ["--token", "token-node=node-tenant", "--log-level", "warning"]
    command += options or ("--delay", "0.02")
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"{base}/openapi.json", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                output = process.communicate(timeout=5)[0] if process.poll() is not None else ""
                pytest.fail(f"the server did not start:\n{output}")
            time.sleep(0.05)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture
def live_server(tmp_path: Path) -> Iterator[tuple[str, str]]:
    """``chatledger serve`` in a subprocess on a SQLite file: (base URL, store URL)."""
    url = f"sqlite:///{tmp_path / 'live.db'}"
    with running_server(url) as base:
        yield base, url


def test_a_disconnected_client_resumes_from_the_log(live_server: tuple[str, str]) -> None:
    """The answer goes on after the client hangs up; resuming gives it whole from its start."""
    base, url = live_server
    headers = {"authorization": "Bearer token-node"}
    with httpx.Client(base_url=base, headers=headers, timeout=30) as client:
        body = send_body("hangup", [demo.USER_MESSAGE])
        with client.stream("POST", "/api/chat", json=body) as response:
            assert response.status_code == 200
            first = next(response.iter_lines())
            assert json.loads(first.removeprefix("data: "))["type"] == "start"
        resumed = client.get("/api/chat/hangup/stream")
        if resumed.status_code == 200:  # still streaming when asked: the whole answer, live
            assert sse_events(resumed) == demo.first_turn_chunks()
        else:  # a slow machine: it had already finished
            assert resumed.status_code == 204
        for _ in range(300):
            status = client.get("/api/chats/hangup/status").json()
            if status["status"] != "streaming":
                break
            time.sleep(0.02)
        assert (status["status"], status["lastOutcome"]) == ("awaiting-approval", "finished")
    with ConversationStore.open(url, tenant="node-tenant") as store:
        assert store.messages("hangup")[-1]["parts"][-1]["state"] == "approval-requested"


NODE_CHAT = """
import { AbstractChat, DefaultChatTransport,
         lastAssistantMessageIsCompleteWithApprovalResponses } from 'ai';

class Chat extends AbstractChat {
  constructor(init) {
    let messages = init.messages ?? [];
    const snapshot = x => structuredClone(x);
    const state = {
      status: 'ready', error: undefined,
      get messages() { return messages; },
      set messages(m) { messages = [...m]; },
      pushMessage: m => (messages = [...messages, m]),
      popMessage: () => (messages = messages.slice(0, -1)),
      replaceMessage: (i, m) =>
        (messages = [...messages.slice(0, i), snapshot(m), ...messages.slice(i + 1)]),
      snapshot,
    };
    super({ ...init, state });
  }
}

const sleep = ms => new Promise(r => setTimeout(r, ms));
const settle = async chat => {
  await sleep(20);
  for (let i = 0; i < 1000 && (chat.status === 'submitted' || chat.status === 'streaming'); i++) {
    await sleep(10);
  }
};
"""
"""A chat object of the real SDK (``AbstractChat`` with plain state, as ``useChat`` keeps it)."""

NODE_CLIENT = (
    NODE_CHAT
    + """
let counter = 0;
const chat = new Chat({
  id: 'node-chat',
  generateId: () => `client-${++counter}`,
  transport: new DefaultChatTransport({
    api: `${process.env.CHATLEDGER_BASE}/api/chat`,
    headers: { authorization: 'Bearer token-node' },
  }),
  sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
});
const report = {};
const sending = chat.sendMessage({ text: process.env.CHATLEDGER_TEXT });
// Another client (a reloaded page) resumes the answer while it streams.
for (let i = 0; i < 1000 && chat.status !== 'streaming'; i++) await sleep(5);
const other = new Chat({
  id: 'node-chat',
  messages: [structuredClone(chat.messages[0])],
  transport: new DefaultChatTransport({
    api: `${process.env.CHATLEDGER_BASE}/api/chat`,
    headers: { authorization: 'Bearer token-node' },
  }),
});
report.streamingWhenResumed = chat.status;
await other.resumeStream();
await sending;
await settle(chat);
await settle(other);
report.paused = structuredClone(chat.messages);
report.resumed = { status: other.status, messages: other.messages };
const part = chat.lastMessage.parts.find(p => p.state === 'approval-requested');
await chat.addToolApprovalResponse({
  id: part.approval.id, approved: false, reason: process.env.CHATLEDGER_REASON,
});
// The SDK sends the continuation by itself, without awaiting: wait for its answer.
const answered = () =>
  chat.status === 'ready' && chat.lastMessage.parts.some(p => p.state === 'output-denied');
for (let i = 0; i < 1000 && !answered(); i++) await sleep(10);
await settle(chat);
await chat.resumeStream();
await settle(chat);
report.status = chat.status;
report.error = chat.error ? String(chat.error.message ?? chat.error) : null;
report.messages = chat.messages;
console.log(JSON.stringify(report));
"""
)

NODE_CUT = (
    NODE_CHAT
    + """
const transport = () => new DefaultChatTransport({
  api: `${process.env.CHATLEDGER_BASE}/api/chat`,
  headers: { authorization: 'Bearer token-node' },
});
const chat = new Chat({ id: 'cut-chat', transport: transport() });
const report = {};
const sending = chat.sendMessage({ text: process.env.CHATLEDGER_TEXT });
const hasText = () => chat.lastMessage?.role === 'assistant' &&
  chat.lastMessage.parts.some(p => p.type === 'text' && p.text);
for (let i = 0; i < 2000 && !hasText(); i++) await sleep(5);
report.partsWhenCut = structuredClone(chat.lastMessage.parts);
await chat.stop();              // aborts the fetch: the connection is cut mid-stream
await sending;
report.statusAfterCut = chat.status;
await chat.resumeStream();       // GET /api/chat/cut-chat/stream: the answer from its start
await settle(chat);
report.status = chat.status;
report.error = chat.error ? String(chat.error.message ?? chat.error) : null;
report.messages = chat.messages;
console.log(JSON.stringify(report));
"""
)


@pytest.mark.oracle
def test_the_real_ai_sdk_client_against_the_server(live_server: tuple[str, str]) -> None:
    """``AbstractChat`` + ``DefaultChatTransport`` (ai@6.0.326) against ``serve()``: the whole demo turn.

    The client sends, gets the call awaiting approval, denies it with a reason
    (``addToolApprovalResponse``), sends the continuation by itself
    (``lastAssistantMessageIsCompleteWithApprovalResponses``), and resumes (204:
    nothing to resume). Its messages end equal to the store's. A second client
    resuming while the first answer streams gets the same message.
    """
    ensure_installed()
    base, url = live_server
    text = demo.USER_MESSAGE["parts"][0]["text"]
    result = subprocess.run(
        ["node", "--input-type=module", "-e", NODE_CLIENT],
        cwd=ORACLE_DIR,
        env={
            **os.environ,
            "CHATLEDGER_BASE": base,
            "CHATLEDGER_TEXT": text,
            "CHATLEDGER_REASON": demo.DENIAL_REASON,
        },
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert (report["status"], report["error"]) == ("ready", None)
    assert report["streamingWhenResumed"] == "streaming", report
    assert report["resumed"] == {"status": "ready", "messages": report["paused"]}
    with ConversationStore.open(url, tenant="node-tenant") as store:
        stored = store.messages("node-chat")
        paused_at = next(
            e.position for e in store.history("node-chat", kinds=["approval-responded"])
        )
        assert report["paused"] == store.messages("node-chat", at_version=paused_at - 1)
        assert report["messages"] == stored
        assert [m["id"] for m in stored] == ["client-1", demo.MESSAGE_ID]
        denied = next(p for p in stored[-1]["parts"] if p.get("toolCallId") == demo.TOOL_CALL_ID)
        assert denied["state"] == "output-denied"
        assert denied["approval"]["reason"] == demo.DENIAL_REASON
        assert store.status("node-chat").status == "idle"


def send_until_streaming(
    pool: ThreadPoolExecutor, client: httpx.Client, sender: str, watcher: str, chat: str
) -> Future[httpx.Response]:
    """POST the demo question to ``sender``; return once ``watcher`` says the answer streams."""
    sending = pool.submit(
        lambda: client.post(f"{sender}/api/chat", json=send_body(chat, [demo.USER_MESSAGE]))
    )
    for _ in range(500):
        status = client.get(f"{watcher}/api/chats/{chat}/status")
        if status.status_code == 200 and status.json()["status"] == "streaming":
            break
        time.sleep(0.01)
    return sending


@pytest.mark.postgres
def test_two_servers_on_one_postgres_database(postgres_backend: Backend) -> None:
    """Two ``chatledger serve`` processes share one database.

    A turn streamed through one is followed (resumed from its start) through
    the other while it streams; an approval answered through the other's
    endpoint continues it there, and the first server's resume follows that
    continuation; a denial sent inside ``messages`` (the ``useChat`` way)
    through the other server continues a turn the first one streamed; a stop
    through the other server ends an answer the first one is writing.
    """
    url = postgres_backend.url
    deny = {"approvalId": demo.APPROVAL_ID, "approved": False, "reason": demo.DENIAL_REASON}
    replayed = {"tool-input-start", "tool-input-delta", "tool-input-available"}
    headers = {"authorization": "Bearer token-node"}
    slow = ("--delay", "0.05")
    with (
        running_server(url, *slow) as one,
        running_server(url, *slow) as two,
        httpx.Client(headers=headers, timeout=60) as client,
        ThreadPoolExecutor(max_workers=1) as pool,
    ):
        # 1. Streamed through one, followed through two while it streams.
        sending = send_until_streaming(pool, client, one, two, "shared")
        followed = client.get(f"{two}/api/chat/shared/stream")
        assert followed.status_code == 200, "the turn should still be streaming"
        assert sse_events(followed) == demo.first_turn_chunks()
        assert sse_events(sending.result()) == demo.first_turn_chunks()

        # 2. Denied through two's endpoint: two continues it; one's resume follows.
        answered = client.post(f"{two}/api/chats/shared/approvals", json=deny)
        assert answered.json()["continuationRequested"] is True
        resumed = client.get(f"{one}/api/chat/shared/stream")
        assert resumed.status_code == 200, "the continuation should be streaming"
        assert sse_events(resumed) == [
            c
            for c in demo.continuation_chunks()
            if c["type"] not in {*replayed, "tool-output-denied"}
        ]

        # 3. The useChat way: streamed through one, denial inside messages through two.
        sse_events(client.post(f"{one}/api/chat", json=send_body("other", [demo.USER_MESSAGE])))
        paused = client.get(f"{two}/api/chats/other/messages").json()["messages"]
        denied = answer_approval(paused[-1], demo.APPROVAL_ID, False, demo.DENIAL_REASON)
        body = send_body("other", [demo.USER_MESSAGE, denied], messageId=demo.MESSAGE_ID)
        continued = sse_events(client.post(f"{two}/api/chat", json=body))
        assert continued == [c for c in demo.continuation_chunks() if c["type"] not in replayed]
        for chat in ("shared", "other"):
            status = client.get(f"{one}/api/chats/{chat}/status").json()
            assert (status["status"], status["lastOutcome"]) == ("idle", "finished")

        # 4. Streamed through one, stopped through two (which closes the stream in the log).
        sending = send_until_streaming(pool, client, one, two, "halt")
        assert client.post(f"{two}/api/chats/halt/stop", json={"reason": "enough"}).json()[
            "stopped"
        ]
        halted = sse_events(sending.result())
        assert halted[-1] == {"type": "abort", "reason": "the stream was closed"}
        status = client.get(f"{one}/api/chats/halt/status").json()
        assert (status["status"], status["lastOutcome"]) == ("idle", "aborted")
        assert status["lastReason"] == "stopped by http-client:node-tenant: enough"

    with ConversationStore.open(url, tenant="node-tenant") as store:
        demo.record_demo(store, "direct")
        assert store.messages("shared") == store.messages("other") == store.messages("direct")
        claims = store.history("shared", kinds=["continuation-claimed"])
        assert len(claims) == 1 and claims[0].actor.startswith("http:")
        assert store.pending_continuations() == []


async def test_cors_lets_only_the_named_origins_in(sqlite_store: ConversationStore) -> None:
    """A browser front end on another origin may call the app when its origin is named."""
    app = create_app(
        sqlite_store,
        responder=ScriptedResponder([text_turn("a1", "Hi.")]),
        cors_origins=["http://localhost:3000"],
    )
    preflight = {
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type,authorization",
    }
    async with client_of(app) as client:
        allowed = await client.options(
            "/api/chat", headers={"origin": "http://localhost:3000", **preflight}
        )
        assert allowed.status_code == 200
        assert allowed.headers["access-control-allow-origin"] == "http://localhost:3000"
        refused = await client.options(
            "/api/chat", headers={"origin": "http://evil.test", **preflight}
        )
        assert refused.status_code == 400
        answer = await client.post(
            "/api/chat",
            json=send_body("c", [user("u1", "hi")]),
            headers={"origin": "http://localhost:3000"},
        )
        assert answer.headers["access-control-allow-origin"] == "http://localhost:3000"
        assert "x-vercel-ai-ui-message-stream" in answer.headers["access-control-expose-headers"]
        assert [c["type"] for c in sse_events(answer)][-1] == "finish"


@pytest.mark.oracle
def test_the_real_ai_sdk_client_resumes_after_its_connection_is_cut(tmp_path: Path) -> None:
    """The SDK client stops reading mid-answer (``chat.stop()`` aborts the fetch), then resumes.

    The server goes on storing the answer; ``resumeStream()`` replays it from
    its start and the client's message ends equal to the stored one.
    """
    ensure_installed()
    url = f"sqlite:///{tmp_path / 'cut.db'}"
    with running_server(url, "--delay", "0.1") as base:
        result = subprocess.run(
            ["node", "--input-type=module", "-e", NODE_CUT],
            cwd=ORACLE_DIR,
            env={
                **os.environ,
                "CHATLEDGER_BASE": base,
                "CHATLEDGER_TEXT": demo.USER_MESSAGE["parts"][0]["text"],
            },
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert (report["status"], report["error"]) == ("ready", None), report
    assert report["statusAfterCut"] == "ready"
    assert not any(p["type"].startswith("tool-") for p in report["partsWhenCut"]), "cut too late"
    with ConversationStore.open(url, tenant="node-tenant") as store:
        stored = store.messages("cut-chat")
        assert report["messages"] == stored
        assert stored[-1]["parts"][-1]["state"] == "approval-requested"
        opened = store.history("cut-chat", kinds=["stream-closed"])
        assert [e.summary.rsplit(": ", 1)[-1] for e in opened] == ["finished"]


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
        again = await client.post(f"/api/chats/{chat}/stop", json={})
        assert again.json() == {"stopped": False, "streamId": None}
    status = sqlite_store.status(chat)
    assert (status.status, status.last_outcome) == ("idle", "aborted")
    assert status.last_reason == "stopped by http-client:default: too slow"
    (closed,) = sqlite_store.history(chat, kinds=["stream-closed"])
    assert closed.actor == demo_responder().actor
