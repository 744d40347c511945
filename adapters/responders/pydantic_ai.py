"""``PydanticAIResponder``: a Pydantic AI agent answering in chatledger's HTTP app (docs/behaviour.md §9).

The HTTP app hands a responder the conversation as the store holds it; this
one runs a real ``pydantic_ai.Agent`` on it through Pydantic AI's own AI SDK
UI adapter, ``pydantic_ai.ui.vercel_ai.VercelAIAdapter`` (``sdk_version=6``),
and yields the UI message chunks that adapter streams::

    agent = Agent(model, tools=[Tool(delete_file, requires_approval=True)])
    app = create_app(store, responder=PydanticAIResponder(agent))

**The conversion is the adapter's.** The stored UIMessages become the
adapter's run input (``SubmitMessage``, or ``RegenerateMessage`` on a
regenerate); ``VercelAIAdapter.load_messages`` turns them into the agent's
message history, ``VercelAIAdapter.deferred_tool_results`` reads the approval
answers, and the adapter's event stream turns the run's events into chunks:
``start`` with the stored message id, ``start-step``/``finish-step`` around
each model response, text, reasoning and tool chunks, ``message-metadata``
(the response's timestamp under ``pydantic_ai``), a ``tool-approval-request``
for each call of a tool declared with ``requires_approval=True`` (its
approval id is the tool call id), and ``finish``. The adapter's closing
``done`` chunk stands for the SSE ``data: [DONE]``, which the app writes
itself: it is left out. Chunks are the JSON objects the adapter puts on the
wire (camelCase, no ``null`` fields), which the store's strict chunk
validation accepts.

**Per trigger.**

* ``submit-message`` / ``regenerate-message``: the stored messages end with the
  user message to answer (on a regenerate the app has already cut the old
  answer). A call needing approval ends the run with ``DeferredToolRequests``:
  the stream ends on ``tool-approval-request`` and the store shows the part
  ``approval-requested`` (``awaiting-approval``).
* ``continuation``: the last stored message is the assistant message being
  continued, ending with the calls that paused the turn. A call the human
  approved is ``approval-responded``: the adapter hands it to the agent as an
  approved deferred tool result, the tool runs, and its
  ``tool-output-available`` (or ``tool-output-error``) lands on the same part
  (the adapter's replayed ``tool-input-available`` for the call is recorded
  by the store as a replay, not streamed). A call the human denied is
  already ``output-denied`` in the store, which settles a denial when it is
  recorded, whereas the AI SDK client sends it ``approval-responded`` and
  waits for the server's ``tool-output-denied``. So the responder gives the
  adapter those calls as the client sent them (``approval-responded``,
  ``approved: false``, the reason kept): the adapter resolves them as
  ``ToolDenied(message=reason)`` (Pydantic AI's default denial message when
  there is no reason), the model reads the reason in the call's
  ``ToolReturnPart`` (``outcome="denied"``), and the stream carries
  ``tool-output-denied``, which brings the client's part to the stored
  ``output-denied``. (Left ``output-denied``, ``load_messages`` would give the
  model the same result, but the stream would not settle the client's part.)
  The model's answer continues the message.

**Failures.** The adapter turns a failed run into an ``error`` chunk carrying
the exception's text; this responder raises the exception instead (the
chunks the adapter sent before it, closing open parts, are kept), so the app
logs it, sends its own masked ``error`` chunk and closes the stream as
``errored``. A run Pydantic AI cancels itself (``RunCancelled``, e.g. its
``timeout``) ends with the adapter's ``abort`` chunk.

**Messages the adapter does not model.** Pydantic AI's UI message models
follow an earlier AI SDK 6 and forbid unknown keys; a stored message with
fields the SDK has since added (an approval's ``descriptor``, a tool part's
``resultProviderMetadata``, ...) is loaded without those fields, which only
the UI reads.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, get_args

from pydantic import BaseModel, TypeAdapter, ValidationError

try:
    from pydantic_ai import DeferredToolRequests
    from pydantic_ai.ui.vercel_ai import VercelAIAdapter
    from pydantic_ai.ui.vercel_ai.request_types import (
        DataUIPart,
        DynamicToolUIPart,
        RegenerateMessage,
        SubmitMessage,
        ToolUIPart,
        UIMessage,
        UIMessagePart,
    )
    from pydantic_ai.ui.vercel_ai.response_types import BaseChunk, DoneChunk, ErrorChunk
except ImportError as error:  # the framework is an optional dependency
    raise ImportError(
        "chatledger.adapters.responders.pydantic_ai needs Pydantic AI, which is not installed: "
        "pip install 'chatledger[pydantic-ai]'"
    ) from error

from chatledger.adapters.responders.scripted import ResponderRequest
from chatledger.domain.dialects import dialect_for
from chatledger.domain.tool_parts import is_tool_part

if TYPE_CHECKING:
    from pydantic_ai.agent import AbstractAgent

__all__ = [
    "AgentRunFailedError",
    "PydanticAIResponder",
    "encode_chunk",
    "load_ui_messages",
    "with_pending_denials_unsettled",
]

Chunk = dict[str, Any]

SDK_VERSION: Literal[6] = 6
"""The AI SDK major the chunks are for: 6 streams tool approvals (``tool-approval-request``)."""

_UI_MESSAGES: TypeAdapter[list[UIMessage]] = TypeAdapter(list[UIMessage])


class AgentRunFailedError(RuntimeError):
    """The adapter reported a failure (an ``error`` chunk) without an exception from the run."""


class PydanticAIResponder:
    """Answers with a Pydantic AI agent, run through ``VercelAIAdapter`` (see the module docstring).

    ``agent`` is any Pydantic AI agent; its tools declared with
    ``requires_approval=True`` pause the turn for a human. Unless it already
    lists ``DeferredToolRequests`` among its output types (or ``run_options``
    gives an ``output_type``), each run adds it, so a call awaiting approval
    ends the run instead of failing it (Pydantic AI refuses a run
    ``output_type`` for an agent with output validators: list
    ``DeferredToolRequests`` in such an agent's own ``output_type``).

    ``actor`` is recorded as the author of the streams it writes. ``deps`` are
    given to every run; ``deps_for`` computes them per request instead (e.g.
    from ``request.tenant``). ``run_options`` go to every
    ``VercelAIAdapter.run_stream_native`` call (``model``, ``model_settings``,
    ``usage_limits``, ``instructions``, ``timeout``, ...); ``adapter_options``
    to the ``VercelAIAdapter`` constructor (``manage_system_prompt``,
    ``allowed_file_url_schemes``, ...; not ``conversation_store``: chatledger
    holds the conversation). Every request is kept in ``requests``.
    """

    def __init__(
        self,
        agent: AbstractAgent[Any, Any],
        *,
        actor: str = "agent:pydantic-ai",
        deps: Any = None,
        deps_for: Callable[[ResponderRequest], Any] | None = None,
        run_options: Mapping[str, Any] | None = None,
        adapter_options: Mapping[str, Any] | None = None,
    ) -> None:
        self.agent = agent
        """The agent that answers."""
        self.actor = actor
        """Recorded as the author of the streams this responder writes."""
        self.deps = deps
        """The agent's dependencies for every run (unless ``deps_for`` is given)."""
        self.deps_for = deps_for
        """Computes the agent's dependencies for a request."""
        self.run_options: dict[str, Any] = dict(run_options or {})
        """Keyword arguments of every run."""
        self.adapter_options: dict[str, Any] = dict(adapter_options or {})
        """Keyword arguments of every ``VercelAIAdapter``."""
        self.requests: list[ResponderRequest] = []
        """Every request answered, in order."""

    def adapter(self, request: ResponderRequest) -> VercelAIAdapter[Any, Any]:
        """The ``VercelAIAdapter`` for ``request``: its run input holds the stored messages."""
        stored = request.messages
        if request.trigger == "continuation":
            stored = with_pending_denials_unsettled(stored)
        messages = load_ui_messages(stored)
        run_input: SubmitMessage | RegenerateMessage
        if request.trigger == "regenerate-message":
            run_input = RegenerateMessage(
                trigger="regenerate-message", id=request.chat_id, messages=messages
            )
        else:
            # A continuation is what the AI SDK client sends after answering
            # approvals: a submit whose last message is the assistant message.
            run_input = SubmitMessage(id=request.chat_id, messages=messages)
        return VercelAIAdapter(
            agent=self.agent,
            run_input=run_input,
            sdk_version=dialect_for(request.ai_sdk).stream_encoding,
            server_message_id=request.message_id,
            **self.adapter_options,
        )

    def respond(self, request: ResponderRequest) -> AsyncIterator[Chunk]:
        """Run the agent on the stored conversation; yield the adapter's chunks as dicts."""
        self.requests.append(request)
        return self._answer(request)

    async def _answer(self, request: ResponderRequest) -> AsyncIterator[Chunk]:
        adapter = self.adapter(request)
        options = dict(self.run_options)
        if "output_type" not in options and not _defers(self.agent.output_type):
            options["output_type"] = [self.agent.output_type, DeferredToolRequests]
        deps = self.deps_for(request) if self.deps_for is not None else self.deps
        failures: list[Exception] = []
        # ``run_stream`` is ``transform_stream(run_stream_native(...))``; taken
        # apart so the run's exception is seen before the adapter makes it an
        # ``error`` chunk.
        native = _noting_failure(adapter.run_stream_native(deps=deps, **options), failures)
        events = adapter.transform_stream(native)
        try:
            async for event in events:
                if isinstance(event, ErrorChunk):
                    if failures:
                        raise failures[0]
                    raise AgentRunFailedError(event.error_text)
                chunk = encode_chunk(event, request.ai_sdk)
                if chunk is not None:
                    yield chunk
        finally:
            # Ends the run now (not when the generator is collected) when the
            # loop stops early: a failure above, or the app being cancelled.
            close = getattr(events, "aclose", None)
            if close is not None:
                await close()


async def _noting_failure(
    stream: AsyncIterator[Any], failures: list[Exception]
) -> AsyncIterator[Any]:
    """``stream``'s events; an exception it raises is appended to ``failures`` and raised on."""
    try:
        async for event in stream:
            yield event
    except Exception as error:
        failures.append(error)
        raise


def _defers(output_type: Any) -> bool:
    """Whether an output spec lets a run end with ``DeferredToolRequests`` (calls awaiting approval)."""
    if output_type is DeferredToolRequests:
        return True
    if isinstance(output_type, Sequence) and not isinstance(output_type, str):
        return any(_defers(item) for item in output_type)
    return False


def encode_chunk(event: BaseChunk, ai_sdk: int = SDK_VERSION) -> Chunk | None:
    """An adapter chunk as the JSON object it puts on the wire for AI SDK ``ai_sdk`` (6 or 7).

    None for ``done`` (the SSE ``[DONE]``).
    """
    if isinstance(event, DoneChunk):
        return None
    encoded: Chunk = json.loads(event.encode(dialect_for(ai_sdk).stream_encoding))
    return encoded


# -- the continued message's denials, as the AI SDK client sends them ---------------------


def with_pending_denials_unsettled(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``messages`` with the denials the continued message ends on back at ``approval-responded``.

    The continued message is the last one (an assistant message); the calls
    that paused its turn are the tool parts it ends with (data parts between
    them aside): anything the model wrote after a call means the call was
    answered in an earlier run. Those of them that are ``output-denied`` with
    ``approval.approved`` false become ``approval-responded``, as the AI SDK
    client sends a denial (see the module docstring). Nothing else changes;
    the stored messages are not modified.
    """
    if not messages or messages[-1].get("role") != "assistant":
        return messages
    parts = messages[-1].get("parts")
    if not isinstance(parts, list):
        return messages
    answered = list(parts)
    for index in range(len(answered) - 1, -1, -1):
        part = answered[index]
        if not isinstance(part, dict) or not isinstance(part.get("type"), str):
            break
        if part["type"].startswith("data-"):
            continue
        if not is_tool_part(part):
            break
        approval = part.get("approval")
        if (
            part.get("state") == "output-denied"
            and not part.get("providerExecuted")
            and isinstance(approval, dict)
            and approval.get("approved") is False
        ):
            answered[index] = {**part, "state": "approval-responded"}
    if answered == parts:
        return messages
    return [*messages[:-1], {**messages[-1], "parts": answered}]


# -- loading stored messages into the adapter's models ------------------------------------


def _fields(model: type[BaseModel]) -> frozenset[str]:
    """The wire names (aliases) of a model's fields."""
    return frozenset(field.alias or name for name, field in model.model_fields.items())


def _default(model: type[BaseModel], name: str) -> Any:
    return model.model_fields[name].default


_TOOL_PART_FIELDS = {_default(m, "state"): _fields(m) for m in get_args(ToolUIPart)}
_DYNAMIC_TOOL_PART_FIELDS = {_default(m, "state"): _fields(m) for m in get_args(DynamicToolUIPart)}
_PART_FIELDS = {
    _default(m, "type"): _fields(m)
    for m in get_args(UIMessagePart)
    if isinstance(_default(m, "type"), str) and m not in get_args(DynamicToolUIPart)
}
_DATA_PART_FIELDS = _fields(DataUIPart)
_MESSAGE_FIELDS = _fields(UIMessage)
_APPROVAL_FIELDS = frozenset({"id", "approved", "reason"})


def load_ui_messages(messages: list[dict[str, Any]]) -> list[UIMessage]:
    """Stored UIMessages as the adapter's ``UIMessage`` models.

    Messages the models reject are loaded again without the keys the models
    do not have (see the module docstring); a message still invalid then
    raises ``pydantic.ValidationError``.
    """
    try:
        return _UI_MESSAGES.validate_python(messages)
    except ValidationError:
        return _UI_MESSAGES.validate_python([_modelled(message) for message in messages])


def _modelled(message: Any) -> Any:
    """A message with only the keys the adapter's models have (anything unexpected is left to fail)."""
    if not isinstance(message, dict):
        return message
    kept = {key: value for key, value in message.items() if key in _MESSAGE_FIELDS}
    if isinstance(kept.get("parts"), list):
        kept["parts"] = [_modelled_part(part) for part in kept["parts"]]
    return kept


def _modelled_part(part: Any) -> Any:
    kind = part.get("type") if isinstance(part, dict) else None
    if not isinstance(kind, str):
        return part
    if kind == "dynamic-tool":
        fields = _DYNAMIC_TOOL_PART_FIELDS.get(part.get("state"))
    elif kind.startswith("tool-"):
        fields = _TOOL_PART_FIELDS.get(part.get("state"))
    elif kind.startswith("data-"):
        fields = _DATA_PART_FIELDS
    else:
        fields = _PART_FIELDS.get(kind)
    if fields is None:
        return part
    kept = {key: value for key, value in part.items() if key in fields}
    approval = kept.get("approval")
    if isinstance(approval, dict):
        kept["approval"] = {k: v for k, v in approval.items() if k in _APPROVAL_FIELDS}
    return kept
