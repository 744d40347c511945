"""The HTTP app's settings, in one frozen value: ``AppSettings``.

``create_app(store, responder=..., settings=AppSettings(...))`` takes it;
``app.state.chatledger.settings`` is the one the app runs with. The
settings are also accepted as keyword arguments of ``create_app``
(``create_app(store, responder=r, keepalive_seconds=5)``), checked against
the fields below, so this class is the only list of them. Who answers (the
responder) and who may call (``tokens``, ``authenticate``) are given beside
the settings, not in them.

Values are checked when an ``AppSettings`` is made: a wrong type raises
``TypeError``, a value out of range ``ValueError``, each naming the setting
and what to give instead.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from chatledger.adapters.http.continuations import MAX_WAIT_SECONDS
from chatledger.adapters.http.deadlines import (
    DEFAULT_BODY_READ_SECONDS,
    DEFAULT_WEBSOCKET_IDLE_SECONDS,
)
from chatledger.adapters.http.guard import LOCAL_HOSTS
from chatledger.domain.owners import check_owner
from chatledger.domain.seal import SealKey

__all__ = ["AppSettings", "settings_with"]


@dataclass(frozen=True, kw_only=True)
class AppSettings:
    """How the HTTP app behaves: its deadlines, limits, continuations, trusted browsers and seal key."""

    keepalive_seconds: float = 15.0
    """How long an answer's stream (SSE or WebSocket) stays quiet before a keep-alive is sent."""
    max_body_bytes: int = 32_000_000
    """The largest ``POST /api/chat`` body (413 past it); the other routes' smaller limits stay
    under it."""
    body_read_seconds: float = DEFAULT_BODY_READ_SECONDS
    """How long a request body may take to arrive whole (408 past it; ``deadlines.py``)."""
    websocket_idle_seconds: float = DEFAULT_WEBSOCKET_IDLE_SECONDS
    """How long a WebSocket may stay silent with no request in flight before it is closed."""
    answer_idle_seconds: float = 300.0
    """How long an answer streamed in by another server (``POST /api/chats/{id}/answers``) may
    stay silent before its stream is closed ``interrupted`` (its writer is taken for gone)."""
    run_continuations: bool = True
    """Whether the app runs continuations at all (False: a ``chatledger worker`` does)."""
    continuation_poll_seconds: float | None = 2.0
    """How often the app claims and runs the continuation requests nobody took (None: never;
    those given through its own JSON endpoints still run at once)."""
    continuation_grace_seconds: float = 5.0
    """How old a continuation request must be before the sweep takes it from the process that
    recorded it."""
    continuation_wait_seconds: float = MAX_WAIT_SECONDS
    """The longest ``POST /api/continuations/claim`` (an external owner's long poll) waits."""
    owner: str | None = None
    """The owner whose conversations the app starts and continues (None: ``responder:<the
    responder's actor>``); it also runs those owned by ``any``, never another runtime's."""
    cors_origins: tuple[str, ...] = ()
    """Origins whose browser pages may call the app (``"*"``: any); pages of other origins are
    refused (403)."""
    allowed_hosts: tuple[str, ...] = LOCAL_HOSTS
    """The ``Host`` names the app answers to (``"*"``: any), which keeps DNS-rebinding pages out
    (``guard.py``)."""
    seal_key: SealKey | None = None
    """The key (or its public half) the verify page checks the newest seal's signature with
    (None: seals are shown unchecked)."""

    def __post_init__(self) -> None:
        for name in ("keepalive_seconds", "body_read_seconds", "websocket_idle_seconds"):
            _seconds(self, name, above_zero=True)
        _seconds(self, "answer_idle_seconds", above_zero=True)
        for name in ("continuation_grace_seconds", "continuation_wait_seconds"):
            _seconds(self, name, above_zero=False)
        if self.continuation_poll_seconds is not None:
            _seconds(self, "continuation_poll_seconds", above_zero=True, none="None: never")
        size = self.max_body_bytes
        if isinstance(size, bool) or not isinstance(size, int):
            raise TypeError(f"max_body_bytes takes a whole number of bytes, not {size!r}")
        if size < 1:
            raise ValueError(f"max_body_bytes must be 1 or more (default 32_000_000), not {size}")
        if not isinstance(self.run_continuations, bool):
            raise TypeError(
                f"run_continuations takes True or False, not {self.run_continuations!r}"
            )
        if self.owner is not None:
            check_owner(self.owner)
        _names(self, "cors_origins", "e.g. ['https://chat.example.com']")
        _names(self, "allowed_hosts", "e.g. ['localhost', 'chat.example.com']")
        if self.seal_key is not None and not isinstance(self.seal_key, SealKey):
            raise TypeError(
                "seal_key takes a SealKey (SealKey.from_text(the key file's text)) or None, "
                f"not {type(self.seal_key).__name__}"
            )


def _seconds(settings: AppSettings, name: str, *, above_zero: bool, none: str = "") -> None:
    """Refuse a duration that is not a number of seconds, or is below its least value."""
    value = getattr(settings, name)
    default = next(f.default for f in dataclasses.fields(AppSettings) if f.name == name)
    fix = f"give a number of seconds such as {default!r} (the default){'; ' + none if none else ''}"
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{name} takes a number of seconds, not {value!r}: {fix}")
    if math.isnan(value) or value < 0 or (above_zero and value == 0):
        least = "above 0" if above_zero else "0 or more"
        raise ValueError(f"{name} must be {least}, not {value!r}: {fix}")


def _names(settings: AppSettings, name: str, example: str) -> None:
    """Keep a list of names as a tuple of strings; one bare string would be split into letters."""
    value = getattr(settings, name)
    wrong = TypeError(f"{name} takes a list of strings, {example}, not {value!r}")
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        raise wrong
    names = tuple(value)
    if not all(isinstance(one, str) for one in names):
        raise wrong
    object.__setattr__(settings, name, names)  # frozen: set once, here


def settings_with(
    settings: AppSettings | None, overrides: Mapping[str, Any], *, caller: str
) -> AppSettings:
    """``settings`` (default: ``AppSettings()``) with the keyword ``overrides`` of ``caller``.

    An unknown keyword is a ``TypeError`` naming it and the settings there are.
    """
    known = [field.name for field in dataclasses.fields(AppSettings)]
    unknown = sorted(set(overrides) - set(known))
    if unknown:
        close = difflib.get_close_matches(unknown[0], known, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise TypeError(
            f"{caller} got an unexpected keyword argument {unknown[0]!r}{hint}; its settings "
            f"(as keywords or in settings=AppSettings(...)) are: {', '.join(known)}"
        )
    return dataclasses.replace(settings or AppSettings(), **overrides)
