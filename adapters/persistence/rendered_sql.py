"""PostgreSQL statements rendered to bytes once, where they are built, instead of at every execute.

psycopg turns a composed statement (``sql.SQL(...).format(sql.Identifier(...))``)
into bytes at each ``execute``: every identifier is escaped again through the
connection, before the statement's text is even looked up in psycopg's cache
of parsed queries. On the write path that is the INSERT of every commit (five
identifiers): at 10 live streams about a tenth of the server's time on the
interpreter went to it. A statement made of fixed names renders to the same
bytes each time, so it is rendered once (identifiers quoted as libpq quotes
them, text in UTF-8, the encoding of chatledger's databases) and executed as
bytes, which psycopg takes as they are.
"""

from __future__ import annotations

from psycopg import sql
from psycopg.abc import Query

__all__ = ["rendered"]


def rendered(statement: Query) -> bytes:
    """``statement`` as the bytes psycopg would send for it (no connection needed: fixed names)."""
    if isinstance(statement, sql.Composable):
        return statement.as_bytes(None)
    if isinstance(statement, str):
        return statement.encode()
    if isinstance(statement, bytes):
        return statement
    raise TypeError(f"not a fixed statement: {statement!r}")
