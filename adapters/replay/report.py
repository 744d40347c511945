"""What a replay found: the divergences per turn, a summary for people and JSON for machines."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from chatledger.domain.replay_diff import Divergence, TurnRecord

__all__ = ["DIVERGED", "ReplayReport"]

DIVERGED = 3
"""The exit status of a replay that diverges from its recording."""


@dataclass
class ReplayReport:
    """The outcome of replaying conversation ``chat_id`` into ``replay_chat_id``."""

    chat_id: str
    """The recorded conversation."""
    replay_chat_id: str
    """The conversation the replay was written to (open it next to the recording)."""
    tenant: str
    recorded: list[TurnRecord]
    replayed: list[TurnRecord]
    divergences: list[Divergence] = field(default_factory=list)
    served: int = 0
    """Recorded results and decisions given to the new run's matching calls."""

    @property
    def ok(self) -> bool:
        """No divergence: the new run did what the recording did."""
        return not self.divergences

    @property
    def exit_code(self) -> int:
        """For CI: 0 when the replay matches the recording, ``DIVERGED`` (3) when it diverges.

        (1 stays the command line's "chatledger error", 2 its bad usage.)
        """
        return 0 if self.ok else DIVERGED

    def kinds(self) -> list[tuple[int, str]]:
        """Each divergence as (turn, kind), in report order: what a test compares."""
        return [(item.turn, item.kind) for item in self.divergences]

    def summary(self) -> str:
        """The report for people: one line per divergence, then the totals."""
        lines = [
            f"replay of {self.chat_id!r} into {self.replay_chat_id!r}: "
            f"{len(self.recorded)} turn(s) recorded, {len(self.replayed)} replayed, "
            f"{self.served} recorded answer(s) served"
        ]
        for item in self.divergences:
            line = f"  turn {item.turn}: {item.kind}: {item.detail}"
            if item.recorded is not None or item.replayed is not None:
                line += f" (recorded {_short(item.recorded)}, replayed {_short(item.replayed)})"
            lines.append(line)
        if self.ok:
            lines.append("no divergence")
        else:
            counts = Counter(item.kind for item in self.divergences)
            kinds = ", ".join(f"{count} {kind}" for kind, count in sorted(counts.items()))
            lines.append(f"{len(self.divergences)} divergence(s): {kinds}")
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        """The report as JSON: what CI keeps as an artifact."""
        return {
            "chatId": self.chat_id,
            "replayChatId": self.replay_chat_id,
            "tenant": self.tenant,
            "ok": self.ok,
            "served": self.served,
            "divergences": [item.to_json() for item in self.divergences],
            "recorded": [turn.to_json() for turn in self.recorded],
            "replayed": [turn.to_json() for turn in self.replayed],
        }


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
