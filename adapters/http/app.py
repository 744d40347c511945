"""The HTTP adapter (docs/behaviour.md §9): an ASGI app speaking the AI SDK ``useChat`` conventions.

``create_app(store_or_url, responder=..., tokens=...)`` gives a Starlette app:

* ``POST /api/chat`` takes the body ``DefaultChatTransport`` sends
  (``{id, messages, trigger, messageId}``). It starts the
  conversation if it is new; records what the client added: a new user
  message (or an edit of one), approval answers and tool outputs found in the
  last assistant message it sent (``approval-responded`` / ``output-denied``
  with ``approval: {id, approved, reason}``, ``output-available`` /
  ``output-error`` the store does not have yet), or a regenerate
  (``trigger: "regenerate-message"``). Then it runs the responder on the
  stored messages: a new assistant message for a user message, a
  continuation of the same assistant message once its tool calls are all
  answered. Every chunk is stored and streamed back as Server-Sent Events
  (``data: <json>`` ... ``data: [DONE]``). Chunks the store does not apply
  (replays of known tool calls, refused chunks) are recorded but not sent,
  so the client's messages stay equal to the store's; ``start`` chunks are
  sent with the stored message id. The responder runs to its end even when
  the client disconnects: the client resumes from the durable log.
  A user message sent while an answer streams (AI SDK 7) is recorded as a
  steering message; its request is answered once that answer ends
  (``steering.py``).
* ``GET /api/chat/{id}/stream`` resumes: the open stream from its start (or
  after ``?after=<cursor>`` / ``Last-Event-ID``), live from the log
  (``store.follow``), each event with its cursor as SSE ``id``; 204 when
  nothing is streaming. A v7 resume from the start replays the whole message
  (``resume.message_replay``).
* JSON endpoints for messages, status, the audit history, model messages,
  the approvals inbox, approvals and tool outputs; ``GET /openapi.json``
  describes them all.
* Operator routes (``http/operator.py``), for operator tokens only
  (``TOKEN=*:USER``): ``POST /api/chat/{id}/erase``,
  ``POST /api/chat/{id}/redact`` and ``GET /api/chat/{id}/export`` on any
  tenant's chat.

Errors are JSON ``{"error": {"type": <class name>, "message": ...}}``: 404
unknown conversation or tool call, 410 erased conversation, 403 a route the
token may not call, 409 conflicts (a stream already open, an
answer that contradicts the recorded one, nothing to continue), 413 oversized
input, 422 invalid input, 401 without a known token, 503 database
unavailable.

**Tenancy.** With ``tokens`` (bearer token -> tenant, or tenant and user)
every request needs ``Authorization: Bearer <token>`` and sees only its
tenant's conversations (another tenant's chat id is simply unknown: 404); the
token's user is the recorded actor. Without ``tokens`` every request is the
store's default tenant (``http/auth.py``).

The store is synchronous; the app calls it from worker threads.

This module holds ``create_app``, ``POST /api/chat`` and the continuations the
app runs; beside it, ``use_chat`` plans what a ``useChat`` request adds and
``chat`` records it, ``turns`` runs responders into their streams, ``resume``
follows the log, ``reads`` and ``actions`` are the JSON endpoints, ``sse``
frames the stream, ``requests`` reads bodies and parameters within their
limits, ``auth`` and ``guard`` decide who may call, ``errors`` maps errors to
statuses and ``openapi`` describes the API.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route, WebSocketRoute

from chatledger.adapters.http.actions import ActionEndpoints
from chatledger.adapters.http.auth import Authenticate, Identity, TokenTable, forbidden
from chatledger.adapters.http.chat import ChatSends
from chatledger.adapters.http.errors import EXCEPTION_HANDLERS, HTTPProblem
from chatledger.adapters.http.guard import LOCAL_HOSTS, RequestGuard
from chatledger.adapters.http.openapi import openapi_document
from chatledger.adapters.http.operator import OperatorEndpoints
from chatledger.adapters.http.pages import page_routes
from chatledger.adapters.http.reads import ReadEndpoints
from chatledger.adapters.http.requests import BodyLimits
from chatledger.adapters.http.resume import Resumes
from chatledger.adapters.http.sse import SSE_HEADERS
from chatledger.adapters.http.websocket import ChatSocket
from chatledger.adapters.responders.scripted import Responder, demo_responder
from chatledger.adapters.store import ConversationStore
from chatledger.adapters.store.turns.continuations import (
    ContinuationRunner,
    start_claimed,
    worker_name,
)
from chatledger.adapters.store.turns.runner import TurnRunner
from chatledger.domain.seal import SealKey

__all__ = ["SSE_HEADERS", "HTTPProblem", "create_app", "openapi_document", "serve"]

log = logging.getLogger("chatledger.http")

# -- JSON views ---------------------------------------------------------------------


class _ChatApp:
    """The endpoints, bound to one store, one responder and the authentication hook.

    ``POST /api/chat`` and the continuations live here; resume, the JSON reads
    and the JSON actions in ``resume``, ``reads`` and ``actions``.
    """

    def __init__(
        self,
        store: ConversationStore,
        responder: Responder,
        authenticate: Authenticate | None,
        *,
        keepalive_seconds: float,
        max_body_bytes: int,
        continuation_poll_seconds: float | None,
        continuation_grace_seconds: float,
        run_continuations: bool = True,
    ) -> None:
        self.store = store
        self.seal_key: SealKey | None = None
        """The key the verify page checks seals with (None: seals are shown unchecked)."""
        self.limits = body_limits(store, max_body_bytes)
        """What each JSON route's body may hold (``POST /api/chat`` up to ``max_body_bytes``)."""
        self.authenticate = authenticate
        """The authentication hook (None: every request is the store's default tenant)."""
        self.keepalive_seconds = keepalive_seconds
        self.continuation_poll_seconds = continuation_poll_seconds
        self.runner = TurnRunner(responder)
        """The answers this process is writing."""
        self.resumes = Resumes(store, keepalive_seconds=keepalive_seconds)
        self.sends = ChatSends(
            store, self.runner, self.resumes, self.identity,
            limits=self.limits["chat"], keepalive_seconds=keepalive_seconds,
        )  # fmt: skip
        """``POST /api/chat`` and the WebSocket's sends."""
        self.reads = ReadEndpoints(store, self.identity)
        self.operators = OperatorEndpoints(store, self.operator, self.limits["operator"])
        self.continuations = (
            ContinuationRunner(
                store,
                start_claimed(store.turns, self.runner),
                tenants=self.tenants(),
                worker=worker_name("http"),
                grace_seconds=continuation_grace_seconds,
                poll_seconds=continuation_poll_seconds or 0.0,
            )
            if run_continuations
            else None
        )
        """The continuation policy (None: this app runs no continuations; a worker does)."""
        self.actions = ActionEndpoints(
            store,
            self.identity,
            limits=self.limits,
            runner=self.runner,
            continuations=self.continuations,
        )

    # -- tenancy ------------------------------------------------------------------

    def identity(self, request: Request) -> Identity:
        """The caller's tenant and user (the store's default tenant when no hook is configured).

        An operator token is refused here (403): it may call the operator routes only.
        """
        if self.authenticate is None:
            return Identity(self.store.tenant)
        who = self.authenticate(request)
        if who.operator:
            raise forbidden(
                "an operator token may call the operator routes only (erase, export, redact); "
                "use a tenant's token for this route"
            )
        return who

    def operator(self, request: Request) -> Identity:
        """The caller, who must hold an operator token (else 403; 401 without a known token)."""
        who = self.authenticate(request) if self.authenticate is not None else None
        if who is None or not who.operator:
            raise forbidden(
                "this route needs an operator token (a token whose tenant is '*': TOKEN=*:USER "
                "in the token file); tenant tokens may not call it"
            )
        return who

    # -- continuations requested outside POST /api/chat ----------------------------------

    def tenants(self) -> list[str]:
        """The tenants this app serves (whose continuation requests it runs)."""
        tenants = getattr(self.authenticate, "tenants", None)
        return list(tenants) if tenants else [self.store.tenant]

    # -- GET /api/chat/{id}/stream ---------------------------------------------------------

    async def resume(self, request: Request) -> Response:
        """Replay the open stream from its start (or after a cursor), live; 204 when none is open."""
        who = self.identity(request)
        tenant = who.tenant
        chat_id = request.path_params["chat_id"]
        after = request.query_params.get("after") or request.headers.get("last-event-id") or None
        return await self.resumes.response(chat_id, tenant, after)

    # -- JSON endpoints: reads (``http/reads.py``) and actions (``http/actions.py``) --------

    async def openapi(self, request: Request) -> Response:
        """``GET /openapi.json`` (public)."""
        document = openapi_document(self.limits, authenticated=self.authenticate is not None)
        return JSONResponse(document)


