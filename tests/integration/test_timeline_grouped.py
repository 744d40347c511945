"""The grouped audit timeline: ``timeline()``, ``GET /api/chats/{id}/history``, ``chatledger audit`` and the page.

A streamed answer flushed chunk by chunk records one batch per chunk; each read
of the timeline for people shows that stream's batches as one row, leads with
the decisions and pages by position, while ``history`` still lists every event.
"""

from __future__ import annotations

import json
import re
from typing import Any

import httpx
import pytest

from chatledger import ConversationStore
from chatledger.adapters.cli import main
from chatledger.adapters.http.app import create_app, openapi_document
from chatledger.adapters.http.conversation_page import PAGE_ROWS
from chatledger.adapters.responders.scripted import demo_responder
from chatledger.adapters.store.reads import timeline_page
from chatledger.domain.errors import InvalidInputError
from tests.integration.conftest import Backend

WORDS = ["free up", " space", " by removing", " the old", " build logs."] * 8
TOOL = [
    {"type": "tool-input-start", "toolCallId": "call_1", "toolName": "delete_file"},
    {
        "type": "tool-input-available",
        "toolCallId": "call_1",
        "toolName": "delete_file",
        "input": {"path": "/var/log/ci"},
    },
    {"type": "tool-approval-request", "toolCallId": "call_1", "approvalId": "ap_1"},
    {"type": "finish-step"},
    {"type": "finish", "finishReason": "tool-calls"},
]


def _user(message_id: str, text: str) -> dict[str, Any]:
    return {"id": message_id, "role": "user", "parts": [{"type": "text", "text": text}]}


def _answer(store: ConversationStore, chat: str, chunks: list[Any]) -> None:
    """Stream ``chunks`` flushing after each one: a batch per chunk, as a writer flushing every delta."""
    with store.open_stream(chat, actor="agent:bot") as stream:
        for chunk in chunks:
            stream.append(chunk)
            stream.flush()


def seed_long_chat(store: ConversationStore, chat: str, turns: int = 1) -> None:
    """A question answered delta by delta asking approval, the denial, then ``turns`` more turns."""
    store.start_conversation(chat, actor="user:alice")
    store.append_message(chat, _user("u1", "Delete the old build logs?"), actor="user:alice")
    deltas = [{"type": "text-delta", "id": "t1", "delta": word} for word in WORDS]
    text = [{"type": "text-start", "id": "t1"}, *deltas, {"type": "text-end", "id": "t1"}]
    _answer(store, chat, [{"type": "start"}, {"type": "start-step"}, *text, *TOOL])
    store.respond_to_approval(
        chat,
        approval_id="ap_1",
        approved=False,
        reason="not on Fridays",
        actor="user:alice",
        auto_continue=False,
    )
    for turn in range(turns):
        store.append_message(chat, _user(f"q{turn}", f"question {turn}"), actor="user:alice")
        _answer(store, chat, [{"type": "start"}, *text, {"type": "finish"}])


@pytest.fixture
def long_store(durable_backend: Backend) -> ConversationStore:
    store = durable_backend.open()
    seed_long_chat(store, "long", turns=2)
    return store


def test_the_timeline_groups_each_streams_batches_and_pages_by_position(
    long_store: ConversationStore,
) -> None:
    """One row per stream run, decisions and lifecycle their own rows; pages join up; history is whole."""
    every = long_store.history("long")
    assert len(every) == long_store.version("long") > 140
    rows = long_store.timeline("long").rows
    assert [row.kind for row in rows] == [
        "conversation-started",
        "message-appended",
        "stream-opened",
        "chunks",
        "stream-closed",
        "approval-responded",
        *["message-appended", "stream-opened", "chunks", "stream-closed"] * 2,
    ]
    assert rows[3].batches == len(WORDS) + 4 + len(TOOL)
    assert rows[3].details["outcome"] == "finished" and "`delete_file`" in rows[3].summary
    assert rows[5].marks == ("denied",) and "not on Fridays" in rows[5].summary
    assert [entry for row in rows for entry in row.entries] == every
    paged, after = [], 0
    while True:
        found = long_store.timeline("long", after=after, limit=4)
        paged += found.rows
        if found.next_after is None:
            break
        after = found.next_after
    assert paged == rows
    full = long_store.history("long", full=True)
    assert len(full) == len(every) and full[5].details["chunks"]  # every chunk, a batch per event
    with pytest.raises(InvalidInputError, match="limit"):
        long_store.timeline("long", limit=0)


@pytest.mark.parametrize("limit", [1, 3])
def test_pages_read_in_windows_join_up_whatever_the_window(
    long_store: ConversationStore, monkeypatch: pytest.MonkeyPatch, limit: int
) -> None:
    """Runs longer than the read window: pages still give every row once, each run whole, its outcome."""
    rows = long_store.timeline("long").rows
    monkeypatch.setattr(timeline_page, "WINDOW", 2)  # far shorter than a run (over 40 batches)
    paged, after = [], 0
    while True:
        found = long_store.timeline("long", after=after, limit=limit)
        paged += found.rows
        if found.next_after is None:
            break
        after = found.next_after
    assert paged == rows
    chunks = long_store.timeline("long", kinds=["chunks"], limit=1).rows
    assert chunks == [rows[3]] and chunks[0].details["outcome"] == "finished"  # its close left out


