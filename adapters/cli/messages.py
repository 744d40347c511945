"""chatledger's errors told in the command line's terms (its flags and commands, not Python calls).

The library's messages name what a Python caller does next; a shell user
needs the flag or the command instead. Errors not listed here read the same
everywhere.
"""

from __future__ import annotations

from chatledger.domain.errors import (
    ConversationNotFoundError,
    StoreConfigurationError,
    UnansweredToolCallError,
)

__all__ = ["describe"]


def describe(error: Exception, url: str | None) -> str:
    """The one line the command line prints for ``error`` (``url``: the ``--url`` given, if any)."""
    from chatledger.adapters.store.existing import StoreNotFoundError

    if isinstance(error, StoreNotFoundError):
        return (
            f"no chatledger store at {error.display} ({error.why}); nothing was created. "
            "Name the store with --url (or CHATLEDGER_URL)"
        )
    if isinstance(error, ConversationNotFoundError):
        return (
            f"conversation {error.chat_id!r} (tenant {error.tenant!r}) is not in the store at "
            f"{_where(url)}; check the chat id and --tenant, or name another store with --url"
        )
    if isinstance(error, UnansweredToolCallError):
        listed = ", ".join(error.tool_call_ids)
        if error.approved and set(error.approved) >= set(error.tool_call_ids):
            return (
                f"the last assistant message has approved tool calls that have not run yet "
                f"({listed}): the turn is ready to continue, and the continuation runs them. "
                "Convert after it, or pass --omit-unanswered to leave them out"
            )
        return (
            f"the last assistant message has tool calls with no result yet ({listed}): the turn "
            "is paused. Answer them first ('chatledger status CHAT' shows how), or pass "
            "--omit-unanswered to leave them out"
        )
    return str(error)


def _where(url: str | None) -> str:
    from chatledger.adapters.store.existing import store_display

    try:
        return store_display(url)
    except StoreConfigurationError:
        return url or "the default URL"
