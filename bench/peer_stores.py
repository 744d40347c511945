"""The stores compared in ``peers.py``: chatledger and the peers, each writing the same turns.

Every store here takes the same workload turn (a user message and the reply's
chunks) and writes it the way that store is used: chatledger keeps every chunk
(``append`` per chunk through an open stream); the OpenAI Agents SDK sessions
keep the turn's final items (user message, function call and its output,
assistant message); LangGraph's savers keep the checkpoints a one-node
``MessagesState`` graph writes when invoked with the turn. Each store can
also load a conversation back, the way its users read one.

A peer whose package is missing is reported as unavailable (``missing``), with
the pip command that adds it.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import psycopg
from backends import FreshDb
from storeapi import AGENT_ACTOR, USER_ACTOR, load_opener
from workload import Turn

WriteOrder = list[tuple[str, Turn]]
"""(chat id, turn) in the order they are written: turn by turn across all conversations."""


@dataclass
class Timing:
    """What one store's run measured."""

    seconds: float
    turns: int
    load_ms: list[float]
    cpu_seconds: float = 0.0
    """CPU time of this process (all its threads) over the same writes: on a busy machine
    much steadier than wall-clock time; it leaves out the database server's CPU (PostgreSQL)."""


def _tool_call(turn: Turn) -> tuple[str, str, Any, Any] | None:
    """(call id, tool name, input, output) of the turn's tool call, if it has one."""
    if turn.tool_call_id is None:
        return None
    found: dict[str, Any] = {}
    for chunk in turn.chunks:
        if chunk["type"] == "tool-input-available":
            found["name"], found["input"] = chunk["toolName"], chunk["input"]
        elif chunk["type"] == "tool-output-available":
            found["output"] = chunk["output"]
    return turn.tool_call_id, found["name"], found["input"], found["output"]


def _user_text(turn: Turn) -> str:
    return str(turn.user_message["parts"][0]["text"])


# -- chatledger -------------------------------------------------------------------


def run_chatledger(
    db: FreshDb,
    order: WriteOrder,
    samples: list[str],
    url_suffix: str = "",
    settle: float | None = None,
    message_with_open: bool = True,
    batch_chunks: int | None = None,
    commit_open: bool = True,
) -> Timing:
    """Every chunk through ``open_stream``/``append``/``close``; load with ``messages()``.

    ``settle`` (seconds) sets ``BatchPolicy.settle``: 0 is the cadence before issue 16
    (a commit right after every boundary chunk). ``message_with_open`` records the user
    message in the stream open's transaction (``open_stream(user_message=...)``);
    otherwise ``append_message`` commits it first, as before issue 16. ``batch_chunks``
    sets ``BatchPolicy.max_chunks`` (64 was the default before batches were committed on age).
    ``commit_open=False`` opens with ``open_stream(..., commit=False)``: the open (and the user
    message with it) is committed with the stream's first batch, not before ``open_stream``
    returns (installations without that option refuse it).
    """
    import time

    opener = load_opener()
    if settle is not None or batch_chunks is not None:
        # by import path, like storeapi: mypy does not see the editable install
        import importlib

        bootstrap: Any = importlib.import_module("chatledger.adapters.bootstrap")
        facade: Any = importlib.import_module("chatledger.adapters.store.store")
        policy_module: Any = importlib.import_module("chatledger.adapters.store.streams.policy")
        policy: dict[str, Any] = {"settle": settle}
        if batch_chunks is not None:
            policy["max_chunks"] = batch_chunks
        store: Any = facade.open_store(
            db.url + url_suffix,
            bootstrap.StoreOptions(batch=policy_module.BatchPolicy(**policy)),
        )
    else:
        store = opener(db.url + url_suffix)
    started: set[str] = set()
    deferred: dict[str, Any] = {} if commit_open else {"commit": False}
    c0, t0 = time.process_time(), time.perf_counter()
    try:
        for chat, turn in order:
            if chat not in started:
                store.start_conversation(chat, actor=USER_ACTOR)
                started.add(chat)
            if message_with_open:
                stream = store.open_stream(
                    chat,
                    actor=AGENT_ACTOR,
                    user_message=turn.user_message,
                    user_actor=USER_ACTOR,
                    **deferred,
                )
            else:
                store.append_message(chat, turn.user_message, actor=USER_ACTOR)
                stream = store.open_stream(chat, actor=AGENT_ACTOR, **deferred)
            for chunk in turn.chunks:
                stream.append(chunk)
            stream.close(outcome="finished")
    finally:
        store.close()
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    store = opener(db.url + url_suffix)
    try:
        load_ms = _timed(lambda chat: store.messages(chat), samples)
    finally:
        store.close()
    return Timing(seconds, len(order), load_ms, cpu)


def _timed(load: Callable[[str], object], samples: Iterable[str]) -> list[float]:
    import time

    out = []
    for chat in samples:
        t0 = time.perf_counter()
        load(chat)
        out.append((time.perf_counter() - t0) * 1000)
    return out


# -- OpenAI Agents SDK sessions ------------------------------------------------------


def _agents_items(turn: Turn) -> tuple[list[Any], list[list[Any]]]:
    """(the user input items, the model responses' output items, one list per model call)."""
    user = [{"role": "user", "content": _user_text(turn)}]
    responses: list[list[Any]] = []
    call = _tool_call(turn)
    if call is not None:
        call_id, name, args, output = call
        responses.append(
            [
                {
                    "type": "function_call",
                    "call_id": call_id,
                    "name": name,
                    "arguments": json.dumps(args),
                },
                {"type": "function_call_output", "call_id": call_id, "output": json.dumps(output)},
            ]
        )
    responses.append(
        [
            {
                "type": "message",
                "id": turn.message_id,
                "role": "assistant",
                "status": "completed",
                "content": [
                    {"type": "output_text", "text": turn.assistant_text, "annotations": []}
                ],
            }
        ]
    )
    return user, responses


