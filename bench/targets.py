"""The targets the store is measured against, and published figures of peer stores for context.

Peer figures were measured elsewhere (not by this suite) on a similar workload;
they are printed as reference rows only.
"""

from __future__ import annotations

INGEST_CHUNKS_PER_S = {"sqlite": 30_000, "postgres": 15_000}
SIZE_BYTES_PER_TURN = {"sqlite": 4 * 1024}
LOAD_MS = 2.0
CRASH_LOST_MS = 50.0

SIZE_PEERS_KB_PER_TURN: list[tuple[str, str]] = [
    ("OpenAI Agents SDK SQLiteSession", "1.8"),
    ("LangGraph SqliteSaver", "54 (6.3 delta channel)"),
    ("naive eventsourcing (one event per chunk)", "37"),
]
LOAD_PEERS_MS: list[tuple[str, str]] = [
    ("OpenAI Agents SDK SQLiteSession", "1.1"),
    ("LangGraph SqliteSaver", "1.4"),
    ("naive eventsourcing replay", "61"),
]
