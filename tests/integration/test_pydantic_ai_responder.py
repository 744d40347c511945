"""The Pydantic AI responder in the HTTP app: a real ``pydantic_ai.Agent`` behind ``useChat``.

The agent runs on Pydantic AI's offline ``FunctionModel``, scripted like an
ops assistant: asked to delete something, it calls ``delete_file`` (a tool
declared with ``requires_approval=True``, so the run pauses); given the
tool's result (or its denial) it answers with text naming it; asked anything
else, it answers with plain text. Requests go through ``httpx.ASGITransport``
into the app, on a real SQLite file (and PostgreSQL for the main flow), and
the streams are folded by the real AI SDK (the oracle) for comparison with
the store. No chunk may be refused by the store (checked after every test).
"""

from __future__ import annotations

import copy
import json
import logging
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from pydantic_ai import Agent, Tool
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

from chatledger import ConversationStore
from chatledger.adapters.http.app import create_app
from chatledger.adapters.responders.pydantic_ai import PydanticAIResponder
from chatledger.adapters.responders.scripted import ScriptedResponder
from tests.integration.conftest import Backend
from tests.integration.http_support import answer_approval, client_of, send_body, sse_events
from tests.support.oracle import Oracle

pytestmark = pytest.mark.anyio

Chunk = dict[str, Any]

CHAT = "chat-pydantic-ai"
CALL_ID = "call_delete_1"
PATH = "/var/log/ci/archive"
REASON = "Those logs are still needed for the Q3 audit; archive them to S3 instead."
QUESTION: dict[str, Any] = {
    "id": "msg-user-1",
    "role": "user",
    "parts": [{"type": "text", "text": f"The disk is full. Please delete {PATH}."}],
}

PAUSED_TYPES = [
    "start",
    "start-step",
    "tool-input-start",
    "tool-input-delta",
    "tool-input-delta",
    "tool-input-available",
    "message-metadata",
    "tool-approval-request",
    "finish-step",
    "finish",
]
"""The first turn as streamed: the call, then its approval request; the run pauses."""


@pytest.fixture(autouse=True)
def no_refused_chunks(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    """Every chunk the responder streams is one the store accepts (the app logs a refusal)."""
    caplog.set_level(logging.WARNING, logger="chatledger.turns")
    yield
    refused = [r.getMessage() for r in caplog.records if "refused" in r.getMessage()]
    assert refused == []


@dataclass
class OpsAgent:
    """The agent under test, what its model was shown at each request, and what its tool did."""

    agent: Agent[None, str]
    seen: list[list[ModelMessage]] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)

    def last_request(self) -> ModelRequest:
        """The request the model answered last."""
        request = self.seen[-1][-1]
        assert isinstance(request, ModelRequest)
        return request


def ops_agent(*, failure: str | None = None) -> OpsAgent:
    """A real ``Agent`` on a scripted ``FunctionModel`` (raising ``failure`` if given)."""

    async def model(
        messages: list[ModelMessage], info: AgentInfo
    ) -> AsyncIterator[str | DeltaToolCalls]:
        ops.seen.append(copy.deepcopy(messages))
        if failure is not None:
            raise RuntimeError(failure)
        request = messages[-1]
        assert isinstance(request, ModelRequest)
        returns = [p for p in request.parts if isinstance(p, ToolReturnPart)]
        if returns:
            result = returns[0]
            if result.outcome == "denied":
                yield f"I left {PATH} alone. "
                yield f"You said: {result.model_response_str()}"
            else:
                yield "Done: "
                yield result.model_response_str()
            return
        prompt = " ".join(
            p.content
            for p in request.parts
            if isinstance(p, UserPromptPart) and isinstance(p.content, str)
        )
        if "delete" in prompt:
            arguments = json.dumps({"path": PATH})
            yield {
                0: DeltaToolCall(name="delete_file", json_args=arguments[:9], tool_call_id=CALL_ID)
            }
            yield {0: DeltaToolCall(json_args=arguments[9:])}
        else:
            yield "Hello"
            yield ", how can I help?"

    def delete_file(path: str) -> str:
        """Delete a file or a folder."""
        ops.deleted.append(path)
        return f"deleted {path}"

    agent = Agent(
        FunctionModel(stream_function=model),
        tools=[Tool(delete_file, requires_approval=True)],
    )
    ops = OpsAgent(agent)
    return ops


