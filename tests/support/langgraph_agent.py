"""A real LangGraph agent on a fake chat model, for the LangGraph responder's tests.

The model is langchain_core's ``GenericFakeChatModel``, scripted by what it is
shown instead of by a fixed list, so every process answers the same way:
asked to delete a path, it calls ``delete_file`` (its arguments streamed in two
tool call chunks); shown the tool's result, it answers "Done: <result>"; asked
anything else, it echoes the question. Text streams word by word.

``delete_file`` asks a human first (``request_approval``) and appends each
deletion it makes to the file ``$CHATLEDGER_TEST_TOOL_LOG`` (when set), so a
test sees in which process, and how often, the tool ran.

``responder()`` is what ``--responder tests.support.langgraph_agent:responder``
loads: the graph compiled with ``checkpointer_for($CHATLEDGER_TEST_CHECKPOINTS)``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from typing import Annotated, Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.tools import InjectedToolCallId, tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from chatledger.adapters.langgraph import (
    LangGraphResponder,
    checkpointer_for,
    request_approval,
)

TOOL_LOG_ENV = "CHATLEDGER_TEST_TOOL_LOG"
CHECKPOINTS_ENV = "CHATLEDGER_TEST_CHECKPOINTS"
CALL_ID = "call_delete_1"


class OpsModel(GenericFakeChatModel):
    """``GenericFakeChatModel`` answering from the conversation, streaming tool calls too."""

    messages: Iterator[AIMessage | str] = iter(())

    def bind_tools(self, tools: Any, **kwargs: Any) -> OpsModel:
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=answer_to(messages))])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        answer = answer_to(messages)
        pieces: list[AIMessageChunk] = [
            AIMessageChunk(content=word, id=answer.id)
            for word in re.split(r"(\s)", answer.text)
            if word
        ]
        for index, call in enumerate(answer.tool_calls):
            arguments = json.dumps(call["args"])
            for at, piece in enumerate((arguments[:9], arguments[9:])):
                first = at == 0
                chunk = {
                    "index": index,
                    "id": call["id"] if first else None,
                    "name": call["name"] if first else None,
                    "args": piece,
                }
                pieces.append(AIMessageChunk(content="", id=answer.id, tool_call_chunks=[chunk]))
        for piece in pieces:
            generation = ChatGenerationChunk(message=piece)
            if run_manager is not None:
                run_manager.on_llm_new_token(piece.text, chunk=generation)
            yield generation


def answer_to(messages: list[BaseMessage]) -> AIMessage:
    """What the scripted model says to ``messages``."""
    last = messages[-1]
    if isinstance(last, ToolMessage):
        return AIMessage(content=f"Done: {last.text}")
    question = last.text
    found = re.search(r"delete (\S+?)\.?$", question)
    if found:
        call = {"name": "delete_file", "args": {"path": found.group(1)}, "id": CALL_ID}
        return AIMessage(content="", tool_calls=[call])
    return AIMessage(content=f"You said: {question}")


@tool
def delete_file(path: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> str:
    """Delete a file (asks a human first)."""
    decision = request_approval(tool_call_id, path=path)
    if not decision["approved"]:
        return f"not deleted ({decision.get('reason') or 'no reason given'})"
    log = os.environ.get(TOOL_LOG_ENV)
    if log:
        with open(log, "a", encoding="utf-8") as file:
            file.write(f"{os.getpid()} {path}\n")
    return f"deleted {path}"


def build_graph(checkpointer: Any) -> Any:
    """The agent: a model node and a tool node, in a loop, compiled with ``checkpointer``."""
    model = OpsModel()

    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode([delete_file]))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    return builder.compile(checkpointer=checkpointer)


def responder() -> LangGraphResponder:
    """The responder ``serve`` and ``worker`` load: checkpoints where the environment says."""
    return LangGraphResponder(build_graph(checkpointer_for(os.environ[CHECKPOINTS_ENV])))


def __getattr__(name: str) -> Any:
    """``graph`` (checkpointed where the environment says) and ``bare_graph`` (no checkpointer),
    for ``--responder tests.support.langgraph_agent:graph``; built when asked for."""
    if name == "graph":
        return build_graph(checkpointer_for(os.environ[CHECKPOINTS_ENV]))
    if name == "bare_graph":
        return build_graph(None)
    raise AttributeError(name)
