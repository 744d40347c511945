"""The pages ``chatledger serve`` shows at ``/``: conversations, one conversation, approvals, verify.

Server-rendered Jinja2 templates (``templates/``, autoescaped: stored content
is shown, never run) made live with htmx (vendored in ``static/``, no build
step). Each page is a shell anyone may load; its content comes from a
``/ui/...`` fragment that needs the same bearer token as the JSON API. The
token is typed once into the page and kept in the browser's
``sessionStorage``; ``static/pages.js`` adds it to every request. Actions
(approve, deny) call the JSON API, so a decision made here runs exactly the
code a client's does (the continuation starts).

- ``/``: the conversation list, with search, a status filter and badges for
  calls awaiting approval;
- ``/conversation?id=CHAT``: the messages as a chat beside the audit
  timeline (filter by kind and actor), with a slider over the versions that
  shows the conversation as it stood after any event and highlights what
  that event changed; while an answer streams the page refreshes itself from
  the read models, which any server process keeps from the durable log;
- ``/approvals``: every call awaiting approval, oldest first;
- ``/verify?id=CHAT``: the result of ``verify`` for one conversation;
- ``/overview``: the tenant's figures (``GET /api/stats``) with server-side
  SVG charts (``charts.py``): conversations and streams per day, approvals
  per tool and per actor, decision times, what waits;
- ``/chat?id=CHAT``: a chat on the AI SDK's own ``useChat`` (React), bundled
  ahead of time from ``frontend/chat/`` into ``static/chat/chat.js``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from chatledger.adapters.http.charts import day_chart, split_chart
from chatledger.adapters.http.conversation_page import conversation_page
from chatledger.adapters.http.errors import invalid
from chatledger.adapters.http.listing import Tenancy, list_chats, list_from_request
from chatledger.adapters.http.requests import int_param
from chatledger.adapters.http.seal_view import seal_view
from chatledger.adapters.http.stats import StatsEndpoints
from chatledger.domain.timeline import KINDS
from chatledger.projections.listing import STATUSES
from chatledger.projections.stats import duration

__all__ = ["STATIC", "TEMPLATES", "page_routes", "render_page"]

HERE = Path(__file__).parent
TEMPLATES = HERE / "templates"
STATIC = HERE / "static"

_SHELLS = {
    "/": ("list.html", "Conversations"),
    "/conversation": ("conversation.html", "Conversation"),
    "/approvals": ("approvals.html", "Approvals"),
    "/verify": ("verify.html", "Verify"),
    "/chat": ("chat.html", "Chat"),
    "/overview": ("overview.html", "Overview"),
}

_environment = Environment(
    loader=FileSystemLoader(TEMPLATES),
    autoescape=select_autoescape(default=True, default_for_string=True),
    trim_blocks=True,
    lstrip_blocks=True,
)


def _pretty(value: Any) -> str:
    """A JSON value, indented, for a ``<pre>`` (escaped by the template like any text)."""
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


_environment.filters["pretty"] = _pretty
_environment.globals["duration"] = duration

CLIP = 48
"""Characters of a name (chat id, tool call id, actor, title) a page shows before it cuts it."""


def _clip(value: Any, limit: int = CLIP) -> str:
    """A long name cut visibly (its head, an ellipsis, its length), so it cannot break a layout."""
    text = "" if value is None else str(value)
    if len(text) <= limit:
        return text
    return f"{text[: limit - 8]}…{text[-4:]} ({len(text)} characters)"


_environment.filters["clip"] = _clip


def _render(template: str, status: int = 200, **context: Any) -> HTMLResponse:
    html = _environment.get_template(template).render(**context)
    return HTMLResponse(html, status_code=status, headers={"cache-control": "no-store"})


def _chat_param(request: Request) -> str:
    chat_id = request.query_params.get("id")
    if not chat_id:
        raise invalid("query parameter 'id' (the chat id) is required")
    return chat_id


def _tokens_where(app: Tenancy) -> str | None:
    """Where the server's tokens are (a file, ``$CHATLEDGER_TOKENS``), for the token prompt."""
    authenticate = getattr(getattr(app, "access", None), "authenticate", None)
    return getattr(authenticate, "where", None)


