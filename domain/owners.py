"""Who continues a conversation: its owner, and who may claim its continuation requests.

Any runtime may write a conversation, but only one continues it: its
**owner**, the runtime that answers it. The owner is recorded when the
conversation starts (``ConversationStarted.owner``) and changed only by an
audited ``OwnerSet`` event. Owner names are free strings, by convention:

- ``any``: any continuation worker (``chatledger serve`` or ``chatledger
  worker``, whatever its responder) may continue it. A conversation started
  from the library without an owner gets it: the behaviour from before owners.
- ``none``: nobody continues it on its own; its requests wait, visible.
- ``openai-agents``, ``pydantic-ai``: the framework plug-ins, which resume
  their own runs and retire the request (``ContinuationRetired``).
- ``responder:<actor>``: a ``serve``/``worker`` responder (e.g.
  ``responder:agent:ops-assistant`` for the demo), or any name an external
  runtime gives itself (``external:node-chat``).

A conversation recorded before owners existed has no recorded owner: its
owner is then decided from what it holds (``owner_of``): one with a framework
plug-in's bookkeeping in its messages belongs to that framework, any other to
``any`` (what every worker did before).

A request whose owner has not claimed it within a limit (``claim_limit_seconds``,
default ``OWNER_CLAIM_LIMIT_SECONDS``) is **overdue**: reported by ``status``, the
inbox and ``/metrics`` so a person sees that its owner is gone, and never handed
to another runtime on its own (``chatledger owner CHAT NAME`` hands it over).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final

from chatledger.domain.errors import InvalidInputError
from chatledger.domain.limits import check_name

if TYPE_CHECKING:
    from chatledger.domain.conversation import ConversationState

__all__ = [
    "ANY",
    "FRAMEWORK_MARKS",
    "NOBODY",
    "OPENAI_AGENTS",
    "OWNER_CLAIM_LIMIT_SECONDS",
    "PYDANTIC_AI",
    "PYDANTIC_AI_RECORD_PART",
    "RECORD_MARKER_PARTS",
    "ClaimWatch",
    "check_claim_limit",
    "check_owner",
    "is_overdue",
    "may_claim",
    "owner_of",
    "responder_owner",
    "wall_clock_watch",
]

ANY: Final = "any"
"""Any continuation worker may continue the conversation."""
NOBODY: Final = "none"
"""Nobody continues the conversation on its own."""
OPENAI_AGENTS: Final = "openai-agents"
"""The OpenAI Agents plug-in (``ChatLedgerSession``)."""
PYDANTIC_AI: Final = "pydantic-ai"
"""The Pydantic AI plug-in (``ChatLedgerConversationStore``)."""

OWNER_CLAIM_LIMIT_SECONDS: Final = 300.0
"""How long a continuation request waits for its owner before it is reported overdue."""

ClaimWatch = Callable[[], tuple[datetime, float]]
"""``() -> (now, claim limit in seconds)``: what a store tells overdue requests by (its clock)."""


def wall_clock_watch() -> tuple[datetime, float]:
    """Now by the wall clock, and the default claim limit."""
    return datetime.now(UTC), OWNER_CLAIM_LIMIT_SECONDS


FRAMEWORK_MARKS: Final[dict[str, str]] = {
    "openaiItem": OPENAI_AGENTS,
    "openaiRunState": OPENAI_AGENTS,
    "pydanticAi": PYDANTIC_AI,
}
"""Message metadata keys a framework plug-in keeps its bookkeeping under, and that framework."""

PYDANTIC_AI_RECORD_PART: Final = "data-pydantic-ai-record"
"""The part of the ``system`` message marking the Pydantic AI plug-in's conversation record."""

RECORD_MARKER_PARTS: Final[dict[str, str]] = {PYDANTIC_AI_RECORD_PART: PYDANTIC_AI}
"""Part types of the ``system`` messages a framework plug-in writes only as markers of its own
records (Pydantic AI's conversation record), and that framework."""


def check_owner(owner: Any) -> str:
    """An owner name as given, or InvalidInputError naming what is wrong."""
    if not isinstance(owner, str) or not owner.strip():
        raise InvalidInputError(
            f"an owner must be a non-empty name such as {ANY!r}, {NOBODY!r}, {OPENAI_AGENTS!r} "
            f"or 'responder:agent:my-bot', not {owner!r}"[:300]
        )
    check_name("owner", owner)
    return owner


def owner_of(state: ConversationState) -> str:
    """The conversation's owner: the one recorded, else the default of an older conversation."""
    if state.owner is not None:
        return state.owner
    for message in state.messages:
        metadata = message.get("metadata")
        if isinstance(metadata, dict):
            for key, framework in FRAMEWORK_MARKS.items():
                if key in metadata:
                    return framework
    return ANY


def may_claim(owner: str, claimer: str | None) -> bool:
    """Whether a worker of ``claimer`` (None: a worker that names no owner) may continue for ``owner``.

    Only the owner continues; ``any`` lets every worker; ``none`` lets nobody.
    """
    if owner == NOBODY:
        return False
    return owner == ANY or (claimer is not None and claimer == owner)


def responder_owner(actor: str) -> str:
    """The owner name of a ``serve``/``worker`` responder whose streams are written as ``actor``."""
    return f"responder:{actor}"


def check_claim_limit(seconds: Any, where: str = "owner_claim_limit_seconds") -> float:
    """A claim limit in seconds (a number >= 0), or InvalidInputError naming ``where``."""
    if isinstance(seconds, bool) or not isinstance(seconds, int | float) or not seconds >= 0:
        raise InvalidInputError(
            f"{where} must be a number of seconds >= 0, e.g. 300, not {seconds!r}"[:300]
        )
    return float(seconds)


def is_overdue(
    requested_at: datetime,
    now: datetime,
    limit_seconds: float,
    lease_until: datetime | None = None,
) -> bool:
    """Whether a pending request has waited longer than ``limit_seconds`` with no live claim.

    A claim whose lease has run out counts as none: the worker that took it is gone.
    """
    if lease_until is not None and lease_until > now:
        return False
    return (now - requested_at).total_seconds() > limit_seconds
