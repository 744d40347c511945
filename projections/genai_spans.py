"""The audit timeline as OpenTelemetry GenAI spans (pure: events in, span plans out).

One trace per conversation (its id: the conversation's UUID). One ``chat``
span per stream (opened to closed), with ``gen_ai.conversation.id``; one
``execute_tool {name}`` span per tool call, child of the stream that called
it, from the event where the call appeared to the one that settled it
(output, error or denial), with ``gen_ai.tool.call.id`` and, when asked,
``gen_ai.tool.call.arguments`` / ``gen_ai.tool.call.result``. Approvals and
tool outputs given by people are span events carrying the actor and reason.
A stream whose message metadata states its usage (``chatledger.domain.usage``)
carries ``gen_ai.usage.input_tokens`` / ``output_tokens`` and
``gen_ai.response.model``; a recorded usage (``UsageRecorded``) is a ``chat``
span of its own at its time, with the same attributes.

Ids come from event positions alone: a span's id is the first 8 bytes of
``SHA-256(conversation id || version of the event that opened it [|| tool call id])``,
so exporting again (after a rebuild, or after a crash) yields the same ids
and a backend sees the same spans. Each plan names the version of the event
that finished it, so an exporter sends it exactly when that event is new.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from uuid import UUID

from chatledger.domain.events import (
    ChunksReceived,
    ConversationEvent,
    ConversationStarted,
    StreamClosed,
    StreamOpened,
    ToolApprovalResponded,
    ToolOutputAdded,
)
from chatledger.domain.redaction import Masks
from chatledger.domain.tool_parts import is_tool_part, tool_name
from chatledger.domain.usage import Tokens, UsageRecorded, stream_usage

__all__ = ["SpanEvent", "SpanPlan", "plan_spans"]

_SETTLED = {"output-available": "ok", "output-error": "error", "output-denied": "denied"}


@dataclass
class SpanEvent:
    """A point in a span's life (an approval, a tool output), with its attributes."""

    name: str
    time: datetime
    attributes: dict[str, Any]


@dataclass
class SpanPlan:
    """One span to export."""

    name: str
    trace_id: int
    span_id: int
    parent_id: int | None
    start: datetime
    end: datetime | None
    attributes: dict[str, Any]
    events: list[SpanEvent] = field(default_factory=list)
    finished_at: int = 0
    """Version of the event that ended the span."""
    error: bool = False


def span_id(conversation: UUID, version: int, extra: str = "") -> int:
    """The span id of whatever the event at ``version`` opened (never 0)."""
    data = conversation.bytes + version.to_bytes(8, "big") + extra.encode("utf-8")
    return int.from_bytes(hashlib.sha256(data).digest()[:8], "big") or 1


def _tool_parts(messages: list[dict[str, Any]]) -> Iterable[dict[str, Any]]:
    for message in messages:
        for part in message.get("parts", []):
            if is_tool_part(part) and part.get("toolCallId"):
                yield part


