"""The MCP server over a store: ``build_server`` registers ``StoreTools`` with the official SDK's ``MCPServer``.

Tools (each runs in a worker thread; errors reach the client as the tool's
error, with chatledger's message):

* ``list_conversations`` / ``search_conversations``: the conversation list,
  by status or by words in titles and message text;
* ``read_transcript``: a conversation as UIMessages (``ui``) or in a model
  API's format (``ai-sdk``, ``anthropic``, ``openai-chat``, ...);
* ``read_audit``: its audit timeline, one entry per event;
* ``list_pending_approvals``: the tool calls awaiting a human;
* ``verify``: check a conversation's hash chain and derived data;
* ``approve`` / ``deny``: only when the operator allows decisions
  (``allow_decisions``); otherwise they are not offered at all. A decision is
  recorded under the caller's actor, and requests the turn's continuation as
  any other entry point's does.

Who calls is ``caller(ctx)``: over stdio the operator's configured tenant and
actor; over HTTP the bearer token's (``chatledger.adapters.mcp.http``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

try:
    import anyio
    from mcp.server.mcpserver import Context, MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
except ImportError as error:  # the MCP SDK is an optional dependency
    raise ImportError(
        "chatledger mcp needs the MCP Python SDK, which is not installed: "
        "pip install 'chatledger[mcp]'"
    ) from error

from chatledger.adapters.mcp.tools import TRANSCRIPT_FORMATS, Caller, StoreTools
from chatledger.domain.errors import ChatLedgerError

if TYPE_CHECKING:
    from chatledger.adapters.store import ConversationStore

__all__ = ["INSTRUCTIONS", "build_server"]

INSTRUCTIONS = (
    "chatledger holds AI chat conversations as an audited event log: every message, tool "
    "call, tool result and human approval. List or search conversations, read a transcript "
    "or its audit, see which tool calls wait for a human, and verify a conversation's log."
)

READ_TRANSCRIPT = (
    "A conversation's messages: format 'ui' (AI SDK UIMessages, with tool calls, approvals and "
    f"results) or a model API's format; the formats: {', '.join(TRANSCRIPT_FORMATS)}. "
    "unanswered: 'omit' leaves out tool calls still waiting for a result, 'refuse' fails on them "
    "(model formats only)."
)

CallerOf = Callable[[Context], Caller]
"""Who makes a tool call (its tenant and actor), from the call's context."""


def build_server(
    store: ConversationStore, caller: CallerOf, *, allow_decisions: bool = False
) -> MCPServer:
    """The MCP server answering with ``store``'s conversations (see the module docstring)."""
    tools = StoreTools(store)
    server = MCPServer(name="chatledger", instructions=INSTRUCTIONS)

    async def run(work: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        """``work`` in a worker thread; chatledger's refusal becomes the tool's error, in its words."""
        try:
            return await anyio.to_thread.run_sync(work)
        except ChatLedgerError as error:
            raise ToolError(f"{type(error).__name__}: {error}") from None

    @server.tool()
    async def list_conversations(
        ctx: Context, status: str | None = None, limit: int = 20, cursor: str | None = None
    ) -> dict[str, Any]:
        """List conversations, most recently changed first.

        status: only those whose turn stands there (idle, streaming, awaiting-approval,
        awaiting-tool-output, ready-to-continue); cursor: a previous page's nextCursor.
        """
        who = caller(ctx)
        return await run(
            lambda: tools.list_conversations(who, status=status, limit=limit, cursor=cursor)
        )

    @server.tool()
    async def search_conversations(ctx: Context, query: str, limit: int = 20) -> dict[str, Any]:
        """Find conversations whose title or message text holds every word of query (as prefixes)."""
        who = caller(ctx)
        return await run(lambda: tools.list_conversations(who, query=query, limit=limit))

    @server.tool(description=READ_TRANSCRIPT)
    async def read_transcript(
        ctx: Context, chat_id: str, format: str = "ui", unanswered: str = "omit"
    ) -> dict[str, Any]:
        who = caller(ctx)
        return await run(
            lambda: tools.transcript(who, chat_id, format=format, unanswered=unanswered)
        )

    @server.tool()
    async def read_audit(
        ctx: Context,
        chat_id: str,
        kinds: list[str] | None = None,
        actor: str | None = None,
        after: int = 0,
        limit: int = 100,
    ) -> dict[str, Any]:
        """A conversation's audit timeline: who did what and when, one entry per event.

        kinds: only those event kinds (e.g. approval-responded); actor: only that actor's;
        after: a previous page's 'next'."""
        who = caller(ctx)
        return await run(
            lambda: tools.audit(who, chat_id, kinds=kinds, actor=actor, after=after, limit=limit)
        )

    @server.tool()
    async def list_pending_approvals(ctx: Context) -> dict[str, Any]:
        """Every tool call awaiting a human's approval, oldest first."""
        who = caller(ctx)
        return await run(lambda: tools.pending_approvals(who))

    @server.tool()
    async def verify(ctx: Context, chat_id: str | None = None) -> dict[str, Any]:
        """Check a conversation's log: its hash chain, seals, snapshots and read models.

        ok is true when nothing disagrees; problems and advice say what and how to repair."""
        who = caller(ctx)
        return await run(lambda: tools.verify(who, chat_id))

    if allow_decisions:

        @server.tool()
        async def approve(
            ctx: Context, chat_id: str, tool_call_id: str, reason: str | None = None
        ) -> dict[str, Any]:
            """Approve a tool call awaiting approval; the conversation then continues."""
            who = caller(ctx)
            return await run(
                lambda: tools.decide(who, chat_id, tool_call_id, approved=True, reason=reason)
            )

        @server.tool()
        async def deny(
            ctx: Context, chat_id: str, tool_call_id: str, reason: str | None = None
        ) -> dict[str, Any]:
            """Deny a tool call awaiting approval; the model is told, with the reason."""
            who = caller(ctx)
            return await run(
                lambda: tools.decide(who, chat_id, tool_call_id, approved=False, reason=reason)
            )

    return server
