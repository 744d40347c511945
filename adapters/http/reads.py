"""The JSON read endpoints: messages, status, the audit history, model messages, the approvals inbox.

Each reads the caller's tenant only (``auth``) and answers JSON; the shapes
are camelCase, as the rest of the API.
"""

from __future__ import annotations

from collections.abc import Callable

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from chatledger.adapters.http.attachments import AttachmentRoutes
from chatledger.adapters.http.auth import Identity
from chatledger.adapters.http.errors import invalid
from chatledger.adapters.http.requests import bool_param, int_param
from chatledger.adapters.store import ConversationStore
from chatledger.domain.convert import FORMATS
from chatledger.domain.timeline import KINDS

__all__ = ["ReadEndpoints"]

_VIEWS = ("grouped", "events")
"""``view`` of ``GET /api/chats/{id}/history``: chunk batches grouped by stream, or one entry per event."""


class ReadEndpoints:
    """The read endpoints on one store, for the identity ``identify`` gives each request."""

    def __init__(self, store: ConversationStore, identify: Callable[[Request], Identity]) -> None:
        self.store = store
        self.identify = identify

    async def messages(self, request: Request) -> Response:
        """``GET /api/chats/{id}/messages[?atVersion=N&leaf=KEY&attachments=url]``: the UIMessages.

        ``leaf``: the messages of the path to that branch leaf (default: the active path).

        ``attachments=url``: inline files kept once come as links to
        ``/api/chats/{id}/attachments/{sha256}`` (``chatledger.adapters.http.attachments``).
        """
        who = self.identify(request)
        tenant = who.tenant
        chat_id = request.path_params["chat_id"]
        at_version = int_param(request, "atVersion")
        leaf = request.query_params.get("leaf") or None
        found = await run_in_threadpool(
            lambda: self.store.reads.messages(
                chat_id, tenant=tenant, at_version=at_version, leaf=leaf
            )
        )
        mode = request.query_params.get("attachments", "inline")
        if mode not in ("inline", "url"):
            raise invalid(f"'attachments' must be inline or url, not {mode!r}")
        if mode == "url":
            found = AttachmentRoutes(self.store, self.identify).link(tenant, chat_id, found)
        return JSONResponse({"id": chat_id, "messages": found})

    async def status(self, request: Request) -> Response:
        """``GET /api/chats/{id}/status``: where the turn stands."""
        who = self.identify(request)
        tenant = who.tenant
        found = await run_in_threadpool(
            self.store.reads.status, request.path_params["chat_id"], tenant=tenant
        )
        return JSONResponse(found.to_json())

    async def history(self, request: Request) -> Response:
        """``GET /api/chats/{id}/history[?kind=K&actor=A&after=N&limit=N&view=events&full=true]``.

        The audit timeline, grouped by default: one row per event, but one per
        run of a stream's chunk batches (``view=events``, or ``full=true`` with
        every chunk of each batch: one entry per event). ``next`` is the
        ``after`` of the next page, null on the last.
        """
        who = self.identify(request)
        kinds = request.query_params.getlist("kind") or None
        unknown = sorted(set(kinds or ()) - set(KINDS))
        if unknown:
            raise invalid(f"unknown kind(s) {unknown}; the kinds are {', '.join(KINDS)}")
        view = request.query_params.get("view", "grouped")
        if view not in _VIEWS:
            raise invalid(f"'view' must be one of {', '.join(_VIEWS)}, not {view!r}")
        full = bool_param(request, "full")
        limit = int_param(request, "limit", minimum=1)
        chat_id, tenant = request.path_params["chat_id"], who.tenant
        actor = request.query_params.get("actor") or None
        after = int_param(request, "after") or 0
        if view == "grouped" and not full:
            rows = await run_in_threadpool(
                lambda: self.store.reads.timeline(
                    chat_id, tenant=tenant, kinds=kinds, actor=actor, after=after, limit=limit
                )
            )
            found = [row.to_json() for row in rows.rows]
            return JSONResponse({"entries": found, "next": rows.next_after})
        more = None if limit is None else limit + 1  # one more tells whether a next page exists
        entries = await run_in_threadpool(
            lambda: self.store.reads.history(
                chat_id, tenant=tenant, kinds=kinds, actor=actor, after=after, limit=more, full=full
            )
        )
        shown = entries if limit is None else entries[:limit]
        following = shown[-1].position if shown and len(entries) > len(shown) else None
        return JSONResponse({"entries": [entry.to_json() for entry in shown], "next": following})

    async def model_messages(self, request: Request) -> Response:
        """``GET /api/chats/{id}/model-messages?format=F[&unanswered=omit&ignoreIncompleteToolCalls=true&leaf=KEY]``.

        ``{"format", "messages"}``; Anthropic's format adds its ``system`` beside ``messages``.
        """
        who = self.identify(request)
        tenant = who.tenant
        format_ = request.query_params.get("format", "ai-sdk")
        if format_ not in FORMATS:
            raise invalid(f"unknown format {format_!r}; use one of {', '.join(FORMATS)}")
        unanswered = request.query_params.get("unanswered", "refuse")
        if unanswered not in ("refuse", "omit"):
            raise invalid(f"'unanswered' must be refuse or omit, not {unanswered!r}")
        converted = await run_in_threadpool(
            self.store.reads.model_messages,
            request.path_params["chat_id"],
            format_,
            tenant=tenant,
            at_version=int_param(request, "atVersion"),
            ignore_incomplete_tool_calls=bool_param(request, "ignoreIncompleteToolCalls"),
            unanswered=unanswered,  # type: ignore[arg-type]
            leaf=request.query_params.get("leaf") or None,
        )
        if isinstance(converted, dict):  # anthropic's {system, messages}: not nested in messages
            return JSONResponse({"format": format_, **converted})
        return JSONResponse({"format": format_, "messages": converted})

    async def approvals(self, request: Request) -> Response:
        """``GET /api/approvals``: every tool call of the tenant awaiting approval, oldest first.

        ``automatic``: the calls standing grants approved lately, newest first.
        """
        who = self.identify(request)
        tenant = who.tenant
        pending = await run_in_threadpool(self.store.inbox.pending_approvals, tenant=tenant)
        automatic = await run_in_threadpool(self.store.inbox.automatic_approvals, tenant=tenant)
        return JSONResponse(
            {
                "approvals": [item.to_json() for item in pending],
                "automatic": [item.to_json() for item in automatic],
            }
        )
