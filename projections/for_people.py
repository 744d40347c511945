"""A conversation as a person reads it: the framework plug-ins' bookkeeping folded away.

The framework plug-ins keep their own records inside the conversation so they
can give back exactly what they stored: the OpenAI Agents plug-in keeps each
session item in a message's metadata (``openaiItem``) and a paused run's state
(``openaiRunState``), the Pydantic AI plug-in each entry's exact JSON
(``pydanticAi``) and a ``system`` message marking its record
(``data-pydantic-ai-record``). ``for_people`` leaves those out of what
``chatledger show`` and the conversation page draw, and says what it left out.
Only the view changes: the log, ``messages()``, ``model_messages()``, ``show
--json`` and the audit keep everything.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from chatledger.domain.owners import FRAMEWORK_MARKS, RECORD_MARKER_PARTS

__all__ = ["ForPeople", "for_people", "is_record_marker"]


@dataclass(frozen=True)
class ForPeople:
    """The messages to show, and what of the frameworks' bookkeeping they leave out."""

    messages: list[dict[str, Any]]
    """The messages, record markers left out, the bookkeeping metadata keys dropped."""
    folded_keys: tuple[str, ...] = ()
    """The bookkeeping metadata keys dropped from at least one message (sorted)."""
    folded_markers: int = 0
    """How many record-marker messages were left out."""

    @property
    def note(self) -> str | None:
        """One line naming what was left out, or None when nothing was."""
        shown = []
        if self.folded_keys:
            shown.append(f"metadata {', '.join(self.folded_keys)}")
        if self.folded_markers:
            plural = "" if self.folded_markers == 1 else "s"
            shown.append(f"{self.folded_markers} record marker{plural}")
        return f"framework bookkeeping not shown: {'; '.join(shown)}" if shown else None


def is_record_marker(message: Mapping[str, Any]) -> bool:
    """Whether ``message`` is a framework's record marker: a ``system`` message of marker parts only."""
    parts = message.get("parts") or ()
    return (
        message.get("role") == "system"
        and bool(parts)
        and all(isinstance(p, Mapping) and p.get("type") in RECORD_MARKER_PARTS for p in parts)
    )


def for_people(messages: Sequence[Mapping[str, Any]]) -> ForPeople:
    """``messages`` as a person reads them; everything else unchanged (the input is not changed).

    Record-marker messages are left out; the bookkeeping metadata keys are
    dropped (and ``metadata`` too once nothing else is left in it). They are
    counted rather than shown: every message of a framework's conversation
    carries them, so a note on each would bury the conversation again.
    """
    shown: list[dict[str, Any]] = []
    keys: set[str] = set()
    markers = 0
    for message in messages:
        if is_record_marker(message):
            markers += 1
            continue
        copied = dict(message)  # parts are shared, never changed
        metadata = copied.get("metadata")
        if isinstance(metadata, dict):
            found = [key for key in FRAMEWORK_MARKS if key in metadata]
            if found:
                keys.update(found)
                kept = {k: v for k, v in metadata.items() if k not in FRAMEWORK_MARKS}
                if kept:
                    copied["metadata"] = kept
                else:
                    del copied["metadata"]
        shown.append(copied)
    return ForPeople(shown, tuple(sorted(keys)), markers)
