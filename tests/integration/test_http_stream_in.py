"""``POST /api/chats/{id}/answers``: an answer produced by another server, streamed in over real HTTP.

The app is served by uvicorn (in a thread of the test process, on a SQLite
file and on PostgreSQL); clients are httpx over TCP, and a raw socket where
the test must hang up mid-body. Interleavings are forced with gates: a body
generator that stops sending until the test has seen what it checks.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from chatledger import ConversationStore
from chatledger.adapters.http.app import create_app
from chatledger.adapters.responders.scripted import ScriptedResponder
from tests.integration.conftest import Backend
from tests.integration.http_support import error_of, user
from tests.integration.stream_in_support import (
    SSE,
    body,
    follow_until,
    frame,
    gated_body,
    served,
    text_answer,
    until,
)

TOOL_CALL = {
    "type": "tool-input-available",
    "toolCallId": "call-1",
    "toolName": "refund",
    "input": {"amount": 20},
}
APPROVAL = {"type": "tool-approval-request", "approvalId": "ap-1", "toolCallId": "call-1"}


@pytest.fixture
def store(durable_backend: Backend) -> ConversationStore:
    return durable_backend.open()


@pytest.fixture
def base(store: ConversationStore) -> Iterator[str]:
    """The app on ``store`` over real HTTP; its own responder never answers (no continuations)."""
    app = create_app(store, responder=ScriptedResponder([]), run_continuations=False)
    with served(app) as url:
        yield url


def _started(client: httpx.Client, chat_id: str) -> None:
    """Start the conversation and append the user's message, as a server running the model does."""
    assert client.post("/api/chats", json={"id": chat_id}).status_code == 201
    appended = client.post(f"/api/chats/{chat_id}/messages", json={"message": user("u1")})
    assert appended.json() == {"id": chat_id, "messageId": "u1", "changed": True}


def test_chunks_reach_a_follower_before_the_body_ends(base: str, store: ConversationStore) -> None:
    """Each chunk is stored as it arrives: a follower reads it while the body is held open."""
    gate = threading.Event()
    answer = text_answer("a1", "Hello", " world")
    with httpx.Client(base_url=base, timeout=30) as client, ThreadPoolExecutor(1) as pool:
        _started(client, "c")
        posting = pool.submit(
            client.post, "/api/chats/c/answers", content=gated_body(answer[:4], gate, answer[4:]),
            headers=SSE,
        )  # fmt: skip
        seen = follow_until(client, "c", lambda chunks: chunks[-1].get("delta") == "Hello")
        assert not posting.done()  # the body is still held open at the gate
        assert [c["type"] for c in seen] == ["start", "start-step", "text-start", "text-delta"]
        assert client.get("/api/chats/c/status").json()["status"] == "streaming"
        gate.set()
        report = posting.result(30).json()
    assert (report["outcome"], report["messageId"], report["duplicate"]) == (
        "finished",
        "a1",
        False,
    )
    assert report["chunks"] == {"received": 8, "applied": 8, "replays": 0, "refused": 0}
    assert report["position"] == 7 and report["status"]["status"] == "idle"
    assert store.messages("c")[-1]["parts"][-1] == {
        "type": "text",
        "text": "Hello world",
        "state": "done",
    }


def test_a_retried_stream_in_is_written_once(base: str, store: ConversationStore) -> None:
    """The same ``Idempotency-Key`` again (while the first is open, and after) writes nothing."""
    gate = threading.Event()
    answer = text_answer("a1", "once")
    key = {**SSE, "idempotency-key": "answer-1"}
    with httpx.Client(base_url=base, timeout=30) as client, ThreadPoolExecutor(1) as pool:
        _started(client, "c")
        first = pool.submit(
            client.post, "/api/chats/c/answers", content=gated_body(answer[:2], gate, answer[2:]),
            headers=key,
        )  # fmt: skip
        until(lambda: store.status("c").status == "streaming", "the first write never opened")
        during = client.post("/api/chats/c/answers", content=body(answer), headers=key).json()
        gate.set()
        written = first.result(30).json()
        after = client.post("/api/chats/c/answers", content=body(answer), headers=key).json()
    assert written["duplicate"] is False and written["outcome"] == "finished"
    assert during == {
        "chatId": "c",
        "streamId": written["streamId"],
        "messageId": during["messageId"],  # the message id before the answer's start set it
        "answerKey": "answer-1",
        "duplicate": True,
        "outcome": None,  # still being written
        "reason": None,
    }
    assert after == {**during, "messageId": "a1", "outcome": "finished"}
    assert [m["id"] for m in store.messages("c")] == ["u1", "a1"]
    opened = store.history("c", kinds=["stream-opened"])
    assert len(opened) == 1


