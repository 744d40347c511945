"""Standing approval grants: a human's "don't ask again", and whether a live grant covers a call.

A grant is given by a person who approves a call. Its **scope** says what
it covers, across the tenant's conversations unless it names one:

- ``input``: this tool with exactly this input (the same JSON value; key
  order aside, ``1`` and ``1.0`` differ). Never another input. The grant
  keeps only the input's SHA-256 digest (``input_digest``), never the input:
  nothing of a conversation's tool input outlives its erasure in the ledger.
- ``tool``: this tool, whatever the input (the grant says so).
- ``conversation``: every call in this conversation (of this tool, if it names one).

A grant is live from when it is given until it expires (``expires_at``) or
is revoked. Pure: the clock is passed in; the events that record grants are
in ``chatledger.domain.grant_ledger``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from chatledger.domain.errors import ChatLedgerError, InvalidInputError
from chatledger.domain.replay_diff import same_input

__all__ = [
    "ERASED",
    "RECENT",
    "SCOPES",
    "AutomaticApproval",
    "Grant",
    "GrantNotFoundError",
    "automatic_approvals",
    "automatic_reason",
    "check_grant",
    "covering",
    "expires_at",
    "input_digest",
]

ERASED = "(erased)"
"""What stands for an erased conversation, call or approval in a grant's uses."""
SCOPES = ("input", "tool", "conversation")
RECENT = 10
"""How many of a grant's last uses it lists (``Grant.recent``); ``uses`` counts them all."""
"""What a grant may cover (see the module's docstring)."""


class GrantNotFoundError(ChatLedgerError):
    """No grant of the tenant has that id."""

    def __init__(self, grant_id: str) -> None:
        self.grant_id = grant_id
        super().__init__(
            f"no grant {grant_id[:80]!r} in this tenant; list them with 'chatledger grants' "
            "(or GET /api/grants)"
        )


@dataclass(frozen=True)
class Grant:
    """One standing approval, as it was given, and how it ended (if it has)."""

    grant_id: str
    tenant: str
    scope: str
    tool_name: str | None
    """The tool it covers (``conversation`` scope: None covers every tool)."""
    input: Any
    """``input`` scope, given before grants kept digests: the one input it covers; else None."""
    chat_id: str | None
    """The one conversation it covers (required for ``conversation`` scope); None: all of the tenant's."""
    actor: str
    """Who gave it."""
    reason: str | None
    granted_at: datetime
    expires_at: datetime | None = None
    """None: until revoked."""
    revoked_at: datetime | None = None
    revoked_by: str | None = None
    revoke_reason: str | None = None
    expired_at: datetime | None = None
    """When its expiry was recorded (an event, once noticed)."""
    uses: int = 0
    """Calls it approved."""
    recent: tuple[tuple[str, str, datetime], ...] = ()
    """The last calls it approved (at most ``RECENT``), oldest first: (chat id, tool call id, when)."""
    input_digest: str | None = None
    """``input`` scope: the SHA-256 digest of the one input it covers (``input_digest()``)."""
    given_in: str | None = None
    """The conversation of the approval it was given with (None: given without one, or erased)."""

    def is_live(self, now: datetime) -> bool:
        """Given, not revoked, not expired at ``now``."""
        if self.revoked_at is not None or self.expired_at is not None:
            return False
        return self.expires_at is None or now < self.expires_at

    def is_due(self, now: datetime) -> bool:
        """Past its expiry, with the expiry not yet recorded."""
        return (
            self.revoked_at is None
            and self.expired_at is None
            and self.expires_at is not None
            and now >= self.expires_at
        )

    def covers(self, chat_id: str, tool_name: str, input: Any, now: datetime) -> bool:
        """Whether this grant, live at ``now``, approves ``tool_name(input)`` in ``chat_id``."""
        if not self.is_live(now):
            return False
        if self.chat_id is not None and self.chat_id != chat_id:
            return False
        if self.scope == "conversation":
            return self.tool_name is None or self.tool_name == tool_name
        if self.tool_name != tool_name:
            return False
        if self.scope == "tool":
            return True
        if self.scope != "input":
            return False
        if self.input_digest is not None:
            return self.input_digest == input_digest(input)
        return same_input(self.input, input)

    def status(self, now: datetime) -> str:
        """``live``, ``revoked`` or ``expired`` at ``now``."""
        if self.revoked_at is not None:
            return "revoked"
        if self.expired_at is not None or not self.is_live(now):
            return "expired"
        return "live"

    def to_json(self, now: datetime) -> dict[str, Any]:
        """The grant as JSON (camelCase), with its status at ``now``."""
        return {
            "grantId": self.grant_id,
            "tenant": self.tenant,
            "scope": self.scope,
            "toolName": self.tool_name,
            "input": self.input,
            "inputDigest": self.input_digest,
            "givenIn": self.given_in,
            "chatId": self.chat_id,
            "actor": self.actor,
            "reason": self.reason,
            "grantedAt": _iso(self.granted_at),
            "expiresAt": _iso(self.expires_at),
            "revokedAt": _iso(self.revoked_at),
            "revokedBy": self.revoked_by,
            "revokeReason": self.revoke_reason,
            "expiredAt": _iso(self.expired_at),
            "uses": self.uses,
            "recentUses": [
                {"chatId": chat_id, "toolCallId": call_id, "at": at.isoformat()}
                for chat_id, call_id, at in self.recent
            ],
            "status": self.status(now),
        }


