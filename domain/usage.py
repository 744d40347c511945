"""Token usage: the ``UsageRecorded`` event, and reading usage from what an AI SDK stream carries.

Usage comes into the log two ways, both as events:

- an AI SDK answer states it in its message metadata (``messageMetadata``
  on ``start``, ``finish`` or ``message-metadata`` chunks), as apps send
  ``part.totalUsage`` or ``part.usage`` from ``toUIMessageStreamResponse``'s
  ``messageMetadata`` callback: the chunk batches (``ChunksReceived``) hold it,
  and ``stream_usage`` reads it back (the metadata one stream's chunks state,
  ``totalUsage`` before ``usage``; the model from ``model`` or ``modelId``);
- a framework or the app records it with ``UsageRecorded`` (one model call,
  a *step*, or a whole turn), e.g. from an OpenAI Agents run or a Pydantic AI
  response.

Token counts follow the AI SDK's names (``inputTokens``, ``outputTokens``,
``totalTokens``, ``reasoningTokens``, ``cachedInputTokens``, and the v6
``inputTokenDetails.cacheReadTokens`` / ``outputTokenDetails.reasoningTokens``).
The event's class path is stored data (``chatledger.domain.usage:UsageRecorded``):
never rename or move it without registering the old topic. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any, Final

from chatledger.domain.errors import InvalidInputError
from chatledger.domain.events import ConversationEvent
from chatledger.domain.limits import check_name
from chatledger.domain.metadata import MetadataMergeError, merge_metadata

__all__ = [
    "COUNTS",
    "PYDANTIC_AI_KEY",
    "SOURCES",
    "Tokens",
    "UsageRecorded",
    "check_tokens",
    "metadata_usage",
    "pydantic_ai_usage",
    "stream_usage",
    "tokens_of",
    "usage_tokens",
]

COUNTS: Final = ("input", "output", "total", "reasoning", "cached_input")
"""The token counts a usage holds (each may be unknown)."""
SOURCES: Final = ("ai-sdk", "openai-agents", "pydantic-ai", "app")
"""Where a usage came from."""
PYDANTIC_AI_KEY: Final = "pydanticAi"
"""The metadata key under which the Pydantic AI store keeps an entry's JSON."""
_METADATA_CHUNKS: Final = frozenset({"start", "finish", "message-metadata"})


@dataclass(frozen=True)
class Tokens:
    """Token counts of one model call or turn (None: not reported)."""

    input: int | None = None
    output: int | None = None
    total: int | None = None
    reasoning: int | None = None
    cached_input: int | None = None

    @property
    def known_total(self) -> int:
        """The total as reported, else input plus output (0 when neither is known)."""
        if self.total is not None:
            return self.total
        return (self.input or 0) + (self.output or 0)

    def to_json(self) -> dict[str, int | None]:
        """The counts as JSON (``inputTokens`` ...), unknown ones left out."""
        names = {"cached_input": "cachedInputTokens"}
        return {
            names.get(key, f"{key}Tokens"): value
            for key, value in asdict(self).items()
            if value is not None
        }


class UsageRecorded(ConversationEvent):
    """A model call (a step) or a whole turn used these tokens, as the framework or app reported."""

    message_id: str | None = None
    """The assistant message the usage belongs to, when known."""
    model: str | None = None
    """The model that answered (``gpt-4o-2024-08-06``), when known."""
    step: int | None = None
    """The step (model call) of the turn, from 1; None: the whole turn."""
    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None
    reasoning_tokens: int | None = None
    cached_input_tokens: int | None = None
    source: str = "app"
    """Where it came from: one of ``SOURCES``."""

    def apply_to(self, state: Any) -> None:
        """Usage changes nothing in the conversation: it is read by the usage ledger."""

    @property
    def tokens(self) -> Tokens:
        """The counts as ``Tokens``."""
        return Tokens(
            self.input_tokens,
            self.output_tokens,
            self.total_tokens,
            self.reasoning_tokens,
            self.cached_input_tokens,
        )


def check_tokens(tokens: Tokens, *, model: str | None, step: int | None, source: str) -> None:
    """Refuse counts that are not non-negative integers, a bad step, model or source."""
    for name, value in asdict(tokens).items():
        if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
            raise InvalidInputError(f"{name} tokens must be an integer, not {type(value).__name__}")
        if value is not None and value < 0:
            raise InvalidInputError(f"{name} tokens must not be negative (got {value})")
    if all(value is None for value in asdict(tokens).values()):
        raise InvalidInputError("a usage needs at least one token count (input, output or total)")
    if step is not None and (not isinstance(step, int) or isinstance(step, bool) or step < 1):
        raise InvalidInputError(
            f"step must be a positive integer (the model call, from 1), not {step!r}"
        )
    check_name("model", model, optional=True)
    if source not in SOURCES:
        raise InvalidInputError(f"unknown usage source {source!r}; use one of {', '.join(SOURCES)}")


