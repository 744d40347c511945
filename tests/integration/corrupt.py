"""One stored row damaged by hand, in any table of a real SQLite file or PostgreSQL schema.

What a bad restore, a disk error or a hand edit does to one row: change a
value in it (``alter``), delete it (``remove``), give it to another
conversation (``swap``: its conversation id exchanged with that of a row of
another conversation in the same table) or make a value unreadable
(``undecodable``: garbage bytes or text where JSON, a compressed event or a
number's text belongs). The row is named by all its values, so tables
without a rowid work too.
"""

from __future__ import annotations

import sqlite3
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import psycopg

from tests.integration.tamper import Tamperer

KINDS = ("alter", "remove", "swap", "undecodable")

KEY_COLUMNS = ("originator_id", "conversation_id")
"""The columns that say which conversation a row belongs to."""


@dataclass(frozen=True)
class Damage:
    """What was done: the table, the kind, the column changed (None: the whole row)."""

    table: str
    kind: str
    column: str | None

    def __str__(self) -> str:
        return f"{self.kind} {self.table}" + (f".{self.column}" if self.column else "")


class Corrupter(Tamperer):
    """Raw SQL that damages one row of one table."""

    def tables(self) -> list[str]:
        """The store's tables that hold rows (full-text search internals left out)."""
        if self.postgres:
            rows = self.run(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = "
                "current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name"
            )
        else:
            rows = self.run(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE "
                "'%search_v2%' ORDER BY name"
            )
        return [name for (name,) in rows if self.rows(name)]

    def columns(self, table: str) -> list[str]:
        if self.postgres:
            rows = self.run(
                "SELECT column_name FROM information_schema.columns WHERE table_schema = "
                "current_schema() AND table_name = ? ORDER BY ordinal_position",
                table,
            )
            return [name for (name,) in rows]
        return [row[1] for row in self.run(f'PRAGMA table_info("{table}")')]

    def rows(self, table: str) -> list[tuple[Any, ...]]:
        return self.run(f'SELECT * FROM "{table}" ORDER BY 1, 2')

    def damage(self, table: str, kind: str, row: int, column: int, other: int) -> Damage | None:
        """Damage row ``row`` (modulo the count) of ``table``; None when it cannot be done that way."""
        columns = self.columns(table)
        rows = self.rows(table)
        values = rows[row % len(rows)]
        if kind == "remove":
            self._delete(table, columns, values)
            return Damage(table, kind, None)
        if kind == "swap":
            return self._swap(table, columns, rows, values, other)
        name = columns[column % len(columns)]
        old = values[columns.index(name)]
        new = _altered(old) if kind == "alter" else _garbage(old)
        if new is None or new == old:
            return None
        try:
            self._update(table, columns, values, {name: new})
        except (
            psycopg.Error,
            sqlite3.Error,
            ValueError,
        ):  # a constraint refuses it: no such damage
            return None
        return Damage(table, kind, name)

    def _swap(
        self,
        table: str,
        columns: list[str],
        rows: list[tuple[Any, ...]],
        values: tuple[Any, ...],
        other: int,
    ) -> Damage | None:
        """Exchange the conversation ids of this row and one of another conversation at the same position."""
        key = next((c for c in KEY_COLUMNS if c in columns), None)
        if key is None:
            return None
        at = columns.index(key)
        place = next(
            (columns.index(c) for c in ("originator_version", "position") if c in columns), None
        )
        others = [
            r for r in rows if r[at] != values[at] and (place is None or r[place] == values[place])
        ]
        if not others:
            return None
        partner = others[other % len(others)]
        parked = uuid.uuid4() if isinstance(values[at], uuid.UUID) else uuid.uuid4().hex
        self._update(table, columns, values, {key: parked})
        moved = tuple(parked if i == at else v for i, v in enumerate(values))
        self._update(table, columns, partner, {key: values[at]})
        self._update(table, columns, moved, {key: partner[at]})
        return Damage(table, "swap", key)

    def _where(self, columns: list[str], values: tuple[Any, ...]) -> tuple[str, list[Any]]:
        same = "IS NOT DISTINCT FROM" if self.postgres else "IS"
        return " AND ".join(f'"{c}" {same} ?' for c in columns), list(values)

    def _delete(self, table: str, columns: list[str], values: tuple[Any, ...]) -> None:
        where, params = self._where(columns, values)
        self.run(f'DELETE FROM "{table}" WHERE {where}', *params)

    def _update(
        self, table: str, columns: list[str], values: tuple[Any, ...], new: dict[str, Any]
    ) -> None:
        where, params = self._where(columns, values)
        sets = ", ".join(f'"{c}" = ?' for c in new)
        self.run(f'UPDATE "{table}" SET {sets} WHERE {where}', *new.values(), *params)


def _altered(value: Any) -> Any:
    """Another value of the same type, as a hand edit would leave it."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return value + 1
    if isinstance(value, bytes | memoryview):
        raw = bytearray(bytes(value))
        if not raw:
            return b"\x01"
        raw[len(raw) // 2] ^= 0x01
        return bytes(raw)
    if isinstance(value, uuid.UUID):
        return uuid.uuid4()
    if isinstance(value, datetime):
        return value + timedelta(seconds=1)
    if isinstance(value, str):
        if value.startswith(("{", "[")) and len(value) > 2:
            return value.replace(":", ": ", 1) if '"' not in value else value.replace('"', '"x', 1)
        return value + "x"
    return None


def _garbage(value: Any) -> Any:
    """A value of the column's type that no reader can decode."""
    if isinstance(value, bytes | memoryview):
        return b"\x00\xffnot an event\xfe"
    if isinstance(value, str):
        return "{not json \u0001"
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return -(2**31)
    return None
