"""What clients leave hanging: a request body's read deadline, idle WebSockets, and quiet hang-ups.

* A JSON body must arrive whole within ``body_read_seconds`` of the request
  (``create_app(body_read_seconds=)``, default 30 s): a client sending a byte
  a second otherwise holds its request open as long as it likes. Past the
  deadline the answer is 408 ``RequestTimeoutError`` and the connection is
  closed.
* A WebSocket with no frame from the client and no request in flight for
  ``websocket_idle_seconds`` (default 300 s) is closed (1001, "idle").
* A client that hangs up while its body is read (Starlette's
  ``ClientDisconnect``) is no server error: it is counted and logged at
  debug level, not answered with a traceback.

Each is counted in ``app.state.chatledger.connections`` (``ConnectionCounts``).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response

from chatledger.adapters.http.errors import HTTPProblem

__all__ = [
    "CLIENT_DISCONNECT_HANDLER",
    "DEFAULT_BODY_READ_SECONDS",
    "DEFAULT_WEBSOCKET_IDLE_SECONDS",
    "ConnectionCounts",
    "on_client_disconnect",
    "read_within",
]

DEFAULT_BODY_READ_SECONDS = 30.0
"""How long a request's body may take to arrive, by default."""
DEFAULT_WEBSOCKET_IDLE_SECONDS = 300.0
"""How long a WebSocket may stay silent with nothing in flight, by default."""

log = logging.getLogger("chatledger.http")


@dataclass
class ConnectionCounts:
    """Requests and sockets the server cut off or lost, since it started."""

    body_timeouts: int = 0
    """Bodies that did not arrive within the deadline (answered 408)."""
    disconnects: int = 0
    """Clients that hung up while their body was read."""
    idle_websockets_closed: int = 0
    """WebSockets closed for being idle."""


def _app_of(request: Request) -> Any:
    """The ``ChatApp`` serving ``request`` (None outside chatledger's app)."""
    app = request.scope.get("app")
    return getattr(getattr(app, "state", None), "chatledger", None)


async def read_within(request: Request, limit: int, too_large: HTTPProblem) -> bytes:
    """The request's body, at most ``limit`` bytes (``too_large`` past it), within the app's deadline."""
    chat = _app_of(request)
    seconds = DEFAULT_BODY_READ_SECONDS if chat is None else chat.settings.body_read_seconds
    received = bytearray()
    try:
        async with asyncio.timeout(seconds):
            async for piece in request.stream():
                received += piece
                if len(received) > limit:
                    raise too_large
    except TimeoutError:
        if chat is not None:
            chat.connections.body_timeouts += 1
        raise HTTPProblem(
            408,
            "RequestTimeoutError",
            f"the request body did not arrive within {seconds:g} s: send it whole, at once",
            {"connection": "close"},
        ) from None
    return bytes(received)


async def on_client_disconnect(request: Request, error: Exception) -> Response:
    """The client hung up mid-request: count it, log it quietly; the answer goes nowhere."""
    chat = _app_of(request)
    if chat is not None:
        chat.connections.disconnects += 1
    log.debug("%s %s: the client hung up", request.method, request.url.path)
    return Response(status_code=400, headers={"connection": "close"})


CLIENT_DISCONNECT_HANDLER = {ClientDisconnect: on_client_disconnect}
"""Starlette ``exception_handlers`` entry: a hang-up is not a server error."""
