"""Who may drive the app from a browser: the ``Host`` names it answers to and the ``Origin``s it trusts.

A server on localhost without tokens must not be driven by any web page the
user happens to open: a page on another site can POST to it (a "simple"
request needs no preflight), and a DNS-rebinding page can make its own host
name point at 127.0.0.1 and read the answers. ``RequestGuard`` refuses

* a ``Host`` that is not one of the configured names (400
  ``HostNotAllowedError``): by default the localhost names, plus the bind
  address under ``serve``;
* an ``Origin`` that is neither the app's own (same host and port) nor one of
  the CORS origins (403 ``OriginNotAllowedError``), its CORS preflight
  (``OPTIONS``) too, which would otherwise get a bare 405. Requests without an
  ``Origin`` (command-line clients, servers) pass; the preflights of trusted
  origins are left to the CORS middleware.

JSON bodies must also say ``Content-Type: application/json``
(``requests.read_body``), which a cross-site form or ``text/plain`` POST cannot.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = ["LOCAL_HOSTS", "RequestGuard", "host_name"]

LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1")
"""The host names a local server answers to by default."""


def host_name(host: str) -> str:
    """The name in a ``Host`` header, without its port (``[::1]:8000`` -> ``::1``), lowercased."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


class RequestGuard:
    """ASGI middleware refusing unknown ``Host`` names and foreign ``Origin``s with a JSON error."""

    def __init__(
        self, app: ASGIApp, *, allowed_hosts: Iterable[str], cors_origins: Iterable[str] = ()
    ) -> None:
        self.app = app
        self.allowed_hosts = {host_name(h) for h in allowed_hosts}
        self.any_host = "*" in self.allowed_hosts
        self.cors_origins = {o.rstrip("/").lower() for o in cors_origins}
        self.any_origin = "*" in self.cors_origins

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        host = headers.get("host", "")
        if not self.any_host and host_name(host) not in self.allowed_hosts:
            allowed = ", ".join(sorted(self.allowed_hosts))
            await _refuse(
                send,
                400,
                "HostNotAllowedError",
                f"this server does not answer to the host {host!r} (it answers to {allowed}; "
                "add a name with --allowed-host)",
            )
            return
        origin = headers.get("origin")
        if origin is not None and not self._trusted(origin, host):
            await _refuse(
                send,
                403,
                "OriginNotAllowedError",
                f"requests from pages of {origin!r} are not allowed (only this server's own "
                "pages and the --cors-origin origins may call it)",
            )
            return
        await self.app(scope, receive, send)

    def _trusted(self, origin: str, host: str) -> bool:
        if self.any_origin or origin.rstrip("/").lower() in self.cors_origins:
            return True
        parts = urlsplit(origin)
        return parts.scheme in ("http", "https") and parts.netloc.lower() == host.strip().lower()


async def _refuse(send: Send, status: int, type_name: str, message: str) -> None:
    body = json.dumps({"error": {"type": type_name, "message": message}}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
