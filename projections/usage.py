"""The usage ledger: token usage per model call and turn, rolled up, priced from an operator's table.

``ledger_of`` reads one conversation's usage from its audit timeline: each
AI SDK stream whose chunks state a usage in their message metadata
(``chatledger.domain.usage.stream_usage``), and each ``UsageRecorded`` event
(a step or a turn recorded by a framework or the app). Each entry names the
conversation, the user (the actor of the latest user message before it, else
whoever started the conversation), the model, the message and the time.

``rollup`` sums entries per conversation, user, tenant, model or day. A
message's turn-level usage (its streams' metadata, or a ``UsageRecorded``
without a step) counts; its steps count only when it has no turn-level usage,
so a framework that reports both is not counted twice. ``PriceTable`` is the
operator's: chatledger knows no prices. Pure: no I/O, no clock.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal, InvalidOperation
from typing import Any, Final

from chatledger.domain.errors import InvalidInputError
from chatledger.domain.timeline import TimelineEntry
from chatledger.domain.usage import Tokens, metadata_usage, pydantic_ai_usage, stream_usage
from chatledger.projections.usage_groups import GROUPS

__all__ = [
    "GROUPS",
    "LEDGER_KINDS",
    "PriceTable",
    "UsageEntry",
    "UsageRow",
    "counted",
    "ledger_of",
    "rollup",
]

LEDGER_KINDS: Final = ("conversation-started", "message-appended", "chunks", "usage-recorded")
"""The timeline kinds the ledger reads (chunk batches in full)."""
_PER: Final = Decimal(1_000_000)
_PRICE_KEYS: Final = ("input", "output", "cachedInput", "reasoning")


@dataclass(frozen=True)
class UsageEntry:
    """One usage in the ledger: a stream's (a turn's model calls) or one recorded step or turn."""

    tenant: str
    chat_id: str
    time: datetime
    user: str | None
    model: str | None
    message_id: str | None
    tokens: Tokens
    source: str
    """``ai-sdk`` (stream metadata) or the ``UsageRecorded`` source."""
    step: int | None = None
    """The model call within the turn, or None for a turn-level usage."""
    stream_id: str | None = None
    position: int = 0
    """The timeline position that holds it (the last chunk batch of a stream)."""

    def to_json(self) -> dict[str, Any]:
        """The entry as JSON."""
        return {
            "tenant": self.tenant,
            "chatId": self.chat_id,
            "time": self.time.isoformat(),
            "user": self.user,
            "model": self.model,
            "messageId": self.message_id,
            "step": self.step,
            "streamId": self.stream_id,
            "source": self.source,
            "position": self.position,
            **self.tokens.to_json(),
        }


@dataclass(frozen=True)
class PriceTable:
    """Prices per million tokens by model, as the operator gives them (``{model: {input, output}}``).

    Keys are model names or ``fnmatch`` patterns (``gpt-4o*``); an exact name
    wins, then the first pattern that matches. Each price holds ``input`` and
    ``output`` and may hold ``cachedInput`` (cached input tokens at that price
    instead of ``input``) and ``reasoning`` (reasoning tokens at that price on
    top of ``output``, for providers that bill them apart). Costs are in the
    table's currency, whatever it is.
    """

    prices: Mapping[str, Mapping[str, Decimal]]

    @classmethod
    def from_json(cls, table: object) -> PriceTable:
        """The table from JSON; InvalidInputError naming the bad model or price otherwise."""
        if not isinstance(table, Mapping):
            raise InvalidInputError(
                'a price table is a JSON object: {"model": {"input": 2.5, "output": 10}}'
            )
        prices: dict[str, dict[str, Decimal]] = {}
        for model, price in table.items():
            if not isinstance(price, Mapping) or not {"input", "output"} <= set(price):
                raise InvalidInputError(
                    f"price of {str(model)[:80]!r} needs input and output (per million tokens)"
                )
            unknown = sorted(set(price) - set(_PRICE_KEYS))
            if unknown:
                raise InvalidInputError(
                    f"price of {str(model)[:80]!r} has unknown key(s) {unknown}; use {', '.join(_PRICE_KEYS)}"
                )
            prices[str(model)] = {key: _decimal(model, key, value) for key, value in price.items()}
        return cls(prices)

    def price_of(self, model: str | None) -> Mapping[str, Decimal] | None:
        """The price of ``model`` (None: not in the table)."""
        if model is None:
            return None
        if model in self.prices:
            return self.prices[model]
        return next((p for key, p in self.prices.items() if fnmatch.fnmatchcase(model, key)), None)

    def cost(self, model: str | None, tokens: Tokens) -> Decimal | None:
        """What ``tokens`` of ``model`` cost (None: the model has no price)."""
        price = self.price_of(model)
        if price is None:
            return None
        cached = tokens.cached_input or 0 if "cachedInput" in price else 0
        cost = (
            Decimal(max((tokens.input or 0) - cached, 0)) * price["input"]
            + Decimal(cached) * price.get("cachedInput", Decimal(0))
            + Decimal(tokens.output or 0) * price["output"]
            + Decimal(tokens.reasoning or 0) * price.get("reasoning", Decimal(0))
        )
        return cost / _PER


@dataclass
class UsageRow:
    """Usage summed under one key (a conversation, user, tenant, model or day)."""

    key: str
    calls: int = 0
    """How many usages were summed."""
    input: int = 0
    output: int = 0
    total: int = 0
    reasoning: int = 0
    cached_input: int = 0
    cost: Decimal | None = None
    """What it cost by the price table (None: no price table, or nothing priced)."""
    unpriced: int = 0
    """Usages whose model the price table does not price."""
    models: set[str] = field(default_factory=set)

    def to_json(self) -> dict[str, Any]:
        """The row as JSON (the cost as a decimal string)."""
        return {
            "key": self.key,
            "calls": self.calls,
            "inputTokens": self.input,
            "outputTokens": self.output,
            "totalTokens": self.total,
            "reasoningTokens": self.reasoning,
            "cachedInputTokens": self.cached_input,
            "cost": None if self.cost is None else str(self.cost),
            "unpriced": self.unpriced,
            "models": sorted(self.models),
        }


def ledger_of(tenant: str, chat_id: str, entries: Iterable[TimelineEntry]) -> list[UsageEntry]:
    """The usage entries of one conversation, from its timeline (``LEDGER_KINDS``, chunks in full)."""
    found: list[UsageEntry] = []
    user: str | None = None
    streams: dict[str, list[Any]] = {}
    last: dict[str, TimelineEntry] = {}
    messages: dict[str, str | None] = {}
    users: dict[str, str | None] = {}
    seen: set[str | None] = set()
    for entry in entries:
        details = entry.details
        if entry.kind == "conversation-started" or (
            entry.kind == "message-appended" and details.get("role") == "user"
        ):
            user = entry.actor
        elif entry.kind == "message-appended" and details.get("role") == "assistant":
            appended = _appended(tenant, chat_id, entry, user)
            if appended is not None and appended.message_id not in seen:
                seen.add(appended.message_id)  # a framework re-appends a kept message: once
                found.append(appended)
        elif entry.kind == "chunks":
            stream = str(details.get("streamId"))
            rows = details.get("chunks") or []
            applied = [
                r["chunk"] for r in rows if isinstance(r, dict) and r.get("verdict") == "applied"
            ]
            streams.setdefault(stream, []).extend(applied)
            last[stream] = entry
            messages.setdefault(stream, details.get("messageId"))
            named = [
                c.get("messageId")
                for c in applied
                if isinstance(c, dict) and c.get("type") == "start"
            ]
            if named and isinstance(named[-1], str):  # the start chunk names the message
                messages[stream] = named[-1]
            users.setdefault(stream, user)
        elif entry.kind == "usage-recorded":
            found.append(_recorded(tenant, chat_id, entry, user))
    for stream, chunks in streams.items():
        usage = stream_usage(chunks)
        if usage is not None:
            at = last[stream]
            found.append(
                UsageEntry(
                    tenant, chat_id, at.time, users[stream], usage[1], messages[stream],
                    usage[0], "ai-sdk", stream_id=stream, position=at.position,
                )
            )  # fmt: skip
    return sorted(found, key=lambda e: e.position)


def counted(entries: Iterable[UsageEntry]) -> list[UsageEntry]:
    """The entries a total counts: a message's steps only when it has no turn-level usage."""
    entries = list(entries)
    turns = {(e.tenant, e.chat_id, e.message_id) for e in entries if e.step is None}
    return [
        e
        for e in entries
        if e.step is None
        or e.message_id is None
        or (e.tenant, e.chat_id, e.message_id) not in turns
    ]


