"""The bytes a store keeps on disk, file by file: a SQLite file and its WAL, every PostgreSQL relation file.

Erasure tests search these for canaries, as an attacker with the disk would:
SQLite's main file and ``-wal`` as they are; on PostgreSQL, after a
``CHECKPOINT`` (so shared buffers are on disk), every file of every table,
index and TOAST relation of the store's schema, and the WAL segments.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg

from tests.integration.conftest import Backend

__all__ = ["files_holding", "store_files"]

_RELATIONS = """
SELECT pg_relation_filepath(c.oid) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = %(schema)s AND c.relkind IN ('r', 'i', 't', 'm')
UNION ALL
SELECT pg_relation_filepath(t.oid) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
JOIN pg_class t ON t.oid IN (
    c.reltoastrelid, (SELECT indexrelid FROM pg_index WHERE indrelid = c.reltoastrelid LIMIT 1)
)
WHERE n.nspname = %(schema)s AND c.reltoastrelid <> 0
"""


def store_files(backend: Backend) -> dict[str, list[Path]]:
    """The store's files by kind: ``file`` and ``wal`` (SQLite), ``relations`` and ``wal`` (PostgreSQL)."""
    if backend.name == "sqlite":
        path = Path(backend.url.removeprefix("sqlite:///"))
        wal = path.with_name(path.name + "-wal")
        return {"file": [path], "wal": [wal] if wal.exists() else []}
    schema = backend.url.rsplit("schema=", 1)[1]
    server = urlunsplit(urlsplit(backend.url)._replace(query=""))  # the store's own database
    with psycopg.connect(server, autocommit=True) as connection:
        connection.execute("CHECKPOINT")  # what shared buffers hold, written to the files
        (data,) = connection.execute("SHOW data_directory").fetchone() or ("",)
        paths = [row[0] for row in connection.execute(_RELATIONS, {"schema": schema}) if row[0]]
    relations = [
        segment
        for path in paths
        for segment in sorted(Path(data).glob(path + "*"))
        if segment.name.split("_")[0].split(".")[0] == Path(path).name  # main fork and .1, .2...
    ]
    wal = sorted(p for p in (Path(data) / "pg_wal").iterdir() if p.is_file() and len(p.name) == 24)
    return {"relations": relations, "wal": wal}


def files_holding(files: list[Path], needles: list[bytes]) -> list[str]:
    """The files (by name) that hold any of ``needles``, as bytes or lowercased."""
    found = []
    for path in files:
        data = path.read_bytes()
        low = data.lower()
        if any(n in data or n.lower() in low for n in needles):
            found.append(path.name)
    return found
