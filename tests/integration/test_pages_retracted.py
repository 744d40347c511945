"""The conversation page marks the chunks an AI SDK 7 ``reset-step`` retracted, in the batches that hold them."""

from __future__ import annotations

import re

import httpx
import pytest

from chatledger.adapters.http.app import create_app
from chatledger.adapters.responders.scripted import demo_responder
from tests.integration.conftest import Backend
from tests.integration.test_ai_sdk_v7_store import RETRIED

pytestmark = pytest.mark.anyio


async def test_retracted_chunks_are_marked_in_the_timeline(durable_backend: Backend) -> None:
    store = durable_backend.open()
    store.start_conversation("c", actor="user:ann", ai_sdk=7)
    store.ingest("c", RETRIED, actor="agent:bot")
    history = store.history("c", full=True)
    [reset] = [e for e in history if "retracted" in e.marks]
    holders = [
        e
        for e in history
        if e.kind == "chunks" and any(row["position"] in (2, 3, 4) for row in e.details["chunks"])
    ]
    assert holders and reset.details["retracted"] == [2, 3, 4]
    app = create_app(store, responder=demo_responder())
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
        page = (await client.get("/ui/conversation", params={"id": "c"})).text
    entries = dict(
        re.findall(r'<li class="entry[^"]*"\s+data-position="(\d+)"(.*?)</li>', page, re.S)
    )
    marked = {
        int(position)
        for position, body in entries.items()
        if f"retracted by #{reset.position}" in body
    }
    assert marked == {entry.position for entry in holders}
    total = sum(
        int(n)
        for body in entries.values()
        for n in re.findall(r"(\d+) chunk\(s\) retracted by", body)
    )
    assert total == 3  # positions 2, 3 and 4, each marked once