def input_digest(value: Any) -> str:
    """``sha256:<hex>`` of a tool input's canonical JSON: equal exactly when the inputs are the same value.

    Keys sorted, no spaces, text as is; ``1`` and ``1.0`` (and ``1`` and
    ``true``) differ, as ``same_input`` says. Only the digest is kept, so the
    ledger holds nothing readable of the input (a guessed input can still be
    checked against it).
    """
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def automatic_reason(grant: Grant) -> str:
    """The reason recorded with an approval a grant gave: the grant, who gave it, and why."""
    why = f": {grant.reason}" if grant.reason else ""
    return f"approved automatically by standing grant {grant.grant_id} given by {grant.actor}{why}"


@dataclass(frozen=True)
class AutomaticApproval:
    """A call a standing grant approved (the inbox's "approved by a grant" list)."""

    chat_id: str
    tool_call_id: str
    tool_name: str | None
    """The grant's tool (None: a conversation grant for any tool)."""
    grant_id: str
    given_by: str
    """Who gave the grant."""
    reason: str
    """The reason recorded with the approval (``automatic_reason``)."""
    at: datetime

    @property
    def actor(self) -> str:
        """The approval's actor in the audit: ``grant:<id>``."""
        return f"grant:{self.grant_id}"

    def to_json(self) -> dict[str, Any]:
        """As JSON (camelCase)."""
        return {
            "chatId": self.chat_id,
            "toolCallId": self.tool_call_id,
            "toolName": self.tool_name,
            "grantId": self.grant_id,
            "actor": self.actor,
            "reason": self.reason,
            "grantedBy": self.given_by,
            "at": self.at.isoformat(),
        }


def automatic_approvals(grants: list[Grant], limit: int = RECENT) -> list[AutomaticApproval]:
    """The last ``limit`` calls the grants approved, newest first (each grant lists its last ``RECENT``)."""
    found = [
        AutomaticApproval(chat, call, g.tool_name, g.grant_id, g.actor, automatic_reason(g), at)
        for g in grants
        for chat, call, at in g.recent
        if chat != ERASED
    ]
    found.sort(key=lambda a: a.at, reverse=True)
    return found[: max(limit, 0)]


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def covering(
    grants: list[Grant], chat_id: str, tool_name: str, input: Any, now: datetime
) -> Grant | None:
    """The first grant (oldest given) live at ``now`` that covers the call; None: a person must answer."""
    return next((g for g in grants if g.covers(chat_id, tool_name, input, now)), None)


_LONGEST_SECONDS = 100 * 365 * 86_400
"""The longest time a grant may be given for (past it a date cannot be written)."""


def expires_at(now: datetime, seconds: float | None) -> datetime | None:
    """When a grant given at ``now`` for ``seconds`` ends (None: until revoked); refuses a non-positive time."""
    if seconds is None:
        return None
    if (
        isinstance(seconds, bool)
        or not isinstance(seconds, int | float)
        or not 0 < seconds <= _LONGEST_SECONDS
    ):
        raise InvalidInputError(
            f"a grant's duration must be a positive number of seconds (at most "
            f"{_LONGEST_SECONDS}, 100 years), got {seconds!r}; "
            "leave it out for a grant that lasts until revoked"
        )
    return now + timedelta(seconds=seconds)


def check_grant(scope: str, tool_name: str | None, chat_id: str | None) -> None:
    """Refuse a grant that does not say what it covers."""
    if scope not in SCOPES:
        raise InvalidInputError(
            f"a grant's scope must be one of {', '.join(SCOPES)}, got {scope!r}"
        )
    if scope in ("input", "tool") and not tool_name:
        raise InvalidInputError(f"a grant of scope {scope!r} must name its tool")
    if scope == "conversation" and not chat_id:
        raise InvalidInputError("a grant of scope 'conversation' must name its conversation")
