"""What a move between formats left behind: one ``Loss`` per thing dropped, gathered in a ``LossReport``.

An import or an export never drops anything silently: each message, part or
field the target cannot carry is named here, with where it was (the
message id and the part's index in it) and why. A report with no losses
means the move kept everything the conversation held.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["Loss", "LossReport"]


@dataclass(frozen=True)
class Loss:
    """One thing a format could not carry."""

    what: str
    """What was dropped: a part type (``reasoning``), ``approval``, ``metadata``, a field name..."""
    why: str
    """Why, in the format's terms."""
    message_id: str | None = None
    """The message it belonged to (the source message's id, or its index as ``#N``)."""
    part: int | None = None
    """Its part's index in that message (None: the whole message, or not a part)."""

    def __str__(self) -> str:
        where = self.message_id or "conversation"
        if self.part is not None:
            where += f" part {self.part}"
        return f"{where}: {self.what} dropped ({self.why})"

    def to_json(self) -> dict[str, Any]:
        """The loss as a JSON object (``what``, ``why``, ``messageId``, ``part``)."""
        return {"what": self.what, "why": self.why, "messageId": self.message_id, "part": self.part}


@dataclass
class LossReport:
    """What one import or export did: the format, how many messages moved, and every loss."""

    format: str
    direction: str
    """``import`` or ``export``."""
    messages: int = 0
    """Messages written (import: into chatledger; export: read from it)."""
    losses: list[Loss] = field(default_factory=list)

    @property
    def lossless(self) -> bool:
        """Whether nothing was dropped."""
        return not self.losses

    def add(
        self, what: str, why: str, message_id: str | None = None, part: int | None = None
    ) -> None:
        """Record one loss."""
        self.losses.append(Loss(what, why, message_id, part))

    def __str__(self) -> str:
        verb = "imported" if self.direction == "import" else "exported"
        head = f"{verb} {self.messages:,} message(s) as {self.format}"
        if self.lossless:
            return head + ": nothing dropped"
        lines = [head + f": {len(self.losses):,} thing(s) dropped"]
        lines += [f"  {loss}" for loss in self.losses]
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        """The report as a JSON object."""
        return {
            "format": self.format,
            "direction": self.direction,
            "messages": self.messages,
            "lossless": self.lossless,
            "losses": [loss.to_json() for loss in self.losses],
        }
