"""``LangGraphResponder``: a LangGraph agent answering chatledger conversations.

A compiled LangGraph graph whose state has a ``messages`` channel (a
``MessagesState``, ``create_react_agent``, ...) answers through
``chatledger serve --responder MODULE:NAME``, ``chatledger worker`` and
``create_app(store, responder=...)``; import it from ``chatledger.adapters.langgraph``::

    from chatledger.adapters.langgraph import LangGraphResponder, checkpointer_for

    graph = builder.compile(checkpointer=checkpointer_for("sqlite:///chat.db"))
    responder = LangGraphResponder(graph)

**What the graph is given.** A new turn (``submit-message``,
``regenerate-message``) runs the graph on the conversation as the store holds
it, converted to LangChain messages (``langgraph_messages``): chatledger's log
is the history, so edits, regenerations and redactions reach the model as
every view shows them. Each answer runs in a LangGraph thread of its own,
``chatledger:<tenant>:<chat>:<message id>``; the graph's checkpointer keeps
only what a paused answer needs to resume.

**What it streams.** The run's ``messages`` and ``updates`` streams become UI
message chunks (``langgraph_chunks.ChunkMapper``): text, reasoning, tool
inputs, tool results, one step per model call. Every chat model call a node
makes streams into the answer; tag a model whose output is not the answer (a
router, a summarizer) with ``nostream`` (``model.with_config(tags=["nostream"])``)
and LangGraph leaves its tokens out.

**Approvals.** A tool that asks a human calls ``interrupt()`` (or
``request_approval(tool_call_id, ...)``, which names the call for it): the run
pauses, and the interrupt becomes a ``tool-approval-request`` on that call, its
approval id the interrupt's id. The turn waits in chatledger's inbox. The
answer, from any entry point (the approvals page, ``chatledger approve``, the
HTTP API, an AI SDK client), requests a continuation; whichever process claims
it (``serve``, a ``worker``) runs this responder with the ``continuation``
trigger, which reads the paused run from the checkpointer and resumes it with
``Command(resume={interrupt id: {"approved": ..., "reason": ...}})``: the
``interrupt()`` call returns that dict, the tool goes on, and its result and
the model's answer continue the same assistant message. A denied call's result
is streamed as ``tool-output-denied`` (the tool's text still reaches the model).

**Across processes** the checkpointer must be durable: LangGraph's own
``SqliteSaver`` or ``PostgresSaver`` (``checkpointer_for`` makes one from a
store URL). An in-memory checkpointer resumes only in the process that paused.
The graph runs synchronously (``graph.stream``), in the turn runner's worker
thread, so the same checkpointer serves every process and event loop.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

try:
    from langchain_core.messages import BaseMessage
    from langgraph.types import Command, interrupt
except ImportError as error:  # the framework is an optional dependency
    raise ImportError(
        "chatledger.adapters.responders.langgraph needs LangGraph, which is not installed: "
        "pip install 'chatledger[langgraph]'"
    ) from error

from chatledger.adapters.responders.langgraph_chunks import (
    ChunkMapper,
    UnmatchedInterruptError,
    interrupt_call_id,
)
from chatledger.adapters.responders.langgraph_messages import to_langchain_messages
from chatledger.adapters.store.turns.responder import Chunk, ResponderRequest
from chatledger.domain.errors import ChatLedgerError
from chatledger.domain.tool_parts import is_tool_part

__all__ = [
    "LangGraphResponder",
    "NothingToResumeError",
    "UnmatchedInterruptError",
    "decisions_of",
    "request_approval",
    "stream_chunks",
    "thread_id",
]


class NothingToResumeError(ChatLedgerError):
    """A continuation found no paused run to resume, or no answer for one of its interrupts."""


def request_approval(tool_call_id: str, **details: Any) -> dict[str, Any]:
    """Ask the human about tool call ``tool_call_id`` (call it inside the tool); their decision.

    Pauses the graph with ``interrupt({"toolCallId": ..., **details})``; once
    answered it returns ``{"approved": bool, "reason": str | None}``. Get the id
    with ``tool_call_id: Annotated[str, InjectedToolCallId]`` in the tool.
    """
    decision: dict[str, Any] = interrupt({"toolCallId": tool_call_id, **details})
    return decision


def thread_id(request: ResponderRequest) -> str:
    """The LangGraph thread an answer runs in: one per assistant message of a conversation."""
    return f"chatledger:{request.tenant}:{request.chat_id}:{request.message_id}"


def decisions_of(message: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The human decisions on an assistant message's tool parts: approval id -> decision.

    A decision is ``{"approved": bool, "reason": str | None, "toolCallId": id}``.
    """
    found: dict[str, dict[str, Any]] = {}
    for part in message.get("parts") or []:
        if not isinstance(part, Mapping) or not is_tool_part(part):
            continue
        approval = part.get("approval")
        if isinstance(approval, Mapping) and isinstance(approval.get("approved"), bool):
            found[str(approval["id"])] = {
                "approved": approval["approved"],
                "reason": approval.get("reason"),
                "toolCallId": part.get("toolCallId"),
            }
    return found


