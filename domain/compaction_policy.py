"""When to compact a conversation by itself: its model input's size, and which range to summarize.

A ``CompactionPolicy`` says: when the model input (in one format) passes
``max_tokens`` as counted by ``tokenizer``, summarize everything but the last
``keep_last`` messages with ``summarize`` (the app's: chatledger writes no
summaries). ``estimate_tokens`` is the default tokenizer (about four
characters a token); plug a real one (``tiktoken``, a provider's counter) as a
``str -> int`` callable over the model input's JSON. Stores have no policy by
default: nothing is compacted unless an app asks. The store-side run is
``chatledger.adapters.store.compaction_policy``. Pure: no I/O.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from chatledger.domain.compaction import effective_compactions
from chatledger.domain.convert import FORMATS, Format
from chatledger.domain.errors import InvalidInputError

__all__ = ["CompactionPolicy", "Summarizer", "Tokenizer", "estimate_tokens", "range_to_compact"]

Tokenizer = Callable[[str], int]
"""Counts the tokens of a text (the model input as JSON)."""
Summarizer = Callable[[list[dict[str, Any]]], str]
"""Writes the summary of UIMessages (as the model reads them: earlier summaries included)."""


def estimate_tokens(text: str) -> int:
    """About four characters a token: an estimate, no tokenizer needed."""
    return math.ceil(len(text) / 4)


def count_tokens(model_input: Any, tokenizer: Tokenizer) -> int:
    """The tokens of a model input (any format) by ``tokenizer``, over its JSON."""
    return int(tokenizer(json.dumps(model_input, ensure_ascii=False, separators=(",", ":"))))


@dataclass(frozen=True)
class CompactionPolicy:
    """Compact when the model input passes ``max_tokens``, keeping the last ``keep_last`` messages."""

    max_tokens: int
    """The model input's size (by ``tokenizer``) above which the conversation is compacted."""
    summarize: Summarizer
    """The app's summarizer (``chatledger.adapters.store.compaction_policy.summarizer_of``
    makes one of a responder)."""
    tokenizer: Tokenizer = estimate_tokens
    keep_last: int = 2
    """Messages at the end never compacted (at least 1: the latest is always left out)."""
    format: Format = "ai-sdk"
    """The model input format whose size counts."""
    actor: str = "system:compaction"
    """Who the compaction events name."""

    def __post_init__(self) -> None:
        if (
            isinstance(self.max_tokens, bool)
            or not isinstance(self.max_tokens, int)
            or self.max_tokens < 1
        ):
            raise InvalidInputError(
                f"max_tokens must be a positive whole number, not {self.max_tokens!r}"
            )
        if (
            isinstance(self.keep_last, bool)
            or not isinstance(self.keep_last, int)
            or self.keep_last < 1
        ):
            raise InvalidInputError(
                f"keep_last must be a whole number >= 1, not {self.keep_last!r}"
            )
        if self.format not in FORMATS:
            raise InvalidInputError(
                f"unknown model message format {self.format!r}; use one of {', '.join(FORMATS)}"
            )
        if not callable(self.summarize) or not callable(self.tokenizer):
            raise InvalidInputError("summarize and tokenizer must be callables")


def range_to_compact(
    messages: Sequence[dict[str, Any]], compactions: Sequence[dict[str, Any]], keep_last: int
) -> tuple[int, int] | None:
    """``(first, last)`` indexes of the messages to summarize, or None when there is nothing new.

    From the first message to the last before the ``keep_last`` kept ones; a
    range that would cut through an earlier compaction stops before it, and a
    range an earlier compaction already covers exactly gives None.
    """
    end = len(messages) - 1 - keep_last
    for start, stop, _ in effective_compactions(messages, compactions):
        if start <= end < stop:
            end = start - 1
    if end < 0:
        return None
    if any(
        start == 0 and stop == end
        for start, stop, _ in effective_compactions(messages, compactions)
    ):
        return None
    return 0, end