def usage_tokens(usage: Tokens | Mapping[str, Any]) -> Tokens:
    """``usage`` as ``Tokens``: itself, or the counts of an AI SDK usage object (InvalidInputError if none)."""
    if isinstance(usage, Tokens):
        return usage
    if isinstance(usage, Mapping):
        for key, value in usage.items():
            if not str(key).endswith("Tokens") or value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise InvalidInputError(
                    f"{key} must be a number of tokens, not {type(value).__name__}"
                )
            if not 0 <= value < float("inf"):
                raise InvalidInputError(f"{key} must not be negative (got {value})")
    tokens = tokens_of(usage)
    if tokens is None:
        raise InvalidInputError(
            "usage must be Tokens or an AI SDK usage object with inputTokens, outputTokens or totalTokens"
        )
    return tokens


def tokens_of(usage: object) -> Tokens | None:
    """The counts of an AI SDK ``LanguageModelUsage`` JSON object (None: not one)."""
    if not isinstance(usage, Mapping):
        return None
    input_details = usage.get("inputTokenDetails")
    output_details = usage.get("outputTokenDetails")
    tokens = Tokens(
        _count(usage.get("inputTokens")),
        _count(usage.get("outputTokens")),
        _count(usage.get("totalTokens")),
        _count(usage.get("reasoningTokens")) or _count(_get(output_details, "reasoningTokens")),
        _count(usage.get("cachedInputTokens")) or _count(_get(input_details, "cacheReadTokens")),
    )
    return None if tokens == Tokens() else tokens


def stream_usage(chunks: Iterable[Any]) -> tuple[Tokens, str | None] | None:
    """The usage and model the metadata of one stream's applied chunks state (None: no usage).

    The metadata of every ``start``, ``finish`` and ``message-metadata`` chunk
    is merged as the AI SDK merges it; its ``totalUsage`` (else ``usage``)
    is the stream's usage.
    """
    metadata: Any = None
    for chunk in chunks:
        if isinstance(chunk, Mapping) and chunk.get("type") in _METADATA_CHUNKS:
            try:
                metadata = merge_metadata(metadata, chunk.get("messageMetadata"))
            except MetadataMergeError:
                continue
    return metadata_usage(metadata)


def metadata_usage(metadata: Any) -> tuple[Tokens, str | None] | None:
    """The usage and model a message's metadata states (``totalUsage`` else ``usage``), or None."""
    if not isinstance(metadata, Mapping):
        return None
    tokens = tokens_of(metadata.get("totalUsage")) or tokens_of(metadata.get("usage"))
    if tokens is None:
        return None
    model = metadata.get("model", metadata.get("modelId"))
    return tokens, model if isinstance(model, str) and model else None


def pydantic_ai_usage(metadata: Any) -> tuple[Tokens, str | None] | None:
    """The usage and model of a Pydantic AI ``ModelResponse`` a message's metadata keeps, or None.

    The Pydantic AI store keeps each entry's JSON under ``pydanticAi.message``
    (``chatledger.adapters.frameworks.pydantic_ai_mapping``); a response's
    ``usage`` is one model call's (a step).
    """
    kept = _get(_get(metadata, PYDANTIC_AI_KEY), "message")
    if not isinstance(kept, Mapping) or kept.get("kind") != "response":
        return None
    usage = kept.get("usage")
    if not isinstance(usage, Mapping):
        return None
    reasoning = _count(usage.get("output_reasoning_tokens")) or _count(
        _get(usage.get("details"), "reasoning_tokens")
    )
    tokens = Tokens(
        _count(usage.get("input_tokens")),
        _count(usage.get("output_tokens")),
        None,
        reasoning or None,
        _count(usage.get("cache_read_tokens")) or None,
    )
    if not tokens.input and not tokens.output:
        return None  # a response with no usage reported (a test model, a replay)
    model = kept.get("model_name")
    return tokens, model if isinstance(model, str) and model else None


def _count(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(value) if value >= 0 and value == value and value != float("inf") else None


def _get(value: object, key: str) -> object:
    return value.get(key) if isinstance(value, Mapping) else None
