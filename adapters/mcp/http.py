"""``chatledger mcp --http``: the MCP server over streamable HTTP, behind ``serve``'s bearer tokens.

``mcp_http_app`` is the SDK's streamable HTTP app (stateless: every POST
carries one exchange) wrapped in the same authentication as ``chatledger
serve``: a request without a known ``Authorization: Bearer <token>`` gets the
same 401 JSON before the MCP layer sees it, an operator token (tenant ``*``)
a 403. A tool call acts in its token's tenant; a decision is recorded under
the token's user (``TOKEN=TENANT:USER``), else under the configured actor.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from chatledger.adapters.http.auth import Access, Authenticate
from chatledger.adapters.http.errors import HTTPProblem
from chatledger.adapters.mcp.server import build_server
from chatledger.adapters.mcp.tools import Caller

if TYPE_CHECKING:
    from mcp.server.mcpserver import Context

    from chatledger.adapters.store import ConversationStore

__all__ = ["MCP_PATH", "mcp_http_app"]

MCP_PATH = "/mcp"
"""Where the MCP endpoint answers."""


def mcp_http_app(
    store: ConversationStore,
    authenticate: Authenticate | None,
    *,
    actor: str,
    allow_decisions: bool = False,
    host: str = "127.0.0.1",
    allowed_hosts: Sequence[str] = (),
) -> ASGIApp:
    """The MCP endpoint at ``/mcp`` over ``store``; ``authenticate`` None serves the store's tenant to anyone."""
    from mcp.server.transport_security import TransportSecuritySettings

    access = Access(authenticate, store.tenant)

    def caller(ctx: Context) -> Caller:
        request = ctx.request_context.request
        assert isinstance(request, Request)  # streamable HTTP hands tools their HTTP request
        who = access.identity(request)
        return Caller(who.tenant, who.user or actor)

    server = build_server(store, caller, allow_decisions=allow_decisions)
    security = None
    if allowed_hosts or host not in ("127.0.0.1", "localhost", "::1"):
        names = [host, *allowed_hosts]
        security = TransportSecuritySettings(
            enable_dns_rebinding_protection="*" not in names,
            allowed_hosts=[f"{name}:*" for name in names] + list(names),
            allowed_origins=[
                f"{scheme}://{name}:*" for name in names for scheme in ("http", "https")
            ],
        )
    app = server.streamable_http_app(
        streamable_http_path=MCP_PATH, stateless_http=True, host=host, transport_security=security
    )
    return _Authenticated(app, access)


class _Authenticated:
    """Refuses an HTTP request without a valid token (401/403 JSON, as ``serve``) before the app."""

    def __init__(self, app: ASGIApp, access: Access) -> None:
        self.app = app
        self.access = access

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            try:
                self.access.identity(Request(scope))
            except HTTPProblem as problem:
                body = {"error": {"type": problem.type_name, "message": problem.message}}
                response = JSONResponse(body, status_code=problem.status, headers=problem.headers)
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)
