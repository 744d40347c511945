"""A LangGraph run's streams as UI message chunks: ``ChunkMapper``.

``LangGraphResponder`` runs a graph with ``stream_mode=["messages", "updates"]``
and hands every item to a ``ChunkMapper``, which returns the chunks it
stands for:

* ``messages``: the model's ``AIMessageChunk`` tokens. Text becomes
  ``text-start`` / ``text-delta``, reasoning (a provider's thinking, read from
  LangChain's standard content blocks) ``reasoning-start`` /
  ``reasoning-delta``; tool call chunks become ``tool-input-start``
  (once the call's id and name are known) and ``tool-input-delta``. A new
  model message opens a step (``start-step``), closing the one before.
* ``updates``: what each node wrote. A finished ``AIMessage`` closes its
  text (``text-end``), sends the text a model did not stream (a chat model
  called without streaming), and gives each tool call's parsed input
  (``tool-input-available``); a ``ToolMessage`` gives the call's result:
  ``tool-output-available`` (its content), ``tool-output-error`` (a
  ``status="error"`` message) or ``tool-output-denied`` (a call the human
  denied: the tool's text reaches the model, the part stays denied).
* ``__interrupt__``: each ``Interrupt`` asking about a tool call becomes
  ``tool-approval-request`` for that call, the approval id being the
  interrupt's id (so the answer resumes exactly that interrupt). An interrupt
  names its call with ``toolCallId`` (or ``tool_call_id``) in its value
  (``request_approval`` does); one interrupt while one call waits for its
  result is that call's. Any other interrupt raises ``UnmatchedInterruptError``.

``finish`` closes what is open and ends the message (``finish``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, cast

from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, ToolMessage

from chatledger.domain.errors import InvalidInputError

__all__ = ["ChunkMapper", "UnmatchedInterruptError", "interrupt_call_id"]

Chunk = dict[str, Any]


class UnmatchedInterruptError(InvalidInputError):
    """A graph interrupted without saying which tool call the human is asked about."""


def interrupt_call_id(value: Any) -> str | None:
    """The tool call an interrupt's value names (``toolCallId`` or ``tool_call_id``), if any."""
    if isinstance(value, Mapping):
        for key in ("toolCallId", "tool_call_id"):
            if isinstance(value.get(key), str):
                return str(value[key])
    return None