class LangGraphResponder:
    """Answers with a compiled LangGraph graph (see the module docstring).

    ``graph`` is a compiled graph with a ``messages`` state channel and a
    checkpointer (required: a paused answer resumes from it). ``actor`` is the
    author of the streams it writes. ``inputs`` builds the graph's input for a
    new turn from the converted history (default: ``{"messages": history}``);
    ``config`` is merged into every run's config (``recursion_limit``, ...;
    ``configurable`` keys too, besides ``thread_id``). An answer that ends
    without a pending interrupt has its thread deleted from the checkpointer:
    chatledger's log holds what it said, and the checkpointer only paused
    answers (``keep_threads=True`` keeps every thread, for LangGraph's own
    history and time travel). ``resume_with`` turns a decision
    (``{"approved", "reason", "toolCallId"}``) into what the ``interrupt()``
    returns, for graphs that expect another shape (default: ``{"approved",
    "reason"}``). Every request is kept in ``requests``.
    """

    def __init__(
        self,
        graph: Any,
        *,
        actor: str = "agent:langgraph",
        inputs: Callable[[list[BaseMessage], ResponderRequest], Any] | None = None,
        config: Mapping[str, Any] | None = None,
        keep_threads: bool = False,
        resume_with: Callable[[dict[str, Any]], Any] | None = None,
    ) -> None:
        if not getattr(graph, "checkpointer", None):
            raise ValueError(
                "LangGraphResponder needs a graph compiled with a checkpointer, e.g. "
                "builder.compile(checkpointer=checkpointer_for(url)): a paused answer resumes "
                "from it, in whichever process continues the conversation"
            )
        self.graph = graph
        """The graph that answers."""
        self.actor = actor
        """Recorded as the author of the streams this responder writes."""
        self.inputs = inputs or (lambda history, _request: {"messages": history})
        self.config: dict[str, Any] = dict(config or {})
        self.keep_threads = keep_threads
        self.resume_with = resume_with or _decision
        """What an ``interrupt()`` returns for a decision (default: ``{"approved", "reason"}``)."""
        """Keep an answer's checkpoints once it ends unpaused (default: deleted, see the class)."""
        self.requests: list[ResponderRequest] = []
        """Every request answered, in order."""

    def run_config(self, request: ResponderRequest) -> dict[str, Any]:
        """The config of the graph's run for ``request`` (its thread, and ``config``)."""
        configurable = {**self.config.get("configurable", {}), "thread_id": thread_id(request)}
        return {**self.config, "configurable": configurable}

    def respond(self, request: ResponderRequest) -> Iterator[Chunk]:
        """Run (or resume) the graph for ``request``; yield its chunks (a blocking generator)."""
        self.requests.append(request)
        return self._answer(request)

    def _answer(self, request: ResponderRequest) -> Iterator[Chunk]:
        config = self.run_config(request)
        denied: set[str] = set()
        if request.trigger == "continuation":
            graph_input: Any = self._resume(request, config, denied)
        else:
            graph_input = self.inputs(to_langchain_messages(request.messages), request)
        yield {"type": "start", "messageId": request.message_id}
        yield from stream_chunks(self.graph, graph_input, config, denied=denied)
        if not self.keep_threads and not self.graph.get_state(config).interrupts:
            self.graph.checkpointer.delete_thread(thread_id(request))

    def _resume(self, request: ResponderRequest, config: dict[str, Any], denied: set[str]) -> Any:
        """The ``Command`` resuming the paused run with the human's decisions."""
        paused = self.graph.get_state(config).interrupts
        if not paused:
            raise NothingToResumeError(
                f"chat {request.chat_id!r}: no paused LangGraph run in thread "
                f"{thread_id(request)!r} to resume; the graph's checkpointer must be durable "
                "(checkpointer_for(url)) and shared by every process that continues conversations"
            )
        decisions = decisions_of(request.messages[-1]) if request.messages else {}
        resume: dict[str, Any] = {}
        for waiting in paused:
            decision = decisions.get(waiting.id)
            if decision is None:
                raise NothingToResumeError(
                    f"chat {request.chat_id!r}: the paused run waits for interrupt {waiting.id!r} "
                    f"(tool call {interrupt_call_id(waiting.value)!r}), which has no answer"
                )
            resume[waiting.id] = self.resume_with(decision)
            if not decision["approved"]:
                denied.add(str(decision["toolCallId"]))
        return Command(resume=resume)


def _decision(decision: dict[str, Any]) -> dict[str, Any]:
    """What ``interrupt()`` returns by default: ``{"approved": bool, "reason": str | None}``."""
    return {"approved": decision["approved"], "reason": decision["reason"]}


def stream_chunks(
    graph: Any, graph_input: Any, config: Mapping[str, Any], *, denied: set[str] | None = None
) -> Iterator[Chunk]:
    """Run ``graph`` on ``graph_input`` and yield the UI message chunks of its streams, ``finish`` last.

    The chunks after ``start``.
    """
    mapper = ChunkMapper(denied=denied or ())
    for mode, item in graph.stream(graph_input, config, stream_mode=["messages", "updates"]):
        if mode == "messages":
            yield from mapper.token(item[0])
        elif isinstance(item, Mapping):
            yield from mapper.update(item)
            if "__interrupt__" in item:
                yield from mapper.interrupts(item["__interrupt__"])
    yield from mapper.finish()
