"""The conversation list read model: one summary row per conversation, searchable, paged by cursor.

A ``ConversationSummary`` is what a list of conversations shows: the title
(the one set, else the first user text), when it was created and last
changed, how many messages it holds, where its turn stands and how many tool
calls await approval. ``search_text`` is the text full-text search looks in:
the title and every text part of the current messages.

Pages are ordered newest change first; a ``cursor`` names the last row of a
page (its update time and id), and the next page starts strictly after it, so
paging never repeats a row (a conversation that changes while you page moves
to the front, where the pages already read were).
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from chatledger.domain.errors import InvalidInputError
from chatledger.domain.limits import check_moment

__all__ = [
    "MAX_LIMIT",
    "SEARCH_TEXT_LIMIT",
    "STATUSES",
    "TITLE_PREVIEW",
    "ConversationList",
    "ConversationSummary",
    "ListQuery",
    "decode_cursor",
    "encode_cursor",
    "search_terms",
    "search_text",
    "title_of",
]

STATUSES = ("idle", "streaming", "awaiting-approval", "awaiting-tool-output", "ready-to-continue")
"""Every status a conversation can be listed under."""

TITLE_PREVIEW = 80
"""Characters of the first user text kept as the title of an untitled conversation."""

MAX_LIMIT = 200
"""The most rows one page may hold."""

SEARCH_TEXT_LIMIT = 200_000
"""Characters of a conversation's text that search looks in (PostgreSQL's ``tsvector`` is capped at 1 MB)."""


@dataclass(frozen=True)
class ConversationSummary:
    """One conversation as the list shows it."""

    conversation_id: UUID
    tenant: str
    chat_id: str
    title: str
    """The title set, else the start of the first user text, else the chat id."""
    titled: bool
    """Whether someone set the title (rather than it being derived)."""
    created_at: datetime
    updated_at: datetime
    version: int
    message_count: int
    status: str
    pending_approvals: int
    metadata: dict[str, Any] | None = None
    search_text: str = ""
    """The title and message text full-text search looks in (not returned by lists)."""

    def to_json(self) -> dict[str, Any]:
        """The summary as the HTTP API shows it (camelCase keys, ISO times)."""
        return {
            "id": self.chat_id,
            "title": self.title,
            "titled": self.titled,
            "createdAt": self.created_at.isoformat(),
            "updatedAt": self.updated_at.isoformat(),
            "version": self.version,
            "messageCount": self.message_count,
            "status": self.status,
            "pendingApprovals": self.pending_approvals,
            "metadata": self.metadata,
        }


@dataclass(frozen=True)
class ListQuery:
    """Which conversations to list: always one tenant's, optionally filtered, one page at a time."""

    tenant: str
    query: str | None = None
    """Words that must all occur in the title or message text (prefixes match)."""
    status: str | None = None
    updated_before: datetime | None = None
    updated_after: datetime | None = None
    limit: int = 50
    cursor: str | None = None
    """The ``next_cursor`` of the previous page."""

    def __post_init__(self) -> None:
        for what, text in (("query", self.query), ("status", self.status), ("cursor", self.cursor)):
            if text is not None and not isinstance(text, str):
                raise InvalidInputError(f"{what} must be a string, not {type(text).__name__}")
        check_moment("updated_before", self.updated_before, optional=True)
        check_moment("updated_after", self.updated_after, optional=True)
        if self.status is not None and self.status not in STATUSES:
            raise InvalidInputError(
                f"unknown status {self.status!r}; the statuses are {', '.join(STATUSES)}"
            )
        if isinstance(self.limit, bool) or not isinstance(self.limit, int):
            raise InvalidInputError(f"limit must be an integer, not {type(self.limit).__name__}")
        if not 1 <= self.limit <= MAX_LIMIT:
            raise InvalidInputError(f"limit must be between 1 and {MAX_LIMIT}, not {self.limit}")
        if self.cursor is not None:
            decode_cursor(self.cursor)  # refuses a damaged cursor now, with a clear message


@dataclass(frozen=True)
class ConversationList:
    """One page of conversations."""

    conversations: list[ConversationSummary]
    next_cursor: str | None
    """Pass it as ``cursor`` for the next page; None on the last page."""


def title_of(messages: list[dict[str, Any]], title: str | None, chat_id: str) -> str:
    """The title a list shows: the one set, else the first user text (shortened), else the chat id."""
    if title:
        return title
    for message in messages:
        if message.get("role") != "user":
            continue
        text = " ".join(" ".join(_texts(message)).split())
        if text:
            return text if len(text) <= TITLE_PREVIEW else text[: TITLE_PREVIEW - 1] + "…"
    return chat_id


def search_text(messages: list[dict[str, Any]], title: str | None) -> str:
    """What full-text search looks in: the title set and every text part, one per line."""
    lines = [title] if title else []
    for message in messages:
        lines.extend(_texts(message))
    return "\n".join(lines)[:SEARCH_TEXT_LIMIT]


def _texts(message: dict[str, Any]) -> list[str]:
    return [
        part["text"]
        for part in message.get("parts") or ()
        if isinstance(part, dict)
        and part.get("type") == "text"
        and isinstance(part.get("text"), str)
    ]


_WORD = re.compile(r"\w+", re.UNICODE)


def search_terms(query: str | None) -> list[str]:
    """The words of a search query, lowercased (punctuation and operators are ignored)."""
    if not query:
        return []
    return [word.lower() for word in _WORD.findall(query)]


def encode_cursor(updated_at: str, conversation_id: UUID) -> str:
    """A cursor naming a row by its stored update time and id (opaque to clients)."""
    raw = f"{updated_at}|{conversation_id}".encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[str, str]:
    """The (update time, id) a cursor names; InvalidInputError for anything else."""
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        updated_at, _, key = base64.urlsafe_b64decode(padded.encode()).decode().partition("|")
        datetime.fromisoformat(updated_at)
        UUID(key)
    except (ValueError, binascii.Error, UnicodeError):
        raise InvalidInputError(
            f"cursor {cursor[:40]!r} is not one this store gave; pass the nextCursor of a page"
        ) from None
    return updated_at, key
