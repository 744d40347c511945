"""The usage ledger in the OTel export: ``gen_ai.usage.*`` on the stream's span and on recorded usage."""

from __future__ import annotations

from chatledger.domain.usage import Tokens
from tests.integration.conftest import Backend
from tests.integration.test_otel_export import Receiver, attributes, receiver  # noqa: F401
from tests.integration.test_usage_ledger import _answer, _ask


def test_usage_goes_out_as_gen_ai_usage_attributes(
    durable_backend: Backend,
    receiver: Receiver,  # noqa: F811
) -> None:
    """A stream stating its usage, and a recorded step, each give the usage attributes."""
    store = durable_backend.open()
    store.start_conversation("c", actor="user:alice")
    _ask(store, "c", "u1", "user:alice")
    _answer(store, "c", "a1", [{"model": "gpt-4o"},
                               {"totalUsage": {"inputTokens": 120, "outputTokens": 30,
                                               "cachedInputTokens": 20}}])  # fmt: skip
    _ask(store, "c", "u2", "user:alice")
    _answer(store, "c", "a2", [{}, {"note": "no usage"}])
    store.record_usage(
        "c", Tokens(input=9, output=2, reasoning=1), model="o3", message_id="a3", step=2,
        source="openai-agents", actor="agent:ops",
    )  # fmt: skip
    exporter = store.operations.otel_exporter(receiver.url)
    exporter.run_once()
    exporter.close()
    spans = sorted(receiver.spans, key=lambda span: span.start_time_unix_nano)
    streamed, bare, recorded = (attributes(span) for span in spans)
    assert streamed["gen_ai.usage.input_tokens"] == 120
    assert streamed["gen_ai.usage.output_tokens"] == 30
    assert streamed["gen_ai.usage.cache_read.input_tokens"] == 20
    assert streamed["gen_ai.response.model"] == "gpt-4o"
    assert not any(key.startswith("gen_ai.usage") for key in bare)
    assert spans[2].name == "chat o3"
    assert recorded["gen_ai.usage.input_tokens"] == 9
    assert recorded["gen_ai.usage.reasoning.output_tokens"] == 1
    assert recorded["chatledger.usage.source"] == "openai-agents"
    assert recorded["chatledger.usage.step"] == 2 and recorded["gen_ai.response.id"] == "a3"