def test_refused_chunks_are_reported_and_the_stream_goes_on(
    base: str, store: ConversationStore
) -> None:
    """A bad chunk is refused with its position and reason; the chunks around it are stored."""
    answer = text_answer("a1", "good")
    bad = [
        {"type": "text-delta", "id": "nope", "delta": "x"},  # no such text part open
        {"type": "no-such-chunk"},
        "{not json",
    ]
    chunks = [*answer[:4], *bad, *answer[4:]]
    with httpx.Client(base_url=base, timeout=30) as client:
        _started(client, "c")
        raw = b"".join(frame(c) for c in chunks) + b": a comment\n\ndata: [DONE]\n\n"
        report = client.post("/api/chats/c/answers", content=raw, headers=SSE).json()
    assert report["outcome"] == "finished"
    assert report["chunks"] == {"received": 10, "applied": 7, "replays": 0, "refused": 3}
    assert [r["position"] for r in report["refused"]] == [4, 5, 6]
    assert report["refused"][0]["chunkType"] == "text-delta"
    assert "nope" in report["refused"][0]["reason"]
    assert all(r["error"] and r["reason"] for r in report["refused"])
    assert store.messages("c")[-1]["parts"][-1]["text"] == "good"


def test_the_continuation_request_and_a_continuation_come_back(
    base: str, store: ConversationStore
) -> None:
    """An approval given while the answer streams: its continuation request is in the answer,
    and the continuation is streamed in with ``?continuation=true`` into the same message."""
    gate = threading.Event()
    paused = [*text_answer("a1", "Refunding")[:-2], TOOL_CALL, APPROVAL]
    end = [{"type": "finish-step"}, {"type": "finish"}]
    with httpx.Client(base_url=base, timeout=30) as client, ThreadPoolExecutor(1) as pool:
        _started(client, "c")
        posting = pool.submit(
            client.post, "/api/chats/c/answers", content=gated_body(paused, gate, end),
            headers=SSE,
        )  # fmt: skip
        follow_until(client, "c", lambda chunks: chunks[-1]["type"] == "tool-approval-request")
        approved = client.post(
            "/api/chats/c/approvals", json={"approvalId": "ap-1", "approved": True}
        )
        assert approved.json()["changed"] is True
        gate.set()
        report = posting.result(30).json()
        assert report["continuationRequest"] is not None
        assert report["status"]["status"] == "ready-to-continue"
        continued = [
            {"type": "start"},
            {"type": "start-step"},
            {"type": "tool-output-available", "toolCallId": "call-1", "output": {"ok": True}},
            {"type": "finish-step"},
            {"type": "finish"},
        ]
        again = client.post(
            "/api/chats/c/answers?continuation=true", content=body(continued), headers=SSE
        ).json()
        refused = client.post(
            "/api/chats/c/answers?continuation=true", content=body(continued), headers=SSE
        )
    assert (again["outcome"], again["messageId"], again["continuationRequest"]) == (
        "finished",
        "a1",
        None,
    )
    assert again["chunks"]["refused"] == 0
    error_of(refused, 409, "NothingToContinueError")  # nothing left to continue
    part = next(p for p in store.messages("c")[-1]["parts"] if p.get("toolCallId") == "call-1")
    assert (part["state"], part["output"]) == ("output-available", {"ok": True})


