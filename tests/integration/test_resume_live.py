"""A resume of a stream this process writes, set up from its writer's memory (no load of the conversation).

The client must get exactly what a resume from the log gives: every chunk in
order, none twice, none lost, when it attaches mid-answer (chunks committed,
chunks still buffered in the writer, chunks appended after it attached); and
the log path still answers whenever the writer cannot tell (a redaction
recorded meanwhile, a writer in another store). The interleavings are forced:
the resume is let run until its follower has read the log, then the writer
goes on.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from chatledger import ConversationStore
from chatledger.adapters.http.app import create_app
from chatledger.adapters.persistence.log import ConversationLog
from chatledger.adapters.responders.scripted import ScriptedResponder
from chatledger.adapters.store.reads.catchup import catchups
from tests.integration.conftest import Backend
from tests.integration.http_support import client_of, sse_events

pytestmark = pytest.mark.anyio

Chunk = dict[str, Any]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _delta(i: int) -> Chunk:
    return {"type": "text-delta", "id": "t", "delta": f"w{i} "}


HEAD: list[Chunk] = [{"type": "start"}, {"type": "start-step"}, {"type": "text-start", "id": "t"}]
TAIL: list[Chunk] = [{"type": "text-end", "id": "t"}, {"type": "finish-step"}, {"type": "finish"}]


def _opened(store: ConversationStore, chat: str) -> Any:
    store.start_conversation(chat)
    store.append_message(
        chat, {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "hi"}]}
    )
    return store.open_stream(chat)


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The chats whose conversation was loaded from the log (``ConversationLog.load``), in order."""
    seen: list[str] = []
    real = ConversationLog.load

    def counted(
        self: ConversationLog, key: Any, tenant: str, chat_id: str, *a: Any, **k: Any
    ) -> Any:
        seen.append(chat_id)
        return real(self, key, tenant, chat_id, *a, **k)

    monkeypatch.setattr(ConversationLog, "load", counted)
    yield seen


async def _until_read(store: ConversationStore, attached: int = 1) -> None:
    """Let the loop run until ``attached`` followers of this loop have read the log once."""
    hub = store.reads._news
    for _ in range(100_000):
        streams = catchups(hub).streams()
        if sum(c.followers for c in streams if c.reads) >= attached:
            return
        await asyncio.sleep(0)
    pytest.fail("the resume never attached")


async def test_a_resume_mid_answer_gets_every_chunk_once_in_order_without_a_load(
    durable_backend: Backend, loads: list[str]
) -> None:
    """Attached with chunks committed and chunks buffered, then more: all of them, once, in order."""
    store = durable_backend.open()
    stream = _opened(store, "live")
    for chunk in HEAD:
        stream.append(chunk)
    for i in range(5):
        stream.append(_delta(i))
    stream.flush()  # committed: read from the log
    for i in range(5, 8):
        stream.append(_delta(i))  # buffered in the writer: fed when committed
    writer = store.streams.writer_of("live")
    assert writer is stream and writer.live_stream() is not None
    loads.clear()
    app = create_app(store, responder=ScriptedResponder([]))
    async with client_of(app) as client:
        resuming = asyncio.create_task(client.get("/api/chat/live/stream"))
        await _until_read(store)
        for i in range(8, 20):
            stream.append(_delta(i))
            if i % 4 == 0:
                stream.flush()
        for chunk in TAIL:
            stream.append(chunk)
        stream.close()
        resumed = await asyncio.wait_for(resuming, 30)
    message_id = store.messages("live")[-1]["id"]
    expected = [{"type": "start", "messageId": message_id}, *HEAD[1:]]
    expected += [_delta(i) for i in range(20)] + TAIL
    assert sse_events(resumed) == expected
    cursors = [line[4:] for line in resumed.text.split("\n") if line.startswith("id: ")]
    assert len(cursors) == len(set(cursors)) == len(expected)
    assert "live" not in loads  # neither the status, nor the start, nor the message id loaded it


async def test_a_resume_of_a_stream_written_elsewhere_reads_the_log(
    durable_backend: Backend,
) -> None:
    """Another store (another process) writes the stream: this one has no writer, the log answers."""
    writing, serving = durable_backend.open(), durable_backend.open()
    stream = _opened(writing, "away")
    for chunk in [*HEAD, *(_delta(i) for i in range(4))]:
        stream.append(chunk)
    stream.flush()
    assert serving.streams.writer_of("away") is None
    async with client_of(create_app(serving, responder=ScriptedResponder([]))) as client:
        resuming = asyncio.create_task(client.get("/api/chat/away/stream"))
        await _until_read(serving)
        for chunk in [*(_delta(i) for i in range(4, 9)), *TAIL]:
            stream.append(chunk)
        stream.close()
        resumed = await asyncio.wait_for(resuming, 30)
    message_id = writing.messages("away")[-1]["id"]
    expected = [{"type": "start", "messageId": message_id}, *HEAD[1:]]
    assert sse_events(resumed) == expected + [_delta(i) for i in range(9)] + TAIL


async def test_a_redaction_recorded_since_the_writer_loaded_masks_every_resumed_chunk(
    sqlite_store: ConversationStore,
) -> None:
    """The writer's memory lacks a redaction another use case recorded: the log's reading masks."""
    store = sqlite_store
    stream = _opened(store, "red")
    for chunk in [*HEAD, _delta(0), _delta(1)]:
        stream.append(chunk)
    stream.flush()
    message_id = store.messages("red")[-1]["id"]
    assert store.redact("red", message_id=message_id, actor="ops", reason="test")
    assert stream.live_stream() is not None  # the writer has not seen the redaction
    async with client_of(create_app(store, responder=ScriptedResponder([]))) as client:
        resuming = asyncio.create_task(client.get("/api/chat/red/stream"))
        await _until_read(store)
        stream.append(_delta(2))
        for chunk in TAIL:
            stream.append(chunk)
        stream.close()
        resumed = await asyncio.wait_for(resuming, 30)
    deltas = [e for e in sse_events(resumed) if e.get("type") == "text-delta"]
    assert len(deltas) == 3
    assert not any(d["delta"].startswith("w") for d in deltas)  # each one masked