def rollup(
    entries: Iterable[UsageEntry], by: str, prices: PriceTable | None = None
) -> list[UsageRow]:
    """Usage summed per ``by`` (one of ``GROUPS``), most tokens first; priced when a table is given."""
    if by not in GROUPS:
        raise InvalidInputError(
            f"usage cannot be rolled up by {str(by)[:40]!r}; use one of {', '.join(GROUPS)}"
        )
    rows: dict[str, UsageRow] = {}
    for entry in counted(entries):
        key = _key(entry, by)
        row = rows.setdefault(key, UsageRow(key))
        tokens = entry.tokens
        row.calls += 1
        row.input += tokens.input or 0
        row.output += tokens.output or 0
        row.total += tokens.known_total
        row.reasoning += tokens.reasoning or 0
        row.cached_input += tokens.cached_input or 0
        if entry.model is not None:
            row.models.add(entry.model)
        if prices is not None:
            cost = prices.cost(entry.model, tokens)
            if cost is None:
                row.unpriced += 1
            else:
                row.cost = cost if row.cost is None else row.cost + cost
    return sorted(rows.values(), key=lambda r: (-r.total, r.key))


def _key(entry: UsageEntry, by: str) -> str:
    if by == "conversation":
        return entry.chat_id
    if by == "user":
        return entry.user or "(unknown user)"
    if by == "tenant":
        return entry.tenant
    if by == "model":
        return entry.model or "(unknown model)"
    return entry.time.date().isoformat()


