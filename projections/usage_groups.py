"""What the usage ledger can be rolled up by: a module of its own, so ``chatledger --help`` names the
choices without loading the event models (``chatledger.projections.usage`` does the roll-up)."""

from __future__ import annotations

from typing import Final

__all__ = ["GROUPS"]

GROUPS: Final = ("conversation", "user", "tenant", "model", "day")
"""What usage can be rolled up by."""
