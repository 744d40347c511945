"""The demo responder behind ``/chat`` and ``serve --demo``: every message of a chat gets a whole demo turn."""

from __future__ import annotations

import pytest

from chatledger import ConversationStore
from chatledger.adapters.http.app import create_app
from chatledger.adapters.responders import demo
from chatledger.adapters.responders.scripted import demo_responder
from tests.integration.http_support import answer_approval, client_of, send_body, sse_events

pytestmark = pytest.mark.anyio


def _second_question() -> dict[str, object]:
    return {
        "id": "msg-user-2",
        "role": "user",
        "parts": [{"type": "text", "text": "And the logs in /var/log/ci/old?"}],
    }


async def test_a_second_message_gets_its_own_tool_call_and_approval(
    sqlite_store: ConversationStore,
) -> None:
    """The second answer is not refused at ``start`` and asks for an approval of a call of its own."""
    app = create_app(sqlite_store, responder=demo_responder())
    chat = "twice"
    async with client_of(app) as client:
        first = sse_events(
            await client.post("/api/chat", json=send_body(chat, [demo.USER_MESSAGE]))
        )
        assert first == demo.first_turn_chunks()  # the first answer is the recording itself
        shown = (await client.get(f"/api/chats/{chat}/messages")).json()["messages"]
        denied = answer_approval(shown[-1], demo.APPROVAL_ID, False, demo.DENIAL_REASON)
        body = send_body(chat, [demo.USER_MESSAGE, denied], messageId=demo.MESSAGE_ID)
        sse_events(await client.post("/api/chat", json=body))

        shown = (await client.get(f"/api/chats/{chat}/messages")).json()["messages"]
        second = sse_events(
            await client.post("/api/chat", json=send_body(chat, [*shown, _second_question()]))
        )
        assert not [c for c in second if c["type"] == "error"], second
        requests = [c for c in second if c["type"] == "tool-approval-request"]
        assert len(requests) == 1 and requests[0]["toolCallId"] != demo.TOOL_CALL_ID
        assert second[-1] == {"type": "finish", "finishReason": "tool-calls"}
        status = (await client.get(f"/api/chats/{chat}/status")).json()
        assert status["status"] == "awaiting-approval"
        inbox = (await client.get("/api/approvals")).json()["approvals"]
        assert [a["toolCallId"] for a in inbox] == [requests[0]["toolCallId"]]

        shown = (await client.get(f"/api/chats/{chat}/messages")).json()["messages"]
        assert shown[-1]["id"] != demo.MESSAGE_ID
        approved = answer_approval(shown[-1], requests[0]["approvalId"], True)
        continued = sse_events(
            await client.post(
                "/api/chat",
                json=send_body(chat, [*shown[:-1], approved], messageId=shown[-1]["id"]),
            )
        )
        outputs = [c for c in continued if c["type"] == "tool-output-available"]
        assert [c["toolCallId"] for c in outputs] == [requests[0]["toolCallId"]]
        assert continued[-1] == {"type": "finish", "finishReason": "stop"}
    final = sqlite_store.messages(chat)
    assert [m["role"] for m in final] == ["user", "assistant", "user", "assistant"]
    assert final[-1]["parts"][-1]["type"] == "text"