def marks(store: ConversationStore, chat: str = CHAT) -> list[str]:
    """Every mark of the conversation's audit timeline (``replay``, ``refused``, ...)."""
    return [mark for entry in store.history(chat) for mark in entry.marks]


def types(chunks: list[Chunk]) -> list[str]:
    return [chunk["type"] for chunk in chunks]


def tool_part(message: dict[str, Any]) -> dict[str, Any]:
    """The ``delete_file`` part of an assistant message."""
    return next(p for p in message["parts"] if p.get("toolCallId") == CALL_ID)


def texts(message: dict[str, Any]) -> list[str]:
    return [p["text"] for p in message["parts"] if p["type"] == "text"]


async def first_turn(client: httpx.AsyncClient, chat: str = CHAT) -> list[Chunk]:
    """Send the question; the streamed chunks."""
    return sse_events(await client.post("/api/chat", json=send_body(chat, [QUESTION])))


async def continue_with(
    client: httpx.AsyncClient, assistant: dict[str, Any], approved: bool, chat: str = CHAT
) -> tuple[dict[str, Any], list[Chunk]]:
    """Answer the approval inside ``messages``, as the AI SDK client does, and continue.

    Returns the answered assistant message the client sent and the streamed chunks.
    """
    answered = answer_approval(assistant, CALL_ID, approved, None if approved else REASON)
    for part in answered["parts"]:
        if part.get("approval", {}).get("reason", "") is None:
            del part["approval"]["reason"]  # the SDK client sends no ``reason`` when there is none
    body = send_body(chat, [QUESTION, answered], messageId=assistant["id"])
    return answered, sse_events(await client.post("/api/chat", json=body))


# -- the approval flow ------------------------------------------------------------------------


async def test_a_call_needing_approval_pauses_the_turn(durable_backend: Backend) -> None:
    """The run ends with the call ``approval-requested``; the store waits for a human."""
    store = durable_backend.open()
    ops = ops_agent()
    responder = PydanticAIResponder(ops.agent)
    async with client_of(create_app(store, responder=responder)) as client:
        chunks = await first_turn(client)

    messages = store.messages(CHAT)
    assistant = messages[-1]
    assert types(chunks) == PAUSED_TYPES
    assert chunks[0] == {"type": "start", "messageId": assistant["id"]}
    assert "".join(c["inputTextDelta"] for c in chunks if c["type"] == "tool-input-delta") == (
        json.dumps({"path": PATH})
    )
    assert chunks[-3] == {
        "type": "tool-approval-request",
        "approvalId": CALL_ID,
        "toolCallId": CALL_ID,
    }
    assert [m["id"] for m in messages] == [QUESTION["id"], assistant["id"]]
    assert tool_part(assistant) == {
        "type": "tool-delete_file",
        "toolCallId": CALL_ID,
        "state": "approval-requested",
        "input": {"path": PATH},
        "approval": {"id": CALL_ID},
    }
    status = store.status(CHAT)
    assert status.status == "awaiting-approval"
    assert "refused" not in marks(store)
    assert [(c.tool_call_id, c.approval_id) for c in status.waiting_for] == [(CALL_ID, CALL_ID)]
    pending = store.pending_approvals()
    assert [(a.chat_id, a.message_id, a.tool_call_id, a.tool_name, a.input) for a in pending] == [
        (CHAT, assistant["id"], CALL_ID, "delete_file", {"path": PATH})
    ]
    assert ops.deleted == []
    assert len(ops.seen) == 1
    assert [r.trigger for r in responder.requests] == ["submit-message"]
    assert store.history(CHAT, kinds=["stream-opened"])[-1].actor == "agent:pydantic-ai"


