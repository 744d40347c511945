"""The event loop and HTTP parser ``chatledger serve`` runs uvicorn with: the fast ones when installed.

uvloop and httptools are dependencies (uvloop has no Windows build): they
are the cheaper loop and parser per event. They are chosen here by name rather
than left to uvicorn's ``auto``, so the startup line can say which are in use
and an installation without them falls back visibly.
"""

from __future__ import annotations

import importlib.util
from typing import NamedTuple

__all__ = ["ServerOptions", "server_options"]


class ServerOptions(NamedTuple):
    """uvicorn's ``loop`` and ``http`` settings."""

    loop: str
    """``uvloop`` when installed, else ``asyncio``."""
    http: str
    """``httptools`` when installed, else ``h11``."""

    def describe(self) -> str:
        """For the startup line: ``event loop uvloop, HTTP parser httptools``."""
        return f"event loop {self.loop}, HTTP parser {self.http}"


def server_options() -> ServerOptions:
    """The fastest event loop and HTTP parser installed."""
    loop = "uvloop" if importlib.util.find_spec("uvloop") is not None else "asyncio"
    http = "httptools" if importlib.util.find_spec("httptools") is not None else "h11"
    return ServerOptions(loop, http)
