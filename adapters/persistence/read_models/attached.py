"""Attachments in the read models: a message's inline file kept as a reference to its blob.

The messages and the audit timeline hold what the events hold; without this
each image or PDF would be stored three times (the event, the message row,
the timeline entry). A read model refers to a blob only when the blob is
already in ``chatledger_blobs`` (put there with the event that carried it);
a value whose blob is missing stays inline. So a read model never writes a
blob: a projector lagging behind an erasure cannot bring an erased file back.
Reading puts the values back (``restore``).
"""

from __future__ import annotations

import json
from typing import Any
from uuid import UUID

from chatledger.domain.attachments import BLOBS_KEY, lift, restore, worth_a_look

__all__ = ["ReadModelBlobs"]


class ReadModelBlobs:
    """Lifts read-model JSON values onto the blobs their events stored, and restores them."""

    def __init__(self, blobs: Any = None, policy: Any = None) -> None:
        self.blobs = blobs
        """The store's ``BlobStore`` (None: read models keep every value inline)."""
        self.policy = policy
        """The log's lift policy (``LiftPolicy``)."""

    def lift(
        self, c: Any, conversation: str, value: dict[str, Any], text: str | None = None
    ) -> dict[str, Any]:
        """``value`` with its large values referenced, if all their blobs are stored; else ``value``.

        ``text``: the value's JSON text, if at hand (a cheap scan skips most values).
        """
        if self.blobs is None or self.policy is None or not self.policy.enabled:
            return value
        if text is not None and not worth_a_look(text, self.policy):
            return value
        lifted = lift(value, self.policy)
        if not lifted.blobs:
            return value
        stored = self.blobs.present(c, UUID(conversation), [blob.digest for blob in lifted.blobs])
        if len(stored) < len(lifted.blobs):
            return value
        return lifted.state

    def restore(self, conversation: str | UUID, value: Any) -> Any:
        """``value`` (a JSON object) with its referenced values put back."""
        if not isinstance(value, dict) or BLOBS_KEY not in value or self.blobs is None:
            return value
        key = conversation if isinstance(conversation, UUID) else UUID(str(conversation))
        return restore(value, lambda digest: self.blobs.get(key, digest))

    def restore_text(self, conversation: str | UUID, text: str) -> str:
        """A JSON text with its referenced values put back (unchanged when it holds none)."""
        if f'"{BLOBS_KEY}"' not in text or self.blobs is None:
            return text
        # ASCII-escaped as the read models write JSON: lone surrogates survive as escapes.
        return json.dumps(self.restore(conversation, json.loads(text)), separators=(",", ":"))
