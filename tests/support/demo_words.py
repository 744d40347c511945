"""The first and last words the demo responder streams in a turn (so tests need not copy its text)."""

from __future__ import annotations

from typing import Any


def demo_words(chunks: list[dict[str, Any]]) -> tuple[str, str]:
    """The first and the last text delta of a scripted turn, stripped."""
    deltas = [chunk["delta"] for chunk in chunks if chunk.get("type") == "text-delta"]
    return deltas[0].strip(), deltas[-1].strip()
