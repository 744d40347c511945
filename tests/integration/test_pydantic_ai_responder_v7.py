"""The Pydantic AI responder speaks the conversation's AI SDK version: v7 chunks for a v7 chat."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatledger import ConversationStore
from chatledger.adapters.http.app import create_app
from chatledger.adapters.responders.pydantic_ai import PydanticAIResponder
from tests.integration.http_support import client_of
from tests.integration.test_pydantic_ai_responder import (
    CHAT,
    PATH,
    continue_with,
    first_turn,
    ops_agent,
    texts,
    tool_part,
)
from tests.support.oracle import Oracle

pytestmark = [pytest.mark.oracle, pytest.mark.anyio]


@pytest.mark.parametrize("approved", [False, True], ids=["denied", "approved"])
async def test_ai_sdk_7_folds_the_responders_streams_into_the_stored_messages(
    tmp_path: Path, oracle_v7: Oracle, approved: bool
) -> None:
    """A v7 conversation: ``readUIMessageStream`` of ai@7 over both streams gives the stored messages."""
    with ConversationStore.open(f"sqlite:///{tmp_path / 'v7.db'}", ai_sdk=7) as store:
        responder = PydanticAIResponder(ops_agent().agent)
        app = create_app(store, responder=responder)
        async with client_of(app) as client:
            first = await first_turn(client)
            folded = oracle_v7.read(first, via="sse")
            assert folded["ok"], folded
            assert folded["message"] == store.messages(CHAT)[-1]
            assert tool_part(folded["message"])["state"] == "approval-requested"
            answered, second = await continue_with(client, folded["message"], approved=approved)
            continued = oracle_v7.read(second, message=answered, via="sse")
            assert continued["ok"], continued
            stored = store.messages(CHAT)[-1]
            assert continued["message"] == stored
        assert [r.ai_sdk for r in responder.requests] == [7, 7]
        assert store.ai_sdk_of(CHAT) == 7
        assert (tool_part(stored)["state"] == "output-available") is approved
        assert texts(stored)[-1].startswith("Done" if approved else "I left")
        assert PATH in texts(stored)[-1]