def test_a_client_that_hangs_up_mid_body_leaves_an_interrupted_stream(
    base: str, store: ConversationStore
) -> None:
    """What arrived before the client hung up is kept; the stream closes ``interrupted``."""
    host, port = base.removeprefix("http://").split(":")
    with httpx.Client(base_url=base, timeout=30) as client:
        _started(client, "c")
    with socket.create_connection((host, int(port)), timeout=30) as raw:
        raw.sendall(
            b"POST /api/chats/c/answers HTTP/1.1\r\nHost: localhost\r\n"
            b"Content-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
        )
        for chunk in text_answer("a1", "kept")[:4]:
            data = frame(chunk)
            raw.sendall(b"%x\r\n%s\r\n" % (len(data), data))
        until(
            lambda: "kept" in json.dumps(store.messages("c")),
            "the chunks sent never reached the log",
        )
    status = until(
        lambda: (s := store.status("c")).status != "streaming" and s,
        "the stream stayed open after the client hung up",
    )
    assert (status.last_outcome, status.last_reason) == (
        "interrupted",
        "the writer hung up mid-stream",
    )
    assert store.messages("c")[-1]["parts"][-1]["text"] == "kept"


def test_a_silent_body_closes_the_stream_interrupted(store: ConversationStore) -> None:
    """A client that sends nothing more (its machine gone, the connection half open) does not
    keep the stream open: after the idle limit it closes ``interrupted``, what came is kept."""
    app = create_app(
        store, responder=ScriptedResponder([]), run_continuations=False, answer_idle_seconds=0.5
    )
    gate = threading.Event()
    answer = text_answer("a1", "kept")
    with served(app) as url, httpx.Client(base_url=url, timeout=30) as client:
        _started(client, "c")
        with ThreadPoolExecutor(1) as pool:
            posting = pool.submit(
                client.post, "/api/chats/c/answers",
                content=gated_body(answer[:4], gate, answer[4:]), headers=SSE,
            )  # fmt: skip
            try:
                status = until(
                    lambda: (s := store.status("c")).last_outcome and s,
                    "the silent stream stayed open",
                )
            finally:
                gate.set()  # the client may send the rest now: the server no longer reads it
            with contextlib.suppress(httpx.TransportError):  # the server may have hung up
                report = posting.result(30).json()
                assert (report["outcome"], report["chunks"]["received"]) == ("interrupted", 4)
    assert (status.last_outcome, status.last_reason) == ("interrupted", "nothing arrived for 0.5 s")
    assert store.messages("c")[-1]["parts"][-1]["text"] == "kept"


def test_a_body_without_done_closes_the_stream_interrupted(base: str) -> None:
    with httpx.Client(base_url=base, timeout=30) as client:
        _started(client, "c")
        answer = text_answer("a1", "cut")[:4]
        report = client.post("/api/chats/c/answers", content=body(answer, done=False), headers=SSE)
    assert report.json()["outcome"] == "interrupted"
    assert "without 'data: [DONE]'" in report.json()["reason"]


def test_a_stop_ends_the_stream_in_at_once(base: str, store: ConversationStore) -> None:
    """``POST /api/chats/{id}/stop`` closes the answer ``aborted``; the writer is told at once."""
    gate = threading.Event()
    answer = text_answer("a1", "stop me")
    with httpx.Client(base_url=base, timeout=30) as client, ThreadPoolExecutor(1) as pool:
        _started(client, "c")
        posting = pool.submit(
            client.post, "/api/chats/c/answers", content=gated_body(answer[:4], gate, answer[4:]),
            headers=SSE,
        )  # fmt: skip
        follow_until(client, "c", lambda chunks: chunks[-1]["type"] == "text-delta")
        stopped = client.post("/api/chats/c/stop", json={"reason": "enough"}).json()
        assert stopped["stopped"] is True
        gate.set()  # the next chunk finds the stream closed
        report = posting.result(30).json()
    assert (report["outcome"], report["closedElsewhere"]) == ("aborted", True)
    assert "enough" in report["reason"]
    assert store.status("c").last_outcome == "aborted"


