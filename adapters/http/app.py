"""The HTTP adapter (docs/behaviour.md §9): an ASGI app speaking the AI SDK ``useChat`` conventions.

``create_app(store_or_url, responder=..., tokens=...)`` gives a Starlette app:

* ``POST /api/chat`` takes the body ``DefaultChatTransport`` sends
  (``{id, messages, trigger, messageId}``): what the client added is recorded
  (a new user message or an edit, approval answers and tool outputs, a
  regenerate) and the responder's answer streams back as Server-Sent Events,
  every chunk stored as it comes (``chat.py``; the turn itself is the store's
  ``turns`` service). Chunks the store does not apply are recorded but not
  sent, so the client's messages stay equal to the store's. The responder
  runs to its end even when the client disconnects: the client resumes from
  the durable log. ``/api/chat/ws`` is the same over a WebSocket (AI SDK 7).
* ``GET /api/chat/{id}/stream`` resumes the open stream from the log, live
  (``resume.py``); 204 when nothing is streaming.
* JSON endpoints for messages, status, the audit history, model messages,
  the approvals inbox, approvals, tool outputs and stop (``reads.py``,
  ``actions.py``); ``GET /openapi.json`` describes them all.
* For a server that runs the model elsewhere (a Node ``streamText`` route):
  ``POST /api/chats`` starts a conversation, ``POST /api/chats/{id}/messages``
  appends the user's message and ``POST /api/chats/{id}/answers`` takes the
  answer's UI-message stream as the request body, each chunk stored as it
  arrives (``conversations.py``, ``answers.py``); the read and action routes
  serve it too.
* Operator routes for operator tokens only (``TOKEN=*:USER``, ``operator.py``),
  and the pages at ``/`` (``pages.py``).

Errors are JSON ``{"error": {"type": <class name>, "message": ...}}`` with a
fitting status (``errors.py``). **Tenancy.** With ``tokens`` (bearer token ->
tenant, or tenant and user) every request needs ``Authorization: Bearer
<token>`` and sees only its tenant's conversations; the token's user is the
recorded actor. Without ``tokens`` every request is the store's default
tenant (``auth.py``). The store is synchronous; the app calls it from worker
threads. This module only wires: each route parses, calls one service of the
store, and frames.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from chatledger.adapters.http.actions import ActionEndpoints
from chatledger.adapters.http.answers import AnswerEndpoints
from chatledger.adapters.http.auth import Access, Authenticate, Identity, TokenTable
from chatledger.adapters.http.branches import BranchEndpoints
from chatledger.adapters.http.chat import ChatSends
from chatledger.adapters.http.continuations import ContinuationEndpoints
from chatledger.adapters.http.conversations import ConversationEndpoints
from chatledger.adapters.http.deadlines import CLIENT_DISCONNECT_HANDLER, ConnectionCounts
from chatledger.adapters.http.errors import EXCEPTION_HANDLERS, HTTPProblem
from chatledger.adapters.http.guard import LOCAL_HOSTS, RequestGuard
from chatledger.adapters.http.metrics import RequestCounter, RequestCounts
from chatledger.adapters.http.openapi import openapi_document
from chatledger.adapters.http.operator import OperatorEndpoints
from chatledger.adapters.http.reads import ReadEndpoints
from chatledger.adapters.http.requests import BodyLimits
from chatledger.adapters.http.resume import Resumes
from chatledger.adapters.http.routes import routes
from chatledger.adapters.http.settings import AppSettings, settings_with
from chatledger.adapters.http.sse import SSE_HEADERS
from chatledger.adapters.responders.scripted import Responder, demo_responder
from chatledger.adapters.store import ConversationStore
from chatledger.adapters.store.turns.continuations import (
    ContinuationRunner,
    start_claimed,
    worker_name,
)
from chatledger.adapters.store.turns.runner import TurnRunner

__all__ = [
    "SSE_HEADERS",
    "AppSettings",
    "ChatApp",
    "HTTPProblem",
    "create_app",
    "openapi_document",
    "serve",
]


class ChatApp:
    """The app's parts, bound to one store, one responder and who may call (``app.state.chatledger``)."""

    def __init__(
        self,
        store: ConversationStore,
        responder: Responder,
        authenticate: Authenticate | None,
        settings: AppSettings,
    ) -> None:
        self.store = store
        self.settings = settings
        """What the app was created with (``settings.py``): deadlines, limits, seal key, ..."""
        self.connections = ConnectionCounts()
        """Bodies cut off, clients that hung up, idle WebSockets closed (counted since start)."""
        self.limits = body_limits(store, settings.max_body_bytes)
        """What each JSON route's body may hold (``POST /api/chat`` up to ``max_body_bytes``)."""
        self.access = Access(authenticate, store.tenant)
        self.identity: Callable[[Request], Identity] = self.access.identity
        self.runner = TurnRunner(responder, owner=settings.owner)
        """The answers this process is writing; its ``owner`` (default: the responder's
        ``responder:<actor>``) owns the conversations the app starts and is whose requests it runs."""
        self.resumes = Resumes(store, keepalive_seconds=settings.keepalive_seconds)
        self.sends = ChatSends(
            store, self.runner, self.resumes, self.identity,
            limits=self.limits["chat"], keepalive_seconds=settings.keepalive_seconds,
        )  # fmt: skip
        """``POST /api/chat`` and the WebSocket's sends."""
        continuations = ContinuationRunner(
            store, start_claimed(store.turns, self.runner), tenants=self.access.tenants(),
            worker=worker_name("http"), grace_seconds=settings.continuation_grace_seconds,
            poll_seconds=settings.continuation_poll_seconds or 0.0, owner=self.runner.owner,
        )  # fmt: skip
        self.continuations = continuations if settings.run_continuations else None
        """The continuation policy (None: this app runs no continuations; a worker does)."""
        self.reads = ReadEndpoints(store, self.identity)
        self.conversations = ConversationEndpoints(store, self.identity, limits=self.limits)
        """Start a conversation, append a message: for servers that run the model elsewhere."""
        self.answers = AnswerEndpoints(
            store, self.identity, idle_seconds=settings.answer_idle_seconds
        )
        """An answer streamed in by a server that runs the model elsewhere."""
        self.actions = ActionEndpoints(
            store, self.identity, limits=self.limits, runner=self.runner,
            continuations=self.continuations,
        )  # fmt: skip
        self.operators = OperatorEndpoints(store, self.access.operator, self.limits["operator"])
        self.branches = BranchEndpoints(store, self.identity, self.limits["stop"])
        self.requests = RequestCounts()
        """HTTP answers by method and status, for ``/metrics``."""
        self.pulls = ContinuationEndpoints(
            store,
            self.identity,
            self.limits["stop"],
            max_wait_seconds=settings.continuation_wait_seconds,
        )
        """The pull route of external owners (``adapters/http/continuations.py``)."""

    async def resume(self, request: Request) -> Response:
        """``GET /api/chat/{id}/stream``: the open stream from its start (or after a cursor), live."""
        who = self.identity(request)
        after = request.query_params.get("after") or request.headers.get("last-event-id") or None
        return await self.resumes.response(request.path_params["chat_id"], who.tenant, after)

    async def openapi(self, request: Request) -> Response:
        """``GET /openapi.json`` (public)."""
        return JSONResponse(self.described())

    def described(self) -> dict[str, Any]:
        """This app's OpenAPI document (its body limits; security only when it has tokens)."""
        return openapi_document(self.limits, authenticated=self.access.authenticate is not None)


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
        "start": BodyLimits(action, max_items=1_000),
        "messages": BodyLimits(min(max_body_bytes, store.limits.max_message_bytes + 64_000)),
    }