def plan_spans(
    conversation: UUID,
    events: Iterable[ConversationEvent],
    *,
    content: bool = False,
    masks: Masks | None = None,
) -> list[SpanPlan]:
    """Every finished span of the conversation; ``content`` adds tool arguments and results.

    ``masks`` (the conversation's redactions now) hide redacted arguments and results.
    """
    state: Any = None
    aggregate: Any = None
    chat = tenant = ""
    stream: SpanPlan | None = None
    applied: list[Any] = []  # the open stream's applied chunks, for the usage they state
    tools: dict[str, SpanPlan] = {}
    finished: list[SpanPlan] = []
    trace = conversation.int
    for event in events:
        aggregate = event.mutate(aggregate)
        state = aggregate.state
        version = event.originator_version
        if isinstance(event, ConversationStarted):
            chat, tenant = event.chat_id, event.tenant
        elif isinstance(event, StreamOpened):
            stream = SpanPlan(
                "chat",
                trace,
                span_id(conversation, version),
                None,
                event.timestamp,
                None,
                {
                    "gen_ai.operation.name": "chat",
                    "gen_ai.conversation.id": chat,
                    "gen_ai.response.id": event.message_id,
                    "chatledger.tenant": tenant,
                    "chatledger.actor": event.actor,
                    "chatledger.trigger": event.trigger,
                    "chatledger.continuation": event.continuation,
                },
            )
            applied = []
        elif isinstance(event, ChunksReceived):
            refused = {index for index, _ in event.refusals} | set(event.replays)
            applied += [c for i, c in enumerate(event.chunks) if i not in refused]
        elif isinstance(event, StreamClosed) and stream is not None:
            stream.end = event.timestamp
            stream.finished_at = version
            stream.attributes["gen_ai.response.finish_reasons"] = [event.outcome]
            stream.error = event.outcome == "errored"
            if event.reason:
                stream.attributes["chatledger.reason"] = event.reason
            usage = stream_usage(applied)
            if usage is not None:
                stream.attributes |= _usage_attributes(*usage)
            finished.append(stream)
        elif isinstance(event, UsageRecorded):
            finished.append(_recorded_span(conversation, event, chat, tenant))
        if isinstance(event, ToolApprovalResponded) and event.tool_call_id in tools:
            attributes = {"chatledger.actor": event.actor, "chatledger.approved": event.approved}
            if event.reason:
                attributes["chatledger.reason"] = event.reason
            tools[event.tool_call_id].events.append(
                SpanEvent("gen_ai.tool.approval", event.timestamp, attributes)
            )
        if isinstance(event, ToolOutputAdded) and event.tool_call_id in tools:
            tools[event.tool_call_id].events.append(
                SpanEvent(
                    "gen_ai.tool.output",
                    event.timestamp,
                    {"chatledger.actor": event.actor, "chatledger.state": event.state},
                )
            )
        _follow_tools(conversation, event, state, stream, tools, finished, chat, content, masks)
    return finished


def _usage_attributes(tokens: Tokens, model: str | None) -> dict[str, Any]:
    """The GenAI usage attributes (``gen_ai.usage.*``) and the model, of what is known."""
    found: dict[str, Any] = {}
    for key, value in (
        ("gen_ai.usage.input_tokens", tokens.input),
        ("gen_ai.usage.output_tokens", tokens.output),
        ("gen_ai.usage.cache_read.input_tokens", tokens.cached_input),
        ("gen_ai.usage.reasoning.output_tokens", tokens.reasoning),
        ("gen_ai.response.model", model),
    ):
        if value is not None:
            found[key] = value
    return found


def _recorded_span(conversation: UUID, event: UsageRecorded, chat: str, tenant: str) -> SpanPlan:
    """A ``chat`` span for a usage a framework or the app recorded (one model call or turn)."""
    version = event.originator_version
    attributes = {
        "gen_ai.operation.name": "chat",
        "gen_ai.conversation.id": chat,
        "chatledger.tenant": tenant,
        "chatledger.actor": event.actor,
        "chatledger.usage.source": event.source,
        **({"gen_ai.response.id": event.message_id} if event.message_id else {}),
        **({"chatledger.usage.step": event.step} if event.step is not None else {}),
        **_usage_attributes(event.tokens, event.model),
    }
    name = f"chat {event.model}" if event.model else "chat"
    return SpanPlan(
        name, conversation.int, span_id(conversation, version), None, event.timestamp,
        event.timestamp, attributes, finished_at=version,
    )  # fmt: skip


def _follow_tools(
    conversation: UUID,
    event: ConversationEvent,
    state: Any,
    stream: SpanPlan | None,
    tools: dict[str, SpanPlan],
    finished: list[SpanPlan],
    chat: str,
    content: bool,
    masks: Masks | None,
) -> None:
    version = event.originator_version
    for part in _tool_parts(state.messages):
        call = part["toolCallId"]
        plan = tools.get(call)
        if plan is None:
            name = tool_name(part)
            plan = tools[call] = SpanPlan(
                f"execute_tool {name}",
                conversation.int,
                span_id(conversation, version, call),
                stream.span_id if stream is not None else None,
                event.timestamp,
                None,
                {
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.conversation.id": chat,
                    "gen_ai.tool.name": name,
                    "gen_ai.tool.call.id": call,
                },
            )
        if plan.end is None and part.get("state") in _SETTLED:
            plan.end = event.timestamp
            plan.finished_at = version
            plan.attributes["chatledger.tool.outcome"] = _SETTLED[part["state"]]
            plan.error = part["state"] == "output-error"
            if content:
                part = masks.part(part) if masks is not None else part
                plan.attributes["gen_ai.tool.call.arguments"] = json.dumps(part.get("input"))
                if "output" in part:
                    plan.attributes["gen_ai.tool.call.result"] = json.dumps(part.get("output"))
            finished.append(plan)
