"""OpenTelemetry export: spans sent over OTLP/HTTP to a receiver run by the test, decoded with opentelemetry-proto."""

from __future__ import annotations

import gzip
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from chatledger import ConversationStore
from chatledger.adapters.responders import demo
from chatledger.domain.aggregate import conversation_id
from tests.integration.conftest import Backend


class Receiver:
    """An OTLP/HTTP traces endpoint on a free local port; keeps every span it is sent."""

    def __init__(self) -> None:
        self.spans: list[Any] = []
        self.paths: list[str] = []
        self.arrived = threading.Event()
        received = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                request = ExportTraceServiceRequest()
                request.ParseFromString(body)
                received.paths.append(self.path)
                for resource in request.resource_spans:
                    for scope in resource.scope_spans:
                        received.spans.extend(scope.spans)
                received.arrived.set()
                reply = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    found = Receiver()
    yield found
    found.close()


def attributes(span: Any) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for item in span.attributes:
        value = item.value
        kind = value.WhichOneof("value")
        if kind == "array_value":
            values[item.key] = [v.string_value for v in value.array_value.values]
        else:
            values[item.key] = getattr(value, kind)
    return values


def test_the_timeline_arrives_as_genai_spans_attribute_by_attribute(
    durable_backend: Backend, receiver: Receiver
) -> None:
    store = durable_backend.open()
    demo.record_demo(store, "done")
    exporter = store.operations.otel_exporter(receiver.url, content=True)
    sent = exporter.run_once()
    exporter.close()
    assert receiver.paths and set(receiver.paths) == {"/v1/traces"}
    assert sent == len(receiver.spans)
    trace = conversation_id("default", "done").bytes
    assert {span.trace_id for span in receiver.spans} == {trace}
    chats = [span for span in receiver.spans if span.name == "chat"]
    (tool,) = [span for span in receiver.spans if span.name.startswith("execute_tool")]
    assert len(chats) == 2  # the turn that asked for approval, and the continuation
    first = min(chats, key=lambda span: span.start_time_unix_nano)
    assert attributes(first) == {
        "gen_ai.operation.name": "chat",
        "gen_ai.conversation.id": "done",
        "gen_ai.response.id": attributes(first)["gen_ai.response.id"],
        "gen_ai.response.finish_reasons": ["finished"],
        "chatledger.tenant": "default",
        "chatledger.actor": attributes(first)["chatledger.actor"],
        "chatledger.trigger": "submit-message",
        "chatledger.continuation": False,
    }
    assert tool.name == "execute_tool delete_file"
    assert tool.parent_span_id == first.span_id
    values = attributes(tool)
    assert values["gen_ai.operation.name"] == "execute_tool"
    assert values["gen_ai.tool.call.id"] == demo.TOOL_CALL_ID
    assert values["gen_ai.tool.name"] == "delete_file"
    assert values["chatledger.tool.outcome"] == "denied"
    assert "/var/log/ci/archive" in values["gen_ai.tool.call.arguments"]
    (approval,) = tool.events
    assert approval.name == "gen_ai.tool.approval"
    assert attributes(approval) == {
        "chatledger.actor": attributes(approval)["chatledger.actor"],
        "chatledger.approved": False,
        "chatledger.reason": demo.DENIAL_REASON,
    }
    assert attributes(approval)["chatledger.actor"].startswith("user:")
    assert tool.start_time_unix_nano <= approval.time_unix_nano <= tool.end_time_unix_nano


def test_export_resumes_and_a_rebuild_then_re_export_gives_the_same_span_ids(
    durable_backend: Backend, receiver: Receiver
) -> None:
    store = durable_backend.open()
    demo.record_demo(store, "done")
    exporter = store.operations.otel_exporter(receiver.url)
    first = exporter.run_once()
    assert exporter.run_once() == 0  # nothing new: the position moved
    store.start_conversation("later")
    store.ingest("later", [{"type": "start"}, {"type": "finish", "finishReason": "stop"}])
    assert exporter.run_once() == 1  # only the new stream
    exporter.close()
    before = sorted((span.trace_id, span.span_id, span.parent_span_id) for span in receiver.spans)
    assert len(before) == first + 1
    assert "gen_ai.tool.call.arguments" not in attributes(
        next(span for span in receiver.spans if span.name.startswith("execute_tool"))
    )
    store.operations.rebuild()
    receiver.spans.clear()
    again = durable_backend.other_store(store).operations.otel_exporter(
        receiver.url, name="after-rebuild"
    )
    assert again.run_once() == first + 1
    again.close()
    after = sorted((span.trace_id, span.span_id, span.parent_span_id) for span in receiver.spans)
    assert after == before


def test_the_cli_sends_spans_and_refuses_a_bad_endpoint(
    tmp_path: Any, receiver: Receiver, capsys: pytest.CaptureFixture[str]
) -> None:
    from chatledger.adapters.cli.commands import main

    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    with ConversationStore.open(url) as store:
        demo.record_demo(store, "done")
    assert main(["export-otel", "--url", url, "--endpoint", receiver.url]) == 0
    assert capsys.readouterr().out == f"sent {len(receiver.spans)} span(s) to {receiver.url}\n"
    assert main(["export-otel", "--url", url, "--endpoint", "localhost:4318"]) == 1
    assert "--endpoint 'localhost:4318' is not an http(s) URL" in capsys.readouterr().err


def test_follow_sends_the_spans_of_new_streams_as_they_close(
    durable_backend: Backend, receiver: Receiver
) -> None:
    store = durable_backend.open()
    exporter = store.operations.otel_exporter(receiver.url)
    stop = threading.Event()
    follower = threading.Thread(target=exporter.follow, args=(stop, 0.05))
    follower.start()
    try:
        store.start_conversation("live")
        store.ingest("live", [{"type": "start"}, {"type": "finish", "finishReason": "stop"}])
        assert receiver.arrived.wait(30), "no span arrived"
    finally:
        stop.set()
        follower.join(30)
        exporter.close()
    assert [span.name for span in receiver.spans] == ["chat"]
    assert attributes(receiver.spans[0])["gen_ai.conversation.id"] == "live"