def create_app(
    store_or_url: ConversationStore | str | None,
    *,
    responder: Responder,
    tokens: Mapping[str, str | Identity] | None = None,
    authenticate: Authenticate | None = None,
    settings: AppSettings | None = None,
    **overrides: Any,
) -> Starlette:
    """The chatledger HTTP app (see the module docstring) on a store, or on a store URL it opens.

    ``tokens`` maps bearer tokens to ``TENANT``, ``TENANT:USER`` or an
    ``Identity``; the user is recorded as the actor of what its requests
    record. ``authenticate`` replaces the token table with a hook of your own
    (``Request -> Identity``). With neither, every request is served as the
    store's default tenant. A store given by URL (or None: ``$CHATLEDGER_URL``,
    else ``sqlite:///./chatledger.db``) is opened now and closed at shutdown;
    a store object stays the caller's. ``app.state.chatledger`` is the ``ChatApp``.

    ``settings`` (an ``AppSettings``, ``http/settings.py``, which documents
    each one) are the deadlines, body limit, continuations, owner, CORS
    origins, allowed hosts and seal key; any of them may also be given as a
    keyword (``create_app(store, responder=r, cors_origins=["https://a.example"])``),
    which replaces that one of ``settings``. An unknown keyword, or a value of
    the wrong type or out of range, is a ``TypeError`` or ``ValueError`` saying
    what to give.

    Continuations: an approval or tool output given through the JSON
    endpoints runs its continuation at once; besides, every
    ``continuation_poll_seconds`` (None: never) the app claims and runs the
    requests older than ``continuation_grace_seconds`` that nobody took (left
    by a stopped process, or recorded by another program). Several processes
    may serve one database: a claim goes to exactly one of them. With
    ``run_continuations=False`` the app runs none at all: a worker process
    (``chatledger worker``) does. The app runs only the requests of the
    conversations its ``owner`` owns (default: ``responder:<the responder's
    actor>``, the owner of the conversations it starts) and of those owned by
    ``any``: never those of a framework or another runtime. An external owner
    pulls its requests with ``POST /api/continuations/claim``.

    A client hanging up mid-body is counted, not logged as a server error
    (``app.state.chatledger.connections``).
    """
    settings = settings_with(settings, overrides, caller="create_app()")
    if authenticate is None and tokens is not None:
        authenticate = TokenTable(tokens)
    if store_or_url is None or isinstance(store_or_url, str):
        store, owned = ConversationStore.open(store_or_url), True
    else:
        store, owned = store_or_url, False
    chat = ChatApp(store, responder, authenticate, settings)
    app = Starlette(
        routes=routes(chat),
        middleware=[
            Middleware(RequestCounter, counts=chat.requests),
            *_middleware(settings.allowed_hosts, settings.cors_origins),
        ],
        exception_handlers={**EXCEPTION_HANDLERS, **CLIENT_DISCONNECT_HANDLER},
        lifespan=_lifespan(chat, sweep=settings.continuation_poll_seconds is not None, owned=owned),
    )
    app.state.chatledger = chat
    return app