@pytest.mark.anyio
async def test_get_history_is_grouped_and_paged_and_events_on_request(
    long_store: ConversationStore,
) -> None:
    """``GET …/history``: grouped rows with ``next``; ``view=events`` and ``full=true`` list every event."""
    app = create_app(long_store, responder=demo_responder())
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
        grouped = (await client.get("/api/chats/long/history")).json()
        assert grouped["next"] is None
        rows = grouped["entries"]
        assert len(rows) == 14 and rows[3]["kind"] == "chunks" and rows[3]["batches"] > 40
        assert rows[3]["lastPosition"] - rows[3]["position"] + 1 == rows[3]["batches"]
        assert rows[5]["kind"] == "approval-responded" and rows[5]["marks"] == ["denied"]
        first = (await client.get("/api/chats/long/history", params={"limit": 5})).json()
        assert first["entries"] == rows[:5] and first["next"] == rows[4]["lastPosition"]
        rest = await client.get("/api/chats/long/history", params={"after": first["next"]})
        assert rest.json()["entries"] == rows[5:]
        events = (await client.get("/api/chats/long/history", params={"view": "events"})).json()
        assert len(events["entries"]) == long_store.version("long")
        assert events["entries"] == [e.to_json() for e in long_store.history("long")]
        page = await client.get("/api/chats/long/history", params={"view": "events", "limit": 3})
        assert page.json()["next"] == 3
        full = await client.get("/api/chats/long/history", params={"full": "true"})
        assert full.json()["entries"] == [
            e.to_json() for e in long_store.history("long", full=True)
        ]
        bad = await client.get("/api/chats/long/history", params={"view": "chunks"})
        assert bad.status_code == 422 and "'view'" in bad.json()["error"]["message"]
        zero = await client.get("/api/chats/long/history", params={"limit": 0})
        assert zero.status_code == 422
    parameters = openapi_document()["paths"]["/api/chats/{id}/history"]["get"]["parameters"]
    assert {"view", "after", "limit"} <= {parameter["name"] for parameter in parameters}


@pytest.mark.anyio
async def test_the_page_leads_with_decisions_groups_batches_and_pages(
    durable_backend: Backend,
) -> None:
    """The decisions list, one row per stream (its batches inside), pages of ``PAGE_ROWS`` rows."""
    store = durable_backend.open()
    turns = PAGE_ROWS // 4 + 1  # each turn is 4 rows: more than one page
    seed_long_chat(store, "long", turns=turns)
    app = create_app(store, responder=demo_responder())
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
        last = (await client.get("/ui/conversation", params={"id": "long"})).text
        first = (await client.get("/ui/conversation", params={"id": "long", "page": 1})).text
        at = await client.get("/ui/conversation", params={"id": "long", "at": 10})
        bad = await client.get("/ui/conversation", params={"id": "long", "page": 9})
        writer = store.open_stream("long", actor="agent:bot")  # live: the page refreshes itself
        writer.append({"type": "start"})
        writer.flush()
        live = await client.get("/ui/conversation", params={"id": "long", "page": 1})
        newest = await client.get("/ui/conversation", params={"id": "long"})
        writer.close()
    assert 'hx-trigger="every 1s"' in live.text and '"page": 1}' in live.text  # kept
    assert 'hx-trigger="every 1s"' in newest.text and '"page":' not in newest.text.split(">")[0]
    rows = re.findall(r'<li class="entry ([^"]*)"\s+data-position="(\d+)"', first)
    assert len(rows) == PAGE_ROWS
    assert "Page 1 of 2" in first and "Page 2 of 2" in last
    decisions = re.findall(r'<li class="decision kind-([^" ]*)', last)
    assert decisions == ["approval-responded"]  # on every page, ahead of the timeline
    assert last.index('class="decisions"') < last.index('class="timeline"')
    grouped = [position for classes, position in rows if "grouped" in classes]
    assert grouped[0] == "4" and len(re.findall(r'<li class="batch', first)) > 40 * len(grouped)
    assert re.search(r'<li class="batch current" data-position="10"', at.text)
    assert '<details class="batches" open>' in at.text  # the selected batch's row is open
    assert bad.status_code == 422


def test_audit_prints_a_line_per_stream_and_pages(
    long_store: ConversationStore, durable_backend: Backend, capsys: pytest.CaptureFixture[str]
) -> None:
    """``chatledger audit``: the stream's batches on one line; --limit/--after page; --every-event."""
    url = durable_backend.url
    assert main(["audit", "long", "--url", url]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 14
    assert re.match(rf"\s*4-{3 + long_store.timeline('long').rows[3].batches}\s", lines[3])
    assert "approval-responded" in lines[5] and "[denied]" in lines[5]
    assert main(["audit", "long", "--url", url, "--limit", "5"]) == 0
    shown = capsys.readouterr()
    after = long_store.timeline("long").rows[4].last_position
    assert shown.out.splitlines() == lines[:5] and f"--after {after}" in shown.err  # same widths
    assert main(["audit", "long", "--url", url, "--after", str(after)]) == 0
    assert capsys.readouterr().out.splitlines() == lines[5:]
    assert main(["audit", "long", "--url", url, "--every-event"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == long_store.version("long")
    assert main(["audit", "long", "--url", url, "--jsonl", "--limit", "3"]) == 0
    exported = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [entry["position"] for entry in exported] == [1, 2, 3]
