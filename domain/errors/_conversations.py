"""Errors about a whole conversation: missing, already there, erased, raced, or its log damaged."""

from __future__ import annotations

from chatledger.domain.errors._base import ChatLedgerError

__all__ = [
    "ConcurrentWriteError",
    "ConversationErasedError",
    "ConversationExistsError",
    "ConversationNotFoundError",
    "LogTamperedError",
]


class ConversationNotFoundError(ChatLedgerError):
    """No conversation with this id exists for this tenant."""

    def __init__(self, tenant: str, chat_id: str) -> None:
        self.tenant = tenant
        self.chat_id = chat_id
        super().__init__(
            f"conversation {chat_id!r} (tenant {tenant!r}) does not exist; "
            "start it first, or check the chat id and the tenant"
        )


class ConversationExistsError(ChatLedgerError):
    """A conversation with this id already exists for this tenant."""

    def __init__(self, tenant: str, chat_id: str) -> None:
        self.tenant = tenant
        self.chat_id = chat_id
        super().__init__(f"conversation {chat_id!r} (tenant {tenant!r}) already exists")


class ConversationErasedError(ChatLedgerError):
    """The conversation was erased: its content is gone for good; only its audit timeline remains.

    ``erased_at``, ``actor`` and ``reason`` say when, by whom and why, when
    known. Its audit timeline (kinds, actors, times) is still readable with
    ``history``; nothing else of it is.
    """

    def __init__(
        self,
        tenant: str | None,
        chat_id: str | None,
        *,
        erased_at: str | None = None,
        actor: str | None = None,
        reason: str | None = None,
    ) -> None:
        self.tenant = tenant
        self.chat_id = chat_id
        self.erased_at = erased_at
        self.actor = actor
        self.reason = reason
        who = f"conversation {chat_id!r} (tenant {tenant!r})" if chat_id else "the conversation"
        when = f" on {erased_at}" if erased_at else ""
        by = f" by {actor!r}" if actor else ""
        why = f" ({reason})" if reason else ""
        super().__init__(
            f"{who} was erased{when}{by}{why}: its content is gone for good; "
            "only its audit timeline (kinds, actors, times) remains"
        )


class ConcurrentWriteError(ChatLedgerError):
    """Another writer appended to the conversation first; reload and retry."""

    def __init__(self, chat_id: str) -> None:
        self.chat_id = chat_id
        super().__init__(
            f"conversation {chat_id!r} was changed by another writer at the same time; "
            "the action was not recorded: reload and retry it"
        )


class LogTamperedError(ChatLedgerError):
    """The event log's hash chain or seals fail: building from it would make the damage permanent.

    ``problems`` lists each damaged conversation's first bad event. Restore
    the database from a backup, or (knowingly) pass ``accept_broken_chain=True``
    / ``--accept-broken-chain``, which records that it was done.
    """

    def __init__(self, action: str, problems: list[str]) -> None:
        self.action = action
        self.problems = problems
        shown = "; ".join(problems[:3]) + (
            f"; and {len(problems) - 3} more" if len(problems) > 3 else ""
        )
        super().__init__(
            f"refusing to {action}: the event log fails its integrity check ({shown}); restore "
            "the database from a backup, or pass --accept-broken-chain (accept_broken_chain=True) "
            "to go on anyway (it is recorded)"
        )
