"""How many transactions a turn costs: the peers' workload written through the store's defaults.

Counts the log's ``record`` calls (each is one transaction) and, on
PostgreSQL, the transactions that wrote the events table as the server saw
them (distinct ``xmin`` of the rows). ``start_conversation`` is counted
apart. Each run measures the default open (``commit=True``: stored before
``open_stream`` returns) and ``open_stream(..., commit=False)`` (the open
committed with the stream's first batch), each on a fresh database; an
installation without that option reports it as unsupported. The
installation measured is whichever ``chatledger`` the interpreter imports,
so running it with two interpreters compares two installations:

    python bench/commits.py --backend postgres
    (cd /work/main && python3 /path/to/bench/commits.py --backend postgres)
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import psycopg
from backends import DEFAULT_POSTGRES_URL, fresh_db
from psycopg import sql
from workload import conversation


def measure(
    backend: str, conversations: int, turns: int, postgres_url: str, commit: bool = True
) -> dict[str, Any]:
    import chatledger
    from chatledger import ConversationStore
    from chatledger.adapters.persistence.log import ConversationLog

    convs = [conversation(i, turns) for i in range(conversations)]
    order = [(c.chat_id, c.turns[t]) for t in range(turns) for c in convs]
    records = [0]
    real = ConversationLog.record

    def record(self: Any, *args: Any, **kwargs: Any) -> Any:
        records[0] += 1
        return real(self, *args, **kwargs)

    with fresh_db(backend, postgres_url, name="commits") as db:  # type: ignore[arg-type]
        store = ConversationStore.open(db.url)
        for c in convs:
            store.start_conversation(c.chat_id, actor="user:bench")
        ConversationLog.record = record  # type: ignore[method-assign]
        try:
            deferred: dict[str, Any] = {} if commit else {"commit": False}
            for chat, turn in order:
                stream = store.open_stream(
                    chat,
                    actor="agent:bench",
                    user_message=turn.user_message,
                    user_actor="user:b",
                    **deferred,
                )
                for chunk in turn.chunks:
                    stream.append(chunk)
                stream.close(outcome="finished")
        finally:
            ConversationLog.record = real  # type: ignore[method-assign]
            recorder: Any = store.log.recorder
            table = recorder.events_table_name
            store.close()
        result: dict[str, Any] = {
            "installation": chatledger.__file__,
            "backend": backend,
            "open": "commit=True (default)" if commit else "commit=False",
            "turns": len(order),
            "records_per_turn": records[0] / len(order),
        }
        if db.postgres_url is not None and db.schema is not None:
            with psycopg.connect(db.postgres_url) as connection:
                row = connection.execute(
                    sql.SQL("SELECT count(DISTINCT xmin::text) FROM {}").format(
                        sql.Identifier(db.schema, table)
                    )
                ).fetchone()
            assert row is not None
            # the start_conversation transactions are in the table too
            result["server_transactions_per_turn"] = (int(row[0]) - conversations) / len(order)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=("sqlite", "postgres"), default="postgres")
    parser.add_argument("--conversations", type=int, default=20)
    parser.add_argument("--turns", type=int, default=8)
    parser.add_argument("--postgres-url", default=DEFAULT_POSTGRES_URL)
    args = parser.parse_args(argv)
    for commit in (True, False):
        try:
            result = measure(
                args.backend, args.conversations, args.turns, args.postgres_url, commit
            )
        except TypeError as error:  # an installation without open_stream(commit=...)
            result = {"open": f"commit={commit}", "unsupported": str(error)}
        json.dump(result, sys.stdout)
        print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
