"""``GET /api/chats``: the caller's conversations, newest change first, searchable, paged by cursor.

Query parameters: ``q`` (words that must all occur in the title or message
text), ``status``, ``updatedBefore`` / ``updatedAfter`` (ISO 8601 times),
``limit`` (1-200, default 50) and ``cursor`` (the ``nextCursor`` of the
previous page). Only the token's tenant is ever listed.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from chatledger.adapters.http.auth import Identity
from chatledger.adapters.http.errors import invalid
from chatledger.adapters.http.requests import int_param
from chatledger.projections.listing import ConversationList

if TYPE_CHECKING:
    from chatledger.adapters.http.settings import AppSettings

__all__ = ["Tenancy", "list_chats", "list_from_request"]


class Tenancy(Protocol):
    """What the page and list endpoints need of the HTTP app: its store and who is asking."""

    store: Any
    settings: AppSettings
    """The app's settings (the verify page checks seals with their ``seal_key``)."""

    def identity(self, request: Request) -> Identity:
        """The caller's tenant and user (raises a 401 problem without a known token)."""
        ...


def _time_param(request: Request, name: str) -> datetime | None:
    text = request.query_params.get(name)
    if not text:
        return None
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        raise invalid(
            f"query parameter {name!r} must be an ISO 8601 time (e.g. 2025-01-31T12:00:00Z), "
            f"not {text!r}"
        ) from None


async def list_from_request(app: Tenancy, request: Request) -> ConversationList:
    """The page of conversations a request's query parameters ask for, in the caller's tenant."""
    tenant = app.identity(request).tenant
    params = request.query_params
    limit = int_param(request, "limit")
    return await run_in_threadpool(
        lambda: app.store.inbox.list_conversations(
            tenant=tenant,
            query=params.get("q") or None,
            status=params.get("status") or None,
            updated_before=_time_param(request, "updatedBefore"),
            updated_after=_time_param(request, "updatedAfter"),
            limit=50 if limit is None else limit,
            cursor=params.get("cursor") or None,
        )
    )


def list_chats(app: Tenancy) -> Any:
    """The ``GET /api/chats`` endpoint bound to ``app``."""

    async def endpoint(request: Request) -> Response:
        page = await list_from_request(app, request)
        return JSONResponse(
            {
                "conversations": [row.to_json() for row in page.conversations],
                "nextCursor": page.next_cursor,
            }
        )

    return endpoint
