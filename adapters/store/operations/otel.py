"""Exporting the timeline to an OpenTelemetry backend over OTLP/HTTP (``pip install 'chatledger[otel]'``).

The spans are planned by ``chatledger.projections.genai_spans`` and sent
with the official SDK's ``ReadableSpan`` and OTLP exporter. The exporter
keeps its own position in the log (``chatledger_export_positions``): each run
sends the spans that events after it finished, then moves the position, so
a restarted export resumes where it stopped. Span ids depend on event
positions only, so sending again (a lost position, a rebuild) repeats the
same spans rather than inventing new ones.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any
from uuid import UUID

from chatledger.adapters.persistence.chain import chain_tables
from chatledger.adapters.store.reads.shown import masks_of
from chatledger.domain.errors import (
    ConversationErasedError,
    InvalidInputError,
    StoreUnavailableError,
)
from chatledger.projections.genai_spans import SpanPlan, plan_spans

__all__ = ["OtelExporter"]

_PAGE = 500


class OtelExporter:
    """Sends the spans of new events to ``endpoint`` (an OTLP/HTTP traces URL)."""

    def __init__(
        self, log: Any, endpoint: str, *, name: str = "otel", content: bool = False
    ) -> None:
        try:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        except ImportError:
            raise InvalidInputError(
                "exporting to OpenTelemetry needs the otel extra: pip install 'chatledger[otel]'"
            ) from None
        tables = chain_tables(log.recorder, log.config.backend)
        if tables is None:
            raise InvalidInputError("a memory:// store cannot keep an export position")
        self._log = log
        self._tables = tables
        self._name = name
        self._content = content
        self._exporter = OTLPSpanExporter(endpoint=_traces_url(endpoint), timeout=10)

    def run_once(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Send the spans of every event after the position; returns how many spans were sent."""
        position = self._tables.export_position(self._name)
        sent = 0
        recorder = self._log.recorder
        while page := recorder.select_notifications(
            start=position, limit=_PAGE, inclusive_of_start=False
        ):
            new: dict[UUID, set[int]] = {}
            for notification in page:
                new.setdefault(notification.originator_id, set()).add(
                    notification.originator_version
                )
            plans = [plan for key, versions in new.items() for plan in self._plans(key, versions)]
            if plans:
                self._send(plans)
            sent += len(plans)
            position = page[-1].id
            self._tables.set_export_position(self._name, position)
            if progress is not None:
                progress(position, sent)
        return sent

    def follow(self, stop: threading.Event, poll_seconds: float = 1.0) -> None:
        """Keep sending new spans until ``stop`` is set."""
        while not stop.is_set():
            self.run_once()
            stop.wait(poll_seconds)

    def close(self) -> None:
        """Shut the OTLP exporter down."""
        self._exporter.shutdown()  # type: ignore[no-untyped-call]

    def _plans(self, key: UUID, versions: set[int]) -> list[SpanPlan]:
        try:
            events = list(self._log.events.get(key, lte=max(versions)))
            masks = None
            if self._content:  # tool arguments and results: hide what is redacted (now, not then)
                masks = masks_of(self._log.repository.get(key).state)
        except ConversationErasedError:
            return []  # erased: its content must not leave the store any more
        plans = plan_spans(key, events, content=self._content, masks=masks)
        return [plan for plan in plans if plan.finished_at in versions]

    def _send(self, plans: list[SpanPlan]) -> None:
        from opentelemetry.sdk.trace.export import SpanExportResult

        result = self._exporter.export([_readable(plan) for plan in plans])
        if result != SpanExportResult.SUCCESS:
            raise StoreUnavailableError(
                "the OpenTelemetry endpoint did not accept the spans; nothing was marked sent "
                "(run again to retry)"
            )


def _traces_url(endpoint: str) -> str:
    endpoint = endpoint.rstrip("/")
    if not endpoint.startswith(("http://", "https://")):
        raise InvalidInputError(
            f"--endpoint {endpoint!r} is not an http(s) URL (e.g. http://localhost:4318)"
        )
    return endpoint if endpoint.endswith("/v1/traces") else endpoint + "/v1/traces"


def _ns(moment: Any) -> int:
    return int(moment.timestamp() * 1_000_000_000)


def _readable(plan: SpanPlan) -> Any:
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import Event, ReadableSpan
    from opentelemetry.sdk.util.instrumentation import InstrumentationScope
    from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

    def context(span: int) -> SpanContext:
        return SpanContext(plan.trace_id, span, False, TraceFlags(TraceFlags.SAMPLED))

    return ReadableSpan(
        name=plan.name,
        context=context(plan.span_id),
        parent=context(plan.parent_id) if plan.parent_id is not None else None,
        resource=Resource.create({"service.name": "chatledger"}),
        attributes=plan.attributes,
        events=[Event(e.name, e.attributes, _ns(e.time)) for e in plan.events],
        kind=SpanKind.CLIENT if plan.name == "chat" else SpanKind.INTERNAL,
        instrumentation_scope=InstrumentationScope("chatledger"),
        status=Status(StatusCode.ERROR) if plan.error else Status(StatusCode.UNSET),
        start_time=_ns(plan.start),
        end_time=_ns(plan.end or plan.start),
    )
