"""What ``ChatLedgerSession`` needs around the OpenAI Agents SDK: the SDK on demand, its settings, settled calls.

The session matches the SDK's ``Session`` protocol without importing the SDK;
it imports it only for what needs it (a ``RunState``, settings given as a
dict). Its async methods run the synchronous store calls in a worker thread,
and a write there cannot be stopped half way, so a cancellation is reported
only once the write has settled.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["agents_sdk", "coerce_settings", "settled"]

T = TypeVar("T")


def coerce_settings(value: Any) -> Any:
    """``session_settings`` as the SDK's own sessions take it: a dict becomes ``SessionSettings``.

    The SDK validates it (a bad ``limit`` raises as it does for ``SQLiteSession``).
    Only a dict needs the ``agents`` package.
    """
    if value is None or not isinstance(value, dict):
        return value
    coerce_session_settings = agents_sdk().memory.session_settings.coerce_session_settings

    return coerce_session_settings(value)


def agents_sdk() -> Any:
    """The ``agents`` package (the OpenAI Agents SDK), imported when a method needs it."""
    try:
        import agents
        import agents.memory.session_settings
    except ImportError as error:
        raise ImportError(
            "this needs the OpenAI Agents SDK, which is not installed: "
            "pip install 'chatledger[agents]'"
        ) from error
    return agents


async def settled(function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run a store call in a worker thread; a cancellation is reported once the call has finished.

    The write in the thread cannot be stopped half way, so the caller learns
    of its cancellation only when what was written is settled.
    """
    task = asyncio.ensure_future(asyncio.to_thread(function, *args, **kwargs))
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        while not task.done():
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.wait({task})
        raise
