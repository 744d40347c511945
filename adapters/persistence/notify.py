"""Waking on new events: a PostgreSQL connection LISTENing to the channel the store NOTIFYs after each commit."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import psycopg
from psycopg import sql

from chatledger.domain.errors import StoreUnavailableError

if TYPE_CHECKING:
    from chatledger.adapters.persistence.log import ConversationLog

__all__ = ["listen", "wait_for_notify"]


def listen(log: ConversationLog, application_name: str) -> psycopg.Connection[Any]:
    """A dedicated autocommit connection LISTENing on the store's NOTIFY channel.

    Every commit to the log (any conversation) notifies it, and only this
    store's (the channel is named after its schema and events table:
    ``postgres_recorder.channel_of``); callers re-read
    what concerns them. ``application_name`` shows in ``pg_stat_activity``.
    """
    recorder: Any = log.recorder
    env = log.config.env
    try:
        connection = psycopg.connect(
            dbname=env["POSTGRES_DBNAME"],
            host=env["POSTGRES_HOST"],
            port=int(env["POSTGRES_PORT"]),
            user=env["POSTGRES_USER"],
            password=env.get("POSTGRES_PASSWORD") or None,
            connect_timeout=int(env.get("POSTGRES_CONNECT_TIMEOUT") or 5),
            application_name=application_name,
            autocommit=True,
        )
    except psycopg.Error as error:
        raise StoreUnavailableError(f"cannot listen for new events: {error}") from error
    try:
        connection.execute(sql.SQL("LISTEN {}").format(sql.Identifier(recorder.channel_name)))
    except psycopg.Error as error:
        connection.close()
        raise StoreUnavailableError(f"cannot listen for new events: {error}") from error
    return connection


def wait_for_notify(listener: psycopg.Connection[Any], seconds: float) -> None:
    """Sleep until a NOTIFY arrives (any conversation: the caller re-reads its own) or ``seconds`` pass."""
    try:
        for _ in listener.notifies(timeout=seconds, stop_after=1):
            pass
    except psycopg.Error as error:
        raise StoreUnavailableError(
            f"lost the connection listening for new events: {error}"
        ) from error