class _Pages:
    """The page shells and their fragments, bound to one app."""

    def __init__(self, app: Tenancy) -> None:
        self.app = app
        self.stats = StatsEndpoints(app)

    def shell(self, template: str, title: str) -> Any:
        async def endpoint(request: Request) -> Response:
            return _render(
                template,
                title=title,
                chat_id=request.query_params.get("id", ""),
                statuses=STATUSES,
                tokens_where=_tokens_where(self.app),
            )

        return endpoint

    async def list_fragment(self, request: Request) -> Response:
        page = await list_from_request(self.app, request)
        more = None
        if page.next_cursor:
            params = dict(request.query_params)
            params["cursor"] = page.next_cursor
            more = params
        return _render(
            "_list.html",
            rows=page.conversations,
            more=more,
            first_page=not request.query_params.get("cursor"),
        )

    async def conversation_fragment(self, request: Request) -> Response:
        tenant = self.app.identity(request).tenant
        chat_id = _chat_param(request)
        at = int_param(request, "at")
        kind = request.query_params.get("kind") or None
        actor = request.query_params.get("actor") or None
        if kind is not None and kind not in KINDS:
            raise invalid(f"unknown kind {kind!r}; the kinds are {', '.join(KINDS)}")
        page = int_param(request, "page", minimum=1)
        view = await run_in_threadpool(
            conversation_page, self.app.store.reads, tenant, chat_id, at, kind, actor, page
        )
        return _render("_conversation.html", view=view, kinds=KINDS)

    async def approvals_fragment(self, request: Request) -> Response:
        tenant = self.app.identity(request).tenant
        pending = await run_in_threadpool(self.app.store.inbox.pending_approvals, tenant=tenant)
        queued = await run_in_threadpool(self.app.store.inbox.pending_continuations, tenant=tenant)
        grants = await run_in_threadpool(lambda: self.app.store.grants.list(tenant=tenant))
        return _render("_approvals.html", pending=pending, queued=queued, grants=grants)

    async def overview_fragment(self, request: Request) -> Response:
        stats = await self.stats.read(request)
        return _render(
            "_overview.html",
            stats=stats,
            days_chart=day_chart(stats.days),
            tools_chart=split_chart("Approvals per tool", stats.by_tool),
            actors_chart=split_chart("Approvals per actor", stats.by_actor),
        )

    async def verify_fragment(self, request: Request) -> Response:
        tenant = self.app.identity(request).tenant
        chat_id = _chat_param(request)
        key = self.app.settings.seal_key
        report = await run_in_threadpool(
            lambda: self.app.store.operations.verify(chat_id, tenant=tenant, seal_key=key)
        )
        return _render("_verify.html", report=report, chat_id=chat_id, seal=seal_view(report, key))


def page_routes(app: Tenancy) -> list[BaseRoute]:
    """The routes of the pages, their fragments, their static files, ``GET /api/chats`` and ``/api/stats``."""
    pages = _Pages(app)
    routes: list[BaseRoute] = [
        Route("/api/chats", list_chats(app), methods=["GET"]),
        Route("/ui/list", pages.list_fragment, methods=["GET"]),
        Route("/ui/conversation", pages.conversation_fragment, methods=["GET"]),
        Route("/ui/approvals", pages.approvals_fragment, methods=["GET"]),
        Route("/ui/verify", pages.verify_fragment, methods=["GET"]),
        Route("/ui/overview", pages.overview_fragment, methods=["GET"]),
        pages.stats.route(),  # GET /api/stats (http/stats.py)
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    routes += [
        Route(path, pages.shell(template, title), methods=["GET"])
        for path, (template, title) in _SHELLS.items()
    ]
    return routes


def render_page(template: str, **context: Any) -> HTMLResponse:
    """A template of ``templates/`` (autoescaped, not cached), for pages served from other modules (``/docs``)."""
    return _render(template, **context)