async def test_a_denial_reaches_the_model_with_its_reason(durable_backend: Backend) -> None:
    """Denied inside ``messages``: the tool does not run; the model reads the reason and answers."""
    store = durable_backend.open()
    ops = ops_agent()
    responder = PydanticAIResponder(ops.agent)
    async with client_of(create_app(store, responder=responder)) as client:
        await first_turn(client)
        assistant = (await client.get(f"/api/chats/{CHAT}/messages")).json()["messages"][-1]
        _, chunks = await continue_with(client, assistant, approved=False)
        final = (await client.get(f"/api/chats/{CHAT}/messages")).json()

    # The model was asked once more, with the denial as the call's result.
    assert len(ops.seen) == 2
    denial = [p for p in ops.last_request().parts if isinstance(p, ToolReturnPart)]
    assert [(p.tool_call_id, p.tool_name, p.outcome, p.content) for p in denial] == [
        (CALL_ID, "delete_file", "denied", REASON)
    ]
    assert ops.deleted == []
    answer = f"I left {PATH} alone. You said: {REASON}"
    # ``tool-output-denied`` brings the client's ``approval-responded`` part to the stored state.
    assert types(chunks) == [
        "start",
        "tool-output-denied",
        "start-step",
        "text-start",
        "text-delta",
        "text-delta",
        "text-end",
        "message-metadata",
        "finish-step",
        "finish",
    ]
    assert chunks[:2] == [
        {"type": "start", "messageId": assistant["id"]},
        {"type": "tool-output-denied", "toolCallId": CALL_ID},
    ]
    assert "".join(c["delta"] for c in chunks if c["type"] == "text-delta") == answer

    messages = store.messages(CHAT)
    assert final == {"id": CHAT, "messages": messages}
    assert [m["id"] for m in messages] == [QUESTION["id"], assistant["id"]]
    continued = messages[-1]
    assert tool_part(continued) == {
        "type": "tool-delete_file",
        "toolCallId": CALL_ID,
        "state": "output-denied",
        "input": {"path": PATH},
        "approval": {"id": CALL_ID, "approved": False, "reason": REASON},
    }
    assert texts(continued) == [answer]
    assert [p["type"] for p in continued["parts"]] == [
        "step-start",
        "tool-delete_file",
        "step-start",
        "text",
    ]
    status = store.status(CHAT)
    assert (status.status, status.last_outcome) == ("idle", "finished")
    assert store.pending_approvals() == []
    assert "refused" not in marks(store)
    assert [r.trigger for r in responder.requests] == ["submit-message", "continuation"]
    assert responder.requests[1].message_id == assistant["id"]
    assert responder.requests[1].messages[-1]["id"] == assistant["id"]


async def test_an_approved_call_runs_the_tool(sqlite_store: ConversationStore) -> None:
    """Approved inside ``messages``: the tool runs once, its output is stored, the model answers."""
    ops = ops_agent()
    app = create_app(sqlite_store, responder=PydanticAIResponder(ops.agent))
    async with client_of(app) as client:
        await first_turn(client)
        assistant = (await client.get(f"/api/chats/{CHAT}/messages")).json()["messages"][-1]
        _, chunks = await continue_with(client, assistant, approved=True)

    assert ops.deleted == [PATH]
    result = [p for p in ops.last_request().parts if isinstance(p, ToolReturnPart)]
    assert [(p.tool_call_id, p.outcome, p.content) for p in result] == [
        (CALL_ID, "success", f"deleted {PATH}")
    ]
    # The adapter's replayed ``tool-input-available`` is recorded, not streamed.
    assert types(chunks)[:3] == ["start", "tool-output-available", "start-step"]
    assert chunks[1] == {
        "type": "tool-output-available",
        "toolCallId": CALL_ID,
        "output": f"deleted {PATH}",
    }
    continued = sqlite_store.messages(CHAT)[-1]
    assert continued["id"] == assistant["id"]
    assert tool_part(continued) == {
        "type": "tool-delete_file",
        "toolCallId": CALL_ID,
        "state": "output-available",
        "input": {"path": PATH},
        "approval": {"id": CALL_ID, "approved": True},
        "output": f"deleted {PATH}",
    }
    assert texts(continued) == [f"Done: deleted {PATH}"]
    assert sqlite_store.status(CHAT).status == "idle"
    assert "replay" in marks(sqlite_store)
    assert "refused" not in marks(sqlite_store)


