"""``LangGraphBridge``: an app's own LangGraph loop, recorded in chatledger as it streams.

An app that drives its graph itself (its own web framework, queue or CLI)
keeps doing so, and chatledger holds the conversation::

    bridge = LangGraphBridge(store, graph)           # graph compiled with checkpointer_for(url)
    for chunk in bridge.send("chat-1", "Please delete /var/log/ci/archive"):
        forward_to_my_client(chunk)                  # UI message chunks, as they are stored

The same graph, input, chunks and approvals as ``LangGraphResponder`` (which
this runs): each turn's chunks are stored as they stream, an ``interrupt()``
on a tool call pauses the turn on an approval in chatledger's inbox, and
after the human's answer (from any entry point: the approvals page,
``chatledger approve``, the HTTP API, MCP) ``resume(chat_id)`` claims the
continuation and resumes the graph, in this process or another one sharing
the checkpointer::

    for chunk in bridge.resume("chat-1"):
        forward_to_my_client(chunk)

The conversations it starts are owned by ``langgraph`` (``owner``), so no
``serve`` or ``worker`` process answers them in the app's place; requests
waiting for the app show in ``chatledger inbox`` with their age.
``resume_next()`` takes the oldest one waiting (an app's sweep).
Every call blocks: run it in a worker thread from async code.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from chatledger.adapters.responders.langgraph import LangGraphResponder
from chatledger.adapters.store.turns.continuations import LEASE_SECONDS, worker_name
from chatledger.adapters.store.turns.runner import deliver
from chatledger.adapters.store.turns.service import Turn
from chatledger.domain.errors import ConversationExistsError, NothingToContinueError

if TYPE_CHECKING:
    from chatledger.adapters.store import ConversationStore

__all__ = ["LANGGRAPH", "LangGraphBridge"]

LANGGRAPH = "langgraph"
"""The owner of the conversations a ``LangGraphBridge`` starts: the app continues them itself."""

Chunk = dict[str, Any]


class LangGraphBridge:
    """Runs an app's LangGraph graph into chatledger conversations (see the module docstring).

    ``graph`` is compiled with a durable checkpointer (``checkpointer_for``);
    ``actor`` writes the answers; ``tenant`` defaults to the store's; ``owner``
    names the app as the conversations' owner (``langgraph``). ``responder``
    is the ``LangGraphResponder`` it runs (its ``inputs`` and ``config``
    options are the bridge's keyword arguments of the same names).
    """

    def __init__(
        self,
        store: ConversationStore,
        graph: Any,
        *,
        tenant: str | None = None,
        actor: str = "agent:langgraph",
        owner: str = LANGGRAPH,
        **responder_options: Any,
    ) -> None:
        self.store = store
        self.tenant = tenant or store.tenant
        self.owner = owner
        self.responder = LangGraphResponder(graph, actor=actor, **responder_options)
        self.worker = worker_name("langgraph")
        """The name this bridge claims continuation requests under."""

    def send(
        self, chat_id: str, message: str | dict[str, Any], *, actor: str = "user"
    ) -> Iterator[Chunk]:
        """Record a user message (text or a UIMessage) as ``actor`` and stream the graph's answer.

        Yields what the store took of each chunk, as a client should get it.
        The conversation is started (owned by ``owner``) if it is new.
        """
        if isinstance(message, str):
            text = {"type": "text", "text": message}
            message = {"id": f"msg-{uuid.uuid4().hex}", "role": "user", "parts": [text]}
        with contextlib.suppress(ConversationExistsError):
            self.store.start_conversation(
                chat_id, tenant=self.tenant, actor=actor, owner=self.owner
            )
        turn = self.store.turns.open(
            chat_id,
            tenant=self.tenant,
            actor=self.responder.actor,
            trigger="submit-message",
            user_message=message,
            user_actor=actor,
        )
        return self._run(turn)

    def resume(self, chat_id: str) -> Iterator[Chunk]:
        """Continue ``chat_id`` after its approvals were answered: the graph resumes; its chunks.

        ``NothingToContinueError`` when the conversation has no continuation
        waiting for this bridge's owner (not answered yet, or already taken).
        """
        claimed = self.store.claim_continuation(
            self.worker, lease_seconds=LEASE_SECONDS, tenant=self.tenant, chat_id=chat_id,
            owner=self.owner,
        )  # fmt: skip
        if claimed is None:
            status = self.store.status(chat_id, tenant=self.tenant)
            waiting = [call.tool_call_id for call in status.waiting_for]
            raise NothingToContinueError(status.status, waiting)
        return self._run(self.store.turns.continue_claimed(claimed, actor=self.responder.actor))

    def resume_next(self) -> tuple[str, Iterator[Chunk]] | None:
        """The oldest conversation of this owner ready to continue, and its resumed answer; None if none."""
        claimed = self.store.claim_continuation(
            self.worker, lease_seconds=LEASE_SECONDS, tenant=self.tenant, owner=self.owner
        )
        if claimed is None:
            return None
        turn = self.store.turns.continue_claimed(claimed, actor=self.responder.actor)
        return claimed.chat_id, self._run(turn)

    def _run(self, turn: Turn) -> Iterator[Chunk]:
        """Store each chunk of the responder's answer; yield what the client gets; close the stream."""
        writer = turn.writer
        outcome: str = "aborted"
        reason: str | None = "the app stopped reading the answer"
        try:
            for chunk in self.responder.respond(turn.request):
                shown = deliver(writer, chunk)
                if shown is not None:
                    yield shown
            outcome, reason = "finished", None
        except Exception as error:
            outcome, reason = "errored", f"{type(error).__name__}: {error}"
            raise
        finally:
            writer.close(outcome, reason)
