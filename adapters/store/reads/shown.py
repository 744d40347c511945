"""The rule every view follows: redacted content is hidden, now and at every past version.

``Reader`` applies it to what it returns; the use cases that fold a conversation
themselves (a turn, a transaction, verify, the OTel export) apply it here, so
no other module builds ``Masks`` of its own.
"""

from __future__ import annotations

from typing import Any

from chatledger.domain.conversation import ConversationState
from chatledger.domain.redaction import Masks

__all__ = ["masks_of", "shown", "shown_messages"]


def masks_of(state: ConversationState) -> Masks:
    """What the conversation's redactions hide, for whatever leaves the store from it."""
    return Masks(state.redactions)


def shown(state: ConversationState) -> ConversationState:
    """The conversation as every view shows it: redacted content replaced (a copy when it has any)."""
    return masks_of(state).state(state)


def shown_messages(
    state: ConversationState, messages: list[dict[str, Any]] | None = None
) -> list[dict[str, Any]]:
    """``messages`` (default: the state's) as every view shows them, under ``state``'s redactions."""
    return masks_of(state).message_list(state.messages if messages is None else messages)