async def test_an_approval_by_the_endpoint_continues_with_the_tool_run(
    sqlite_store: ConversationStore,
) -> None:
    """Approved by ``POST /api/chats/{id}/approvals``, then continued: the same result."""
    ops = ops_agent()
    app = create_app(sqlite_store, responder=PydanticAIResponder(ops.agent))
    async with client_of(app) as client:
        await first_turn(client)
        answered = await client.post(
            f"/api/chats/{CHAT}/approvals",
            json={"approvalId": CALL_ID, "approved": True, "autoContinue": False},
        )
        assert answered.status_code == 200, answered.text
        assert ops.deleted == []
        assistant = (await client.get(f"/api/chats/{CHAT}/messages")).json()["messages"][-1]
        assert tool_part(assistant)["state"] == "approval-responded"
        body = send_body(CHAT, [QUESTION, assistant], messageId=assistant["id"])
        sse_events(await client.post("/api/chat", json=body))

    assert ops.deleted == [PATH]
    continued = sqlite_store.messages(CHAT)[-1]
    assert tool_part(continued)["state"] == "output-available"
    assert texts(continued) == [f"Done: deleted {PATH}"]


@pytest.mark.oracle
@pytest.mark.parametrize("approved", [False, True], ids=["denied", "approved"])
async def test_the_real_sdk_folds_the_streams_into_the_stored_messages(
    sqlite_store: ConversationStore, oracle: Oracle, approved: bool
) -> None:
    """``readUIMessageStream`` over both streams gives the messages the store holds."""
    app = create_app(sqlite_store, responder=PydanticAIResponder(ops_agent().agent))
    async with client_of(app) as client:
        first = await first_turn(client)
        folded = oracle.read(first)
        assert folded["ok"], folded
        assert folded["message"] == sqlite_store.messages(CHAT)[-1]
        assert tool_part(folded["message"])["state"] == "approval-requested"

        answered, second = await continue_with(client, folded["message"], approved=approved)
        continued = oracle.read(second, message=answered)
        assert continued["ok"], continued
        stored = sqlite_store.messages(CHAT)[-1]
        assert continued["message"] == stored
        assert tool_part(stored)["state"] == ("output-available" if approved else "output-denied")
        assert texts(stored) == [
            f"Done: deleted {PATH}" if approved else f"I left {PATH} alone. You said: {REASON}"
        ]


# -- other turns ----------------------------------------------------------------------------------


@pytest.mark.oracle
async def test_a_plain_text_turn(sqlite_store: ConversationStore, oracle: Oracle) -> None:
    """A question without tools: one step of text, stored as the SDK folds it."""
    ops = ops_agent()
    app = create_app(sqlite_store, responder=PydanticAIResponder(ops.agent, actor="agent:helper"))
    hello = {"id": "u-hello", "role": "user", "parts": [{"type": "text", "text": "Hi there"}]}
    async with client_of(app) as client:
        chunks = sse_events(await client.post("/api/chat", json=send_body("hi", [hello])))

    assert types(chunks) == [
        "start",
        "start-step",
        "text-start",
        "text-delta",
        "text-delta",
        "text-end",
        "message-metadata",
        "finish-step",
        "finish",
    ]
    messages = sqlite_store.messages("hi")
    assert messages[0] == hello
    answer = messages[-1]
    assert answer["role"] == "assistant"
    assert [p["type"] for p in answer["parts"]] == ["step-start", "text"]
    assert texts(answer) == ["Hello, how can I help?"]
    assert set(answer["metadata"]["pydantic_ai"]) == {"timestamp"}
    folded = oracle.read(chunks)
    assert folded["ok"], folded
    assert folded["message"] == answer
    prompts = [p.content for p in ops.last_request().parts if isinstance(p, UserPromptPart)]
    assert prompts == ["Hi there"]
    assert sqlite_store.status("hi").status == "idle"
    assert sqlite_store.history("hi", kinds=["stream-opened"])[-1].actor == "agent:helper"