def _recorded(tenant: str, chat_id: str, entry: TimelineEntry, user: str | None) -> UsageEntry:
    d = entry.details
    tokens = Tokens(
        d.get("inputTokens"), d.get("outputTokens"), d.get("totalTokens"),
        d.get("reasoningTokens"), d.get("cachedInputTokens"),
    )  # fmt: skip
    return UsageEntry(
        tenant, chat_id, entry.time, user, d.get("model"), d.get("messageId"), tokens,
        str(d.get("source")), step=d.get("step"), position=entry.position,
    )  # fmt: skip


def _appended(
    tenant: str, chat_id: str, entry: TimelineEntry, user: str | None
) -> UsageEntry | None:
    """The usage a whole assistant message states: a Pydantic AI response's (a step), or its metadata's."""
    message = entry.details.get("message")
    metadata = message.get("metadata") if isinstance(message, dict) else None
    found, source, step = pydantic_ai_usage(metadata), "pydantic-ai", None
    if found is None:
        found, source, step = metadata_usage(metadata), "app", None
    if found is None:
        return None
    return UsageEntry(
        tenant, chat_id, entry.time, user, found[1], entry.details.get("messageId"), found[0],
        source, step=step, position=entry.position,
    )  # fmt: skip


def _decimal(model: object, key: str, value: object) -> Decimal:
    try:
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise InvalidOperation
        price = Decimal(str(value))
    except InvalidOperation:
        raise InvalidInputError(
            f"price {key} of {str(model)[:80]!r} is not a number: {value!r}"
        ) from None
    if not price.is_finite() or price < 0:
        raise InvalidInputError(f"price {key} of {str(model)[:80]!r} must be a number >= 0")
    return price
