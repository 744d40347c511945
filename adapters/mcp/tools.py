"""What ``chatledger mcp`` answers, as plain functions of a store: ``StoreTools``.

Each method is one MCP tool's work, blocking (the server runs it in a worker
thread), reading through the store's public API: ``inbox`` (lists, search,
pending approvals), ``reads`` (transcripts, the audit), ``operations.verify``,
and ``respond_to_approval`` for decisions. Results are JSON objects in the
HTTP API's shapes (camelCase keys, ISO times). Errors are chatledger's own:
the server hands their message to the MCP client as the tool's error.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from chatledger.domain.convert import FORMATS
from chatledger.domain.errors import InvalidInputError
from chatledger.domain.timeline import KINDS

if TYPE_CHECKING:
    from chatledger.adapters.store import ConversationStore

__all__ = ["TRANSCRIPT_FORMATS", "Caller", "StoreTools"]

TRANSCRIPT_FORMATS: tuple[str, ...] = ("ui", *FORMATS)
"""``ui`` (the stored AI SDK UIMessages) and every model API format the store converts to."""


@dataclass(frozen=True)
class Caller:
    """Who calls a tool: the tenant it reads and writes, and the actor its decisions are recorded as."""

    tenant: str
    actor: str
    whole_store: bool = False
    """Whether it may verify the whole store (every tenant): the local operator over stdio."""


class StoreTools:
    """The MCP tools' work over one store (see the module docstring)."""

    def __init__(self, store: ConversationStore) -> None:
        self.store = store

    def list_conversations(
        self,
        caller: Caller,
        *,
        query: str | None = None,
        status: str | None = None,
        limit: int = 20,
        cursor: str | None = None,
    ) -> dict[str, Any]:
        """A page of conversations, most recently changed first (``query``: words to search for)."""
        page = self.store.inbox.list_conversations(
            tenant=caller.tenant,
            query=query or None,
            status=status or None,
            limit=limit,
            cursor=cursor or None,
        )
        return {
            "conversations": [row.to_json() for row in page.conversations],
            "nextCursor": page.next_cursor,
        }

    def transcript(
        self, caller: Caller, chat_id: str, *, format: str = "ui", unanswered: str = "omit"
    ) -> dict[str, Any]:
        """The conversation's messages as UIMessages (``ui``) or in a model API's format."""
        if format not in TRANSCRIPT_FORMATS:
            raise InvalidInputError(
                f"unknown format {format!r}: use one of {', '.join(TRANSCRIPT_FORMATS)}"
            )
        if unanswered not in ("omit", "refuse"):
            raise InvalidInputError(f"'unanswered' is omit or refuse, not {unanswered!r}")
        if format == "ui":
            return {
                "format": "ui",
                "messages": self.store.reads.messages(chat_id, tenant=caller.tenant),
            }
        policy: Literal["omit", "refuse"] = "omit" if unanswered == "omit" else "refuse"
        converted = self.store.reads.model_messages(
            chat_id,
            format,  # type: ignore[arg-type]  # checked against TRANSCRIPT_FORMATS above
            tenant=caller.tenant,
            unanswered=policy,
        )
        if isinstance(converted, dict):  # anthropic's {system, messages}
            return {"format": format, **converted}
        return {"format": format, "messages": converted}

    def audit(
        self,
        caller: Caller,
        chat_id: str,
        *,
        kinds: Sequence[str] | None = None,
        actor: str | None = None,
        after: int = 0,
        limit: int = 100,
    ) -> dict[str, Any]:
        """The conversation's audit timeline, one entry per event; ``next`` continues it."""
        unknown = sorted(set(kinds or ()) - set(KINDS))
        if unknown:
            raise InvalidInputError(f"unknown kind(s) {unknown}: the kinds are {', '.join(KINDS)}")
        entries = self.store.reads.history(
            chat_id, tenant=caller.tenant, kinds=kinds or None, actor=actor or None,
            after=after, limit=limit + 1,
        )  # fmt: skip
        shown = entries[:limit]
        following = shown[-1].position if len(entries) > len(shown) else None
        return {"entries": [entry.to_json() for entry in shown], "next": following}

    def pending_approvals(self, caller: Caller) -> dict[str, Any]:
        """Every tool call of the tenant awaiting approval, oldest first."""
        return {
            "approvals": [
                item.to_json() for item in self.store.inbox.pending_approvals(tenant=caller.tenant)
            ]
        }

    def decide(
        self, caller: Caller, chat_id: str, tool_call_id: str, *, approved: bool, reason: str | None
    ) -> dict[str, Any]:
        """Approve or deny a call awaiting approval, recorded as ``caller.actor``."""
        result = self.store.respond_to_approval(
            chat_id, tool_call_id=tool_call_id, approved=approved, reason=reason or None,
            actor=caller.actor, tenant=caller.tenant,
        )  # fmt: skip
        return {
            "toolCallId": result.tool_call_id,
            "state": result.state,
            "recorded": result.changed,
            "continuationRequested": result.continuation_requested,
            "actor": caller.actor,
        }

    def verify(self, caller: Caller, chat_id: str | None = None) -> dict[str, Any]:
        """Check the log's hash chains and what is derived from it: one conversation, or all."""
        if not chat_id and not caller.whole_store:
            raise InvalidInputError(
                "name the conversation to verify (chat_id): checking the whole store, every "
                "tenant's, is for the operator ('chatledger verify', or 'chatledger mcp' over stdio)"
            )
        report = self.store.operations.verify(chat_id or None, tenant=caller.tenant)
        return {
            "ok": report.ok,
            "events": report.events,
            "conversations": report.conversations,
            "problems": [str(problem) for problem in report.problems],
            "advice": report.advice,
        }