async def test_a_regenerate_answers_the_question_again(sqlite_store: ConversationStore) -> None:
    """``regenerate-message``: the old answer is cut, the agent answers the same question anew."""
    ops = ops_agent()
    responder = PydanticAIResponder(ops.agent)
    hello = {"id": "u-hello", "role": "user", "parts": [{"type": "text", "text": "Hi there"}]}
    async with client_of(create_app(sqlite_store, responder=responder)) as client:
        sse_events(await client.post("/api/chat", json=send_body("re", [hello])))
        old = sqlite_store.messages("re")[-1]["id"]
        body = send_body("re", [hello], trigger="regenerate-message", messageId=old)
        chunks = sse_events(await client.post("/api/chat", json=body))

    messages = sqlite_store.messages("re")
    assert [m["id"] for m in messages] == ["u-hello", chunks[0]["messageId"]]
    assert chunks[0]["messageId"] != old
    assert texts(messages[-1]) == ["Hello, how can I help?"]
    assert [r.trigger for r in responder.requests] == ["submit-message", "regenerate-message"]
    assert [m["id"] for m in responder.requests[1].messages] == ["u-hello"]
    assert len(ops.seen) == 2


async def test_a_turn_begun_by_another_responder_continues(sqlite_store: ConversationStore) -> None:
    """A call an AI SDK server asked approval for (with fields the adapter does not model) is run."""
    call = [
        {"type": "start", "messageId": "a1"},
        {"type": "start-step"},
        {
            "type": "tool-input-available",
            "toolCallId": CALL_ID,
            "toolName": "delete_file",
            "input": {"path": PATH},
            "providerMetadata": {"openai": {"itemId": "fc_1"}},
        },
        {
            "type": "tool-approval-request",
            "approvalId": "approval-1",
            "toolCallId": CALL_ID,
            "approvalDescriptor": {"risk": "high"},
        },
        {"type": "finish-step"},
        {"type": "finish", "finishReason": "tool-calls"},
    ]
    scripted = create_app(sqlite_store, responder=ScriptedResponder([call]))
    async with client_of(scripted) as client:
        await first_turn(client)
    assistant = sqlite_store.messages(CHAT)[-1]
    assert tool_part(assistant)["approval"] == {"id": "approval-1", "descriptor": {"risk": "high"}}

    ops = ops_agent()
    app = create_app(sqlite_store, responder=PydanticAIResponder(ops.agent))
    async with client_of(app) as client:
        answered = copy.deepcopy(assistant)
        tool_part(answered).update(
            state="approval-responded",
            approval={"id": "approval-1", "descriptor": {"risk": "high"}, "approved": True},
        )
        body = send_body(CHAT, [QUESTION, answered], messageId="a1")
        sse_events(await client.post("/api/chat", json=body))

    assert ops.deleted == [PATH]
    continued = sqlite_store.messages(CHAT)[-1]
    assert continued["id"] == "a1"
    assert tool_part(continued)["state"] == "output-available"
    assert tool_part(continued)["output"] == f"deleted {PATH}"
    assert texts(continued) == [f"Done: deleted {PATH}"]