def body_limits(store: ConversationStore, max_body_bytes: int) -> dict[str, BodyLimits]:
    """Each JSON route's body limits: whole conversations for ``/api/chat``, small actions elsewhere."""
    action = min(max_body_bytes, 64_000)
    output = min(max_body_bytes, store.limits.max_tool_output_bytes + 64_000)
    return {
        "chat": BodyLimits(max_body_bytes),
        "approvals": BodyLimits(action, max_items=1_000),
        "tool-outputs": BodyLimits(output),
        "stop": BodyLimits(action, max_items=1_000),
        "operator": BodyLimits(action, max_items=1_000),
    }


# -- the app ----------------------------------------------------------------------------


def create_app(
    store_or_url: ConversationStore | str | None,
    *,
    responder: Responder,
    tokens: Mapping[str, str | Identity] | None = None,
    authenticate: Authenticate | None = None,
    keepalive_seconds: float = 15.0,
    max_body_bytes: int = 32_000_000,
    continuation_poll_seconds: float | None = 2.0,
    continuation_grace_seconds: float = 5.0,
    run_continuations: bool = True,
    cors_origins: Sequence[str] = (),
    allowed_hosts: Sequence[str] = LOCAL_HOSTS,
    seal_key: SealKey | None = None,
) -> Starlette:
    """The chatledger HTTP app (see the module docstring) on a store, or on a store URL it opens.

    ``tokens`` maps bearer tokens to ``TENANT``, ``TENANT:USER`` or an
    ``Identity``; the user is recorded as the actor of what its requests
    record. ``authenticate`` replaces the token table with a hook of your own
    (``Request -> Identity``). With neither, every request is served as the
    store's default tenant. A store given by URL (or None: ``$CHATLEDGER_URL``,
    else ``sqlite:///./chatledger.db``) is opened now and closed at shutdown;
    a store object stays the caller's. ``keepalive_seconds`` is how long a
    stream stays quiet before an SSE comment is sent; a request body over
    ``max_body_bytes`` is refused (413). ``app.state.chatledger``
    holds the store and the answers in progress (``runner``).

    Continuations: an approval or tool output given through the JSON
    endpoints runs its continuation at once; besides, every
    ``continuation_poll_seconds`` (None: never) the app claims and runs the
    requests older than ``continuation_grace_seconds`` that nobody took (left
    by a stopped process, or recorded by another program). Several processes
    may serve one database: a claim goes to exactly one of them. With
    ``run_continuations=False`` the app runs none at all: a worker process
    (``chatledger worker``) does.

    ``cors_origins`` lets browser pages of those origins (``"*"``: any) call
    the app, e.g. a ``useChat`` front end served from another port; pages of
    any other origin are refused (403). ``allowed_hosts`` are the ``Host``
    names the app answers to (``"*"``: any; default: the localhost names),
    which keeps DNS-rebinding pages out (see ``http/guard.py``).

    ``seal_key`` (the key ``chatledger seal`` signs with, or its public half)
    lets the verify page check the newest seal's signature; without it the
    page says that no seal key was given.
    """
    if authenticate is None and tokens is not None:
        authenticate = TokenTable(tokens)
    if isinstance(store_or_url, ConversationStore):
        store, owned = store_or_url, False
    else:
        store, owned = ConversationStore.open(store_or_url), True
    chat = _ChatApp(
        store,
        responder,
        authenticate,
        keepalive_seconds=keepalive_seconds,
        max_body_bytes=max_body_bytes,
        continuation_poll_seconds=continuation_poll_seconds,
        continuation_grace_seconds=continuation_grace_seconds,
        run_continuations=run_continuations,
    )
    chat.seal_key = seal_key

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        stop, sweep = asyncio.Event(), None
        if continuation_poll_seconds is not None and chat.continuations is not None:
            sweep = asyncio.create_task(chat.continuations.sweep(stop))
        try:
            yield
        finally:
            stop.set()
            if sweep is not None:
                await sweep
            await chat.runner.shutdown(timeout=10)
            if owned:
                store.close()

    routes: list[BaseRoute] = [
        Route("/api/chat", chat.sends.post, methods=["POST"]),
        Route("/api/chat/{chat_id:path}/stream", chat.resume, methods=["GET"]),
        WebSocketRoute(
            "/api/chat/ws", ChatSocket(chat.sends, chat.resumes).serve
        ),  # AI SDK 7 WebSocketChatTransport
        Route("/api/chats/{chat_id:path}/messages", chat.reads.messages, methods=["GET"]),
        Route("/api/chats/{chat_id:path}/status", chat.reads.status, methods=["GET"]),
        Route("/api/chats/{chat_id:path}/history", chat.reads.history, methods=["GET"]),
        Route(
            "/api/chats/{chat_id:path}/model-messages", chat.reads.model_messages, methods=["GET"]
        ),
        Route(
            "/api/chats/{chat_id:path}/approvals",
            chat.actions.respond_to_approval,
            methods=["POST"],
        ),
        Route(
            "/api/chats/{chat_id:path}/tool-outputs", chat.actions.add_tool_output, methods=["POST"]
        ),
        Route("/api/chats/{chat_id:path}/stop", chat.actions.stop, methods=["POST"]),
        Route("/api/approvals", chat.reads.approvals, methods=["GET"]),
        *chat.operators.routes(),  # erase, export, redact: operator tokens only (http/operator.py)
        Route("/openapi.json", chat.openapi, methods=["GET"]),
    ]
    routes += page_routes(chat)  # GET /api/chats and the pages at / (adapters/http/pages.py)
    middleware = [Middleware(RequestGuard, allowed_hosts=allowed_hosts, cors_origins=cors_origins)]
    if cors_origins:
        middleware.append(
            Middleware(
                CORSMiddleware,
                allow_origins=list(cors_origins),
                allow_methods=["GET", "POST"],
                allow_headers=["authorization", "content-type", "last-event-id"],
                expose_headers=["x-vercel-ai-ui-message-stream"],
            )
        )
    app = Starlette(
        routes=routes,
        middleware=middleware,
        exception_handlers=EXCEPTION_HANDLERS,
        lifespan=lifespan,
    )
    app.state.chatledger = chat
    return app


def serve(
    store_or_url: ConversationStore | str | None = None,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    responder: Responder | None = None,
    tokens: Mapping[str, str | Identity] | None = None,
    cors_origins: Sequence[str] = (),
    log_level: str = "info",
    run_continuations: bool = True,
    allowed_hosts: Sequence[str] = (),
    seal_key: SealKey | None = None,
) -> None:
    """Serve a store (or the store at a URL) over HTTP with uvicorn until interrupted (``chatledger serve``).

    Without a ``responder`` the demo responder answers (the recorded demo turn
    and its continuation, in a loop): enough to try a client against. The
    server answers to the localhost names, ``host`` and ``allowed_hosts``.
    """
    import uvicorn

    from chatledger.adapters.http.server_options import server_options

    app = create_app(
        store_or_url,
        responder=responder or demo_responder(delay=0.05),
        tokens=tokens,
        cors_origins=cors_origins,
        run_continuations=run_continuations,
        allowed_hosts=[*LOCAL_HOSTS, host, *allowed_hosts],
        seal_key=seal_key,
    )
    options = server_options()
    uvicorn.run(
        app, host=host, port=port, log_level=log_level, loop=options.loop, http=options.http
    )