class ChunkMapper:
    """Turns one run's ``messages`` and ``updates`` stream items into UI message chunks."""

    def __init__(self, *, denied: Iterable[str] = ()) -> None:
        self.denied = set(denied)
        """Tool calls the human denied: their ``ToolMessage`` is sent as ``tool-output-denied``."""
        self.step_open = False
        self.step_has_model = False
        self.message_id: str | None = None
        self.open_part: tuple[str, str] | None = None
        """The text or reasoning part being streamed: (kind, id)."""
        self.parts: dict[str, int] = {"text": 0, "reasoning": 0}
        self.streamed_text: set[str] = set()
        self.calls_by_index: dict[int, str] = {}
        self.started: set[str] = set()
        self.waiting: list[str] = []
        """Tool calls given to the graph whose result has not come yet, in order."""

    # -- the ``messages`` stream -----------------------------------------------------------

    def token(self, chunk: BaseMessage) -> list[Chunk]:
        """One item of the ``messages`` stream (only a model's ``AIMessageChunk`` gives chunks)."""
        if not isinstance(chunk, AIMessageChunk):
            return []
        out = self._model_message(chunk.id)
        for kind, delta in _contents(chunk):
            out += self._delta(kind, delta)
            self.streamed_text.add(str(chunk.id))
        for call in chunk.tool_call_chunks:
            index = call.get("index") or 0
            if call.get("id") and call.get("name") and index not in self.calls_by_index:
                call_id = str(call["id"])
                self.calls_by_index[index] = call_id
                out += self._end_text()
                out.append(
                    {"type": "tool-input-start", "toolCallId": call_id, "toolName": call["name"]}
                )
                self.started.add(call_id)
            args = call.get("args")
            if args and index in self.calls_by_index:
                call_id = self.calls_by_index[index]
                out.append(
                    {"type": "tool-input-delta", "toolCallId": call_id, "inputTextDelta": args}
                )
        return out

    # -- the ``updates`` stream ------------------------------------------------------------

    def update(self, update: Mapping[str, Any]) -> list[Chunk]:
        """One item of the ``updates`` stream: ``{node: what it wrote}`` (interrupts aside)."""
        out: list[Chunk] = []
        for node, written in update.items():
            if node != "__interrupt__":
                for message in _messages_of(written):
                    out += self._written(message)
        return out

    def interrupts(self, interrupts: Iterable[Any]) -> list[Chunk]:
        """``tool-approval-request`` for each ``Interrupt`` (see the module docstring)."""
        asked = list(interrupts)
        named = {id(i): interrupt_call_id(i.value) for i in asked}
        unnamed = [i for i in asked if named[id(i)] is None]
        left = [c for c in self.waiting if c not in named.values()]
        if unnamed and (len(unnamed) > 1 or len(left) != 1):
            raise UnmatchedInterruptError(
                f"the graph interrupted with {unnamed[0].value!r}, which names no tool call, while "
                f"{len(left)} call(s) wait for their result: ask with "
                "chatledger.adapters.responders.langgraph.request_approval(tool_call_id, ...) or "
                "interrupt({'toolCallId': ..., ...}) so the approval lands on that call"
            )
        out = self._open_step()
        for interrupt in asked:
            call_id = named[id(interrupt)] or left[0]
            out.append(
                {"type": "tool-approval-request", "approvalId": interrupt.id, "toolCallId": call_id}
            )
        return out

    def finish(self) -> list[Chunk]:
        """Close what is open and end the message."""
        out = self._end_text()
        if self.step_open:
            out.append({"type": "finish-step"})
            self.step_open = False
        out.append({"type": "finish"})
        return out

    # -- inside ---------------------------------------------------------------------------

    def _written(self, message: BaseMessage) -> list[Chunk]:
        if isinstance(message, AIMessage):
            return self._model_answer(message)
        if isinstance(message, ToolMessage):
            return self._tool_result(message)
        return []

    def _model_answer(self, message: AIMessage) -> list[Chunk]:
        out = self._model_message(message.id)
        if str(message.id) not in self.streamed_text:
            for kind, content in _contents(message):
                out += self._end_text() + self._delta(kind, content) + self._end_text()
        out += self._end_text()
        for call in message.tool_calls:
            call_id = str(call["id"])
            if call_id not in self.started:
                out.append(
                    {"type": "tool-input-start", "toolCallId": call_id, "toolName": call["name"]}
                )
                self.started.add(call_id)
            out.append(
                {
                    "type": "tool-input-available",
                    "toolCallId": call_id,
                    "toolName": call["name"],
                    "input": call["args"],
                }
            )
            self.waiting.append(call_id)
        self.message_id = None  # the model message is over; its step stays open for the tools
        return out

    def _tool_result(self, message: ToolMessage) -> list[Chunk]:
        call_id = message.tool_call_id
        out = self._open_step()
        if call_id in self.waiting:
            self.waiting.remove(call_id)
        if call_id in self.denied:
            out.append({"type": "tool-output-denied", "toolCallId": call_id})
        elif message.status == "error":
            out.append(
                {"type": "tool-output-error", "toolCallId": call_id, "errorText": message.text}
            )
        else:
            out.append(
                {"type": "tool-output-available", "toolCallId": call_id, "output": _output(message)}
            )
        return out

    def _model_message(self, message_id: str | None) -> list[Chunk]:
        """Chunks before a model message's content: a new message opens a step."""
        if message_id is not None and message_id == self.message_id:
            return []
        out = self._end_text()
        if self.step_open and self.step_has_model:
            out.append({"type": "finish-step"})
            self.step_open = False
        out += self._open_step()
        self.step_has_model = True
        self.message_id = message_id
        self.calls_by_index = {}
        return out

    def _open_step(self) -> list[Chunk]:
        if self.step_open:
            return []
        self.step_open, self.step_has_model = True, False
        return [{"type": "start-step"}]

    def _delta(self, kind: str, delta: str) -> list[Chunk]:
        """``delta`` of a text or reasoning part: the part is started (another one ended) first."""
        out: list[Chunk] = []
        if self.open_part is not None and self.open_part[0] != kind:
            out += self._end_text()
        if self.open_part is None:
            self.parts[kind] += 1
            self.open_part = (kind, f"{kind}-{self.parts[kind]}")
            out.append({"type": f"{kind}-start", "id": self.open_part[1]})
        out.append({"type": f"{kind}-delta", "id": self.open_part[1], "delta": delta})
        return out

    def _end_text(self) -> list[Chunk]:
        """End the text or reasoning part being streamed, if any."""
        if self.open_part is None:
            return []
        (kind, part_id), self.open_part = self.open_part, None
        return [{"type": f"{kind}-end", "id": part_id}]


def _contents(message: AIMessage | AIMessageChunk) -> list[tuple[str, str]]:
    """A model message's text and reasoning, in order: ``("text" | "reasoning", content)``.

    Read from LangChain's standard ``content_blocks`` (each provider's thinking
    blocks are ``reasoning`` there); tool call blocks are streamed apart.
    """
    if isinstance(message.content, str):
        return [("text", message.content)] if message.content else []
    found: list[tuple[str, str]] = []
    for standard in message.content_blocks:
        block = cast("Mapping[str, Any]", standard)  # a union of TypedDicts: read by its type
        kind = block.get("type")
        if kind == "text" and block.get("text"):
            found.append(("text", str(block["text"])))
        elif kind == "reasoning" and block.get("reasoning"):
            found.append(("reasoning", str(block["reasoning"])))
    return found


def _messages_of(written: Any) -> list[BaseMessage]:
    """The messages a node wrote to ``messages`` (a list or one message)."""
    if not isinstance(written, Mapping):
        return []
    found = written.get("messages")
    if isinstance(found, BaseMessage):
        return [found]
    if isinstance(found, list):
        return [m for m in found if isinstance(m, BaseMessage)]
    return []


def _output(message: ToolMessage) -> Any:
    """A ``ToolMessage``'s content as a tool output: JSON it holds is given as JSON."""
    content = message.content
    if isinstance(content, str) and content[:1] in ("[", "{"):
        try:
            return json.loads(content)
        except ValueError:
            return content
    return content