async def test_a_failing_run_ends_the_stream_as_errored(sqlite_store: ConversationStore) -> None:
    """The run's exception reaches the app: a masked ``error`` chunk, the stream closed ``errored``."""
    ops = ops_agent(failure="model endpoint 10.0.0.7 refused the API key")
    app = create_app(sqlite_store, responder=PydanticAIResponder(ops.agent))
    async with client_of(app) as client:
        response = await client.post("/api/chat", json=send_body("boom", [QUESTION]))
        chunks = sse_events(response)

    assert types(chunks)[0] == "start"
    assert chunks[-1]["type"] == "error"
    assert "10.0.0.7" not in response.text
    status = sqlite_store.status("boom")
    assert status.last_outcome == "errored"
    assert status.last_reason == "RuntimeError: model endpoint 10.0.0.7 refused the API key"
    assert len(ops.seen) == 1


@pytest.mark.oracle
async def test_a_second_pause_in_the_same_message(
    sqlite_store: ConversationStore, oracle: Oracle
) -> None:
    """Denied, the model asks for a smaller deletion; approved, it runs: one message, two pauses."""
    smaller = "/var/log/ci/archive/2023"
    seen: list[list[ModelMessage]] = []
    deleted: list[str] = []

    async def model(
        messages: list[ModelMessage], info: AgentInfo
    ) -> AsyncIterator[str | DeltaToolCalls]:
        seen.append(copy.deepcopy(messages))
        request = messages[-1]
        assert isinstance(request, ModelRequest)
        returns = [p for p in request.parts if isinstance(p, ToolReturnPart)]
        if not returns:
            yield {
                0: DeltaToolCall("delete_file", json.dumps({"path": PATH}), tool_call_id=CALL_ID)
            }
        elif returns[0].outcome == "denied":
            yield {
                0: DeltaToolCall(
                    "delete_file", json.dumps({"path": smaller}), tool_call_id="call_2"
                )
            }
        else:
            yield f"Deleted {smaller} only."

    def delete_file(path: str) -> str:
        """Delete a file or a folder."""
        deleted.append(path)
        return f"deleted {path}"

    agent = Agent(
        FunctionModel(stream_function=model), tools=[Tool(delete_file, requires_approval=True)]
    )
    app = create_app(sqlite_store, responder=PydanticAIResponder(agent))
    async with client_of(app) as client:
        await first_turn(client)
        assistant = sqlite_store.messages(CHAT)[-1]
        denied, second = await continue_with(client, assistant, approved=False)
        paused = sqlite_store.messages(CHAT)[-1]
        assert oracle.read(second, message=denied)["message"] == paused
        assert [(p.get("toolCallId"), p.get("state")) for p in paused["parts"]] == [
            (None, None),
            (CALL_ID, "output-denied"),
            (None, None),
            ("call_2", "approval-requested"),
        ]
        assert sqlite_store.status(CHAT).status == "awaiting-approval"

        approved = answer_approval(paused, "call_2", True, "just that year")
        body = send_body(CHAT, [QUESTION, approved], messageId=assistant["id"])
        third = sse_events(await client.post("/api/chat", json=body))

    final = sqlite_store.messages(CHAT)[-1]
    assert oracle.read(third, message=approved)["message"] == final
    assert final["id"] == assistant["id"]
    assert deleted == [smaller]
    states = [
        (p.get("toolCallId"), p.get("state")) for p in final["parts"] if p["type"] != "step-start"
    ]
    assert states == [(CALL_ID, "output-denied"), ("call_2", "output-available"), (None, "done")]
    assert texts(final) == [f"Deleted {smaller} only."]
    # The earlier denial stays a result in the history; it is not handed to the agent again.
    results = [
        (p.tool_call_id, p.outcome, p.content)
        for m in seen[-1]
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, ToolReturnPart)
    ]
    assert results == [(CALL_ID, "denied", REASON), ("call_2", "success", f"deleted {smaller}")]