def test_tenancy_and_tokens(store: ConversationStore) -> None:
    """The writer routes take the caller's token: its tenant, its user as the actor."""
    tokens = {"tok-a": "tenant-a:node-app", "tok-b": "tenant-b"}
    app = create_app(store, responder=ScriptedResponder([]), run_continuations=False, tokens=tokens)
    answer = body(text_answer("a1", "secret"))
    with served(app) as url:
        with httpx.Client(base_url=url, timeout=30) as anonymous:
            error_of(anonymous.post("/api/chats", json={"id": "c"}), 401, "UnauthorizedError")
            refused = anonymous.post("/api/chats/c/answers", content=answer, headers=SSE)
            error_of(refused, 401, "UnauthorizedError")
        a = httpx.Client(base_url=url, timeout=30, headers={"authorization": "Bearer tok-a"})
        b = httpx.Client(base_url=url, timeout=30, headers={"authorization": "Bearer tok-b"})
        with a, b:
            _started(a, "c")
            error_of(
                b.post("/api/chats/c/answers", content=answer, headers=SSE),
                404,
                "ConversationNotFoundError",
            )
            error_of(
                b.post("/api/chats/c/messages", json={"message": user("u2")}),
                404,
                "ConversationNotFoundError",
            )
            assert a.post("/api/chats/c/answers", content=answer, headers=SSE).json()[
                "outcome"
            ] == ("finished")
            error_of(b.get("/api/chats/c/messages"), 404, "ConversationNotFoundError")
    opened = store.history("c", tenant="tenant-a", kinds=["stream-opened"])
    assert [entry.actor for entry in opened] == ["node-app"]


def test_bad_requests_are_refused_clearly(base: str) -> None:
    with httpx.Client(base_url=base, timeout=30) as client:
        answer = body(text_answer("a1", "x"))
        error_of(
            client.post("/api/chats/missing/answers", content=answer, headers=SSE),
            404,
            "ConversationNotFoundError",
        )
        _started(client, "c")
        plain = client.post("/api/chats/c/answers", content=answer)
        assert "text/event-stream" in error_of(plain, 415, "UnsupportedMediaTypeError")
        long_key = {**SSE, "idempotency-key": "k" * 201}
        error_of(
            client.post("/api/chats/c/answers", content=answer, headers=long_key),
            422,
            "InvalidRequestError",
        )
        other = {**user("u1"), "parts": [{"type": "text", "text": "changed"}]}
        error_of(
            client.post("/api/chats/c/messages", json={"message": other}),
            422,
            "InvalidMessageError",
        )
        again = client.post("/api/chats", json={"id": "c"})
        assert (again.status_code, again.json()) == (200, {"id": "c", "created": False})
        made = client.post("/api/chats", json={})
        assert made.status_code == 201 and made.json()["id"]


def test_openapi_documents_the_writer_routes(base: str) -> None:
    with httpx.Client(base_url=base, timeout=30) as client:
        paths = client.get("/openapi.json").json()["paths"]
    answers = paths["/api/chats/{id}/answers"]["post"]
    assert "text/event-stream" in answers["requestBody"]["content"]
    assert {p["name"] for p in answers["parameters"]} == {"id", "continuation", "Idempotency-Key"}
    assert set(paths["/api/chats"]) == {"get", "post"}
    assert set(paths["/api/chats/{id}/messages"]) == {"get", "post"}


def _an_hour_ahead() -> datetime:
    return datetime.now(UTC) + timedelta(hours=1)


def test_a_writer_whose_server_died_leaves_a_stream_the_lease_closes(
    durable_backend: Backend,
) -> None:
    """The process reading the body dies (SIGKILL) mid-answer: what it stored is kept, and the
    stream is closed ``interrupted`` once its lease ran out (seen from a clock an hour ahead)."""
    from tests.integration.http_support import server_process

    tokens, auth = "tok-kill=kill-tenant", {"authorization": "Bearer tok-kill"}
    with server_process(durable_backend.url, "--no-continuations", tokens=tokens) as (process, url):
        gate = threading.Event()
        answer = text_answer("a1", "acknowledged")
        client = httpx.Client(base_url=url, timeout=30, headers=auth)
        with client, ThreadPoolExecutor(1) as pool:
            _started(client, "c")
            posting = pool.submit(
                client.post, "/api/chats/c/answers",
                content=gated_body(answer[:4], gate, answer[4:]), headers=SSE,
            )  # fmt: skip
            follow_until(client, "c", lambda chunks: chunks[-1].get("delta") == "acknowledged")
            process.kill()
            process.wait(30)
            gate.set()
            with pytest.raises(httpx.TransportError):
                posting.result(30)
    other = durable_backend.open(tenant="kill-tenant")
    assert other.status("c").status == "streaming"  # nobody closed it: the writer died
    other.clock = _an_hour_ahead
    assert other.streams.expire_stream("c") is True
    status = other.status("c")
    assert (status.status, status.last_outcome) == ("idle", "interrupted")
    assert other.messages("c")[-1]["parts"][-1]["text"] == "acknowledged"
