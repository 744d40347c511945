"""The one stream that may be open on a conversation: its fold, its positions, and the plain-delta fast path."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from chatledger.domain.fold import FoldRules, StreamFold, ToolResolver
from chatledger.domain.limits import Limits

__all__ = ["OpenStream"]


@dataclass
class OpenStream:
    """The one stream that may be open on a conversation, and its fold."""

    stream_id: str
    message_index: int
    continuation: bool
    trigger: str
    actor: str
    fold: StreamFold
    next_seq: int = 0
    """Position the next received chunk gets (refused chunks count too)."""
    message_bytes: int = 0
    """Size of the message so far, as counted by ``limits.chunk_cost``."""
    step_chunks: list[tuple[int, str | None]] = field(default_factory=list)
    """(position, toolCallId) of the chunks applied since the step began (for ``reset-step``)."""
    retractions: dict[int, list[int]] = field(default_factory=dict)
    """Position of each ``reset-step`` not yet recorded -> positions of the chunks it retracted."""
    renewed_at: datetime | None = None
    """Time of the stream's last event (its open, a batch, a renewal): its lease runs from here."""
    lease_seconds: float | None = None
    """The lease its writer asked for when it opened (None: opened before leases were recorded)."""

    @property
    def interrupted(self) -> bool:
        """Whether the model's stream said it ended without completing (``finishReason: "interrupted"``)."""
        return self.fold.finish_reason == "interrupted"

    def to_json(self) -> dict[str, Any]:
        """The stream as JSON, for snapshots."""
        return {
            "streamId": self.stream_id,
            "messageIndex": self.message_index,
            "continuation": self.continuation,
            "trigger": self.trigger,
            "actor": self.actor,
            "nextSeq": self.next_seq,
            "messageBytes": self.message_bytes,
            "fold": self.fold.state(),
            **({"stepChunks": self.step_chunks} if self.step_chunks else {}),
            **({"renewedAt": self.renewed_at.isoformat()} if self.renewed_at else {}),
            **({"leaseSeconds": self.lease_seconds} if self.lease_seconds is not None else {}),
        }

    @classmethod
    def from_json(
        cls,
        data: Mapping[str, Any],
        message: dict[str, Any],
        *,
        dialect: FoldRules,
        resolve_tool_part: ToolResolver,
    ) -> OpenStream:
        """Rebuild a stream from ``to_json()`` output and the message it writes."""
        fold = StreamFold.restore(
            message, data["fold"], dialect=dialect, resolve_tool_part=resolve_tool_part
        )
        renewed = data.get("renewedAt")
        return cls(
            data["streamId"],
            data["messageIndex"],
            data["continuation"],
            data["trigger"],
            data["actor"],
            fold,
            data["nextSeq"],
            data.get("messageBytes", 0),
            [(at, call) for at, call in data.get("stepChunks", [])],
            renewed_at=datetime.fromisoformat(renewed) if renewed else None,
            lease_seconds=data.get("leaseSeconds"),
        )

    def receive_plain_delta(self, chunk: Any, limits: Limits) -> int | None:
        """The common chunk in one step: a bare text or reasoning delta of an open part.

        Most of a stream is such chunks. This checks, counts and folds one with
        the same result as the general path (``Limits.chunk_cost``, ``check_chunk``,
        the message size check, ``ConversationState.receive_chunk``) and returns
        its position. For anything else, including every chunk the general path
        would refuse, it returns None and changes nothing: the caller then takes
        the general path, which decides.
        """
        if type(chunk) is not dict or len(chunk) != 3:
            return None
        kind = chunk.get("type")
        if type(kind) is not str:
            return None
        fold = self.fold
        if kind == "text-delta":
            active = fold.active_text
        elif kind == "reasoning-delta":
            active = fold.active_reasoning
        else:
            return None
        delta = chunk.get("delta")
        key = chunk.get("id")
        if type(delta) is not str or type(key) is not str:
            return None
        if not delta.isascii() and _SURROGATE.search(delta) is not None:
            return None  # no UTF-8 form: refused there (an open part's id always has one)
        size = len(delta)
        if (
            _DELTA_JSON + _MOST_BYTES * (size + len(key)) > limits.max_chunk_bytes
            or self.message_bytes + size > limits.max_message_bytes
        ):
            return None  # near a limit: the general path measures it exactly
        # (``fold.retracted`` is empty here: ``receive_chunk`` clears it where it is set.)
        index = active.get(key)
        if index is None:
            return None  # no open part of that id: refused there
        position = self.next_seq
        self.next_seq = position + 1
        fold.message["parts"][index]["text"] += delta
        self.step_chunks.append((position, None))
        self.message_bytes += size
        return position


_DELTA_JSON = len('{"type":"reasoning-delta","id":"","delta":""}')
"""Bytes of a bare delta chunk's JSON besides its id and text."""
_MOST_BYTES = 6
"""Most bytes one character takes in UTF-8 JSON (a control character is ``\\u00XX``)."""
_SURROGATE = re.compile("[\ud800-\udfff]")
"""A lone UTF-16 surrogate (a str holds no pairs): a string with one has no UTF-8 form."""
