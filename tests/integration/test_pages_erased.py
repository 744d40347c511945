"""The conversation page of an erased conversation: its audit skeleton, not a bare error."""

from __future__ import annotations

import httpx
import pytest

from chatledger import ConversationStore
from chatledger.adapters.http.app import create_app
from chatledger.adapters.responders import demo
from chatledger.adapters.responders.scripted import demo_responder
from chatledger.domain.timeline_groups import group

pytestmark = pytest.mark.anyio


async def test_an_erased_conversation_page_shows_who_erased_it_and_its_timeline(
    sqlite_store: ConversationStore,
) -> None:
    """The fragment says when, by whom and why, and lists its timeline's rows (chunks grouped per stream)."""
    demo.record_demo(sqlite_store, "gone")
    sqlite_store.operations.erase("gone", actor="ops:olga", reason="ticket 9")
    rows = group(sqlite_store.history("gone"))
    assert len(rows) < len(sqlite_store.history("gone"))  # the chunk batches are grouped
    app = create_app(sqlite_store, responder=demo_responder())
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
        page = await client.get("/ui/conversation", params={"id": "gone"})
        assert page.status_code == 200, page.text
        assert "was erased" in page.text and "ops:olga" in page.text and "ticket 9" in page.text
        assert 'id="erased-note"' in page.text and "status-erased" in page.text
        assert page.text.count('class="entry kind-') == len(rows)
        assert "kind-conversation-erased" in page.text and "user:alice" in page.text
        assert "The CI runner" not in page.text  # the content is gone
        earlier = await client.get("/ui/conversation", params={"id": "gone", "at": 2})
        assert earlier.status_code == 200 and 'id="erased-note"' in earlier.text