def _middleware(allowed_hosts: Sequence[str], cors_origins: Sequence[str]) -> list[Middleware]:
    """The request guard (hosts, origins), and CORS for the origins allowed."""
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
    return middleware


def _lifespan(
    chat: ChatApp, *, sweep: bool, owned: bool
) -> Callable[[Starlette], AbstractAsyncContextManager[None]]:
    """Run the continuation sweep while the app serves; at shutdown, let answers end, close the store."""

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        stop, sweeping = asyncio.Event(), None
        if sweep and chat.continuations is not None:
            sweeping = asyncio.create_task(chat.continuations.sweep(stop))
        try:
            yield
        finally:
            stop.set()
            if sweeping is not None:
                await sweeping
            await chat.runner.shutdown(timeout=10)
            if owned:
                chat.store.close()

    return lifespan


def serve(
    store_or_url: ConversationStore | str | None = None,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    responder: Responder | None = None,
    tokens: Mapping[str, str | Identity] | None = None,
    authenticate: Authenticate | None = None,
    log_level: str = "info",
    settings: AppSettings | None = None,
    **overrides: Any,
) -> None:
    """Serve a store (or the store at a URL) over HTTP with uvicorn until interrupted (``chatledger serve``).

    Without a ``responder`` the demo responder answers (the recorded demo turn
    and its continuation, in a loop): enough to try a client against. The
    settings are ``create_app``'s (``settings=`` and keywords); the server
    answers to the localhost names and ``host`` besides ``allowed_hosts``.
    """
    import uvicorn

    from chatledger.adapters.http.server_options import server_options

    settings = settings_with(settings, overrides, caller="serve()")
    hosts = dict.fromkeys([*LOCAL_HOSTS, host, *settings.allowed_hosts])
    app = create_app(
        store_or_url,
        responder=responder or demo_responder(delay=0.05),
        tokens=tokens,
        authenticate=authenticate,
        settings=dataclasses.replace(settings, allowed_hosts=tuple(hosts)),
    )
    options = server_options()
    uvicorn.run(
        app, host=host, port=port, log_level=log_level, loop=options.loop, http=options.http
    )
