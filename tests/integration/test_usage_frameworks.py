"""The usage ledger from the real frameworks: Pydantic AI responses and OpenAI Agents runs."""

from __future__ import annotations

import asyncio
from typing import Any

from agents import Agent as AgentsAgent
from agents import Runner, Usage
from agents.items import ModelResponse as AgentsResponse
from agents.usage import InputTokensDetails, OutputTokensDetails
from pydantic_ai import Agent
from pydantic_ai.conversation import Conversation
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RequestUsage

from chatledger.adapters.frameworks.openai_agents import ChatLedgerSession
from chatledger.adapters.frameworks.openai_agents_usage import record_run_usage
from chatledger.adapters.frameworks.pydantic_ai import ChatLedgerConversationStore
from chatledger.adapters.store.usage import conversation_usage, read_usage
from chatledger.domain.usage import Tokens
from tests.integration.conftest import Backend
from tests.integration.test_openai_agents_session import FakeModel, say


def _answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    usage = RequestUsage(input_tokens=40 * len(messages), output_tokens=7, cache_read_tokens=5)
    return ModelResponse(parts=[TextPart("ok")], usage=usage, model_name="test-model")


def test_pydantic_ai_responses_are_in_the_ledger_once(backend: Backend) -> None:
    """Each stored ModelResponse's usage counts once, saves and re-saves alike."""
    store = backend.open()
    pai = ChatLedgerConversationStore(store)
    agent = Agent(FunctionModel(_answer))
    first = asyncio.run(agent.run("hello", conversation=Conversation(conversation_id="p")))
    asyncio.run(pai.save(first))
    loaded = asyncio.run(pai.load("p"))
    second = asyncio.run(agent.run("more", conversation=loaded))
    asyncio.run(pai.save(second))
    entries = conversation_usage(store, "p")
    assert [(e.source, e.model, e.tokens) for e in entries] == [
        ("pydantic-ai", "function:_answer:", Tokens(40, 7, None, None, 5)),
        ("pydantic-ai", "function:_answer:", Tokens(120, 7, None, None, 5)),
    ]
    assert read_usage(store, by=["model"]).groups["model"][0].total == 174


class _Counting(FakeModel):
    """The scripted model, reporting usage as a real provider would."""

    async def get_response(self, *args: Any, **kwargs: Any) -> AgentsResponse:
        response = await super().get_response(*args, **kwargs)
        response.usage = Usage(
            requests=1, input_tokens=30, output_tokens=4, total_tokens=34,
            input_tokens_details=InputTokensDetails(cached_tokens=10, cache_write_tokens=0),
            output_tokens_details=OutputTokensDetails(reasoning_tokens=1),
        )  # fmt: skip
        return response


def test_an_openai_agents_run_records_its_usage(backend: Backend) -> None:
    """``record_run_usage(session, result)`` after ``Runner.run``: the run's usage, by model."""
    store = backend.open()
    session = ChatLedgerSession(store, "a")
    agent = AgentsAgent(name="assistant", model=_Counting([say("Hi!")]))
    result = asyncio.run(Runner.run(agent, "Hello", session=session))
    recorded = record_run_usage(session, result, model="gpt-4o-mini")
    assert recorded >= 1
    entries = conversation_usage(store, "a")
    assert {e.source for e in entries} == {"openai-agents"}
    total = read_usage(store, by=["model"]).groups["model"][0]
    assert (total.key, total.input, total.output, total.cached_input) == ("gpt-4o-mini", 30, 4, 10)
    assert record_run_usage(session, Usage()) == 0  # nothing reported, nothing recorded