async def _agents_run(
    make: Callable[[str], Any], order: WriteOrder, samples: list[str], split: bool
) -> Timing:
    import time

    sessions: dict[str, Any] = {}
    c0, t0 = time.process_time(), time.perf_counter()
    for chat, turn in order:
        session = sessions.get(chat)
        if session is None:
            session = sessions[chat] = make(chat)
        user, responses = _agents_items(turn)
        if split:  # as Runner.run saves: the input, then each model response's items
            await session.add_items(user)
            for items in responses:
                await session.add_items(items)
        else:
            await session.add_items(user + [item for items in responses for item in items])
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    load_ms = []
    for chat in samples:
        fresh = make(chat)
        t1 = time.perf_counter()
        await fresh.get_items()
        load_ms.append((time.perf_counter() - t1) * 1000)
        await _close(fresh)
    for session in sessions.values():
        await _close(session)
    return Timing(seconds, len(order), load_ms, cpu)


async def _close(session: Any) -> None:
    close = getattr(session, "close", None)
    if close is not None:
        result = close()
        if asyncio.iscoroutine(result):
            await result


def run_sqlite_session(db: FreshDb, order: WriteOrder, samples: list[str], split: bool) -> Timing:
    """OpenAI Agents ``SQLiteSession`` on a file next to chatledger's."""
    from agents import SQLiteSession

    assert db.sqlite_path is not None
    path = db.sqlite_path
    return asyncio.run(_agents_run(lambda chat: SQLiteSession(chat, path), order, samples, split))


def run_sqlalchemy_session(
    db: FreshDb, order: WriteOrder, samples: list[str], split: bool
) -> Timing:
    """OpenAI Agents ``SQLAlchemySession`` over asyncpg, in the measurement's own schema."""
    from agents.extensions.memory.sqlalchemy_session import SQLAlchemySession
    from sqlalchemy.ext.asyncio import create_async_engine

    assert db.postgres_url is not None
    url = db.postgres_url.replace("postgresql://", "postgresql+asyncpg://", 1)

    async def run() -> Timing:
        engine = create_async_engine(
            url, connect_args={"server_settings": {"search_path": str(db.schema)}}
        )
        try:
            first = SQLAlchemySession("setup", engine=engine, create_tables=True)
            await first._ensure_tables()
            return await _agents_run(
                lambda chat: SQLAlchemySession(chat, engine=engine), order, samples, split
            )
        finally:
            await engine.dispose()

    return asyncio.run(run())


# -- LangGraph savers ---------------------------------------------------------------------


def _langgraph_messages(turn: Turn) -> list[Any]:
    from langchain_core.messages import AIMessage, ToolMessage

    out: list[Any] = []
    call = _tool_call(turn)
    if call is not None:
        call_id, name, args, output = call
        out.append(AIMessage(content="", tool_calls=[{"id": call_id, "name": name, "args": args}]))
        out.append(ToolMessage(content=json.dumps(output), tool_call_id=call_id))
    out.append(AIMessage(content=turn.assistant_text, id=turn.message_id))
    return out


def _run_graph(saver: Any, order: WriteOrder, samples: list[str]) -> Timing:
    """A one-node ``MessagesState`` graph whose node answers with the turn's reply messages."""
    import time

    from langchain_core.messages import HumanMessage
    from langgraph.graph import START, MessagesState, StateGraph

    reply: list[Any] = []

    def model(state: MessagesState) -> dict[str, Any]:
        return {"messages": reply}

    builder = StateGraph(MessagesState)
    builder.add_node("model", model)
    builder.add_edge(START, "model")
    graph = builder.compile(checkpointer=saver)
    prepared = [
        (
            chat,
            HumanMessage(content=_user_text(turn), id=turn.user_message["id"]),
            _langgraph_messages(turn),
        )
        for chat, turn in order
    ]
    c0, t0 = time.process_time(), time.perf_counter()
    for chat, human, answer in prepared:
        reply[:] = answer
        graph.invoke({"messages": [human]}, {"configurable": {"thread_id": chat}})
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    load_ms = _timed(
        lambda chat: graph.get_state({"configurable": {"thread_id": chat}}).values["messages"],
        samples,
    )
    return Timing(seconds, len(order), load_ms, cpu)


def run_langgraph_sqlite(db: FreshDb, order: WriteOrder, samples: list[str]) -> Timing:
    """LangGraph ``SqliteSaver`` on a file next to chatledger's."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    assert db.sqlite_path is not None
    conn = sqlite3.connect(db.sqlite_path, check_same_thread=False)
    try:
        return _run_graph(SqliteSaver(conn), order, samples)
    finally:
        conn.close()


def run_langgraph_postgres(db: FreshDb, order: WriteOrder, samples: list[str]) -> Timing:
    """LangGraph ``PostgresSaver`` in the measurement's own schema."""
    from langgraph.checkpoint.postgres import PostgresSaver
    from psycopg.rows import dict_row

    assert db.postgres_url is not None
    conn = psycopg.connect(
        db.postgres_url,
        autocommit=True,
        prepare_threshold=0,
        row_factory=dict_row,
        options=f"-c search_path={db.schema}",
    )
    try:
        saver = PostgresSaver(conn)
        saver.setup()
        return _run_graph(saver, order, samples)
    finally:
        conn.close()


# -- what is available -------------------------------------------------------------------------


def missing(module: str, pip: str) -> str | None:
    """None when ``module`` imports, else how to install it."""
    import importlib

    try:
        importlib.import_module(module)
    except ImportError as error:
        return f"{error}; install with: pip install {pip}"
    return None
