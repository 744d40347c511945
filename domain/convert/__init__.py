"""From UIMessages to what a model API takes (docs/behaviour.md §6): pure functions, no I/O.

``to_model_messages(messages, format)`` is the one entry point; each format
lives in its own module:

- ``ai_sdk``: AI SDK ``ModelMessage`` JSON, equal to the real
  ``convertToModelMessages`` of ``ai@6.0.326`` or ``ai@7.0.173``;
- ``anthropic``: the Messages API's ``system`` and ``messages``;
- ``openai_chat``: Chat Completions ``messages``;
- ``openai_responses``: Responses API ``input`` items.

The three provider formats pair every tool call with exactly one result in
the next message (see ``turns``).
"""

from __future__ import annotations

from typing import Any, Literal

__all__ = ["FORMATS", "Format", "Unanswered", "to_model_messages"]

Format = Literal["ai-sdk", "anthropic", "openai-chat", "openai-responses"]
FORMATS: tuple[Format, ...] = ("ai-sdk", "anthropic", "openai-chat", "openai-responses")
Unanswered = Literal["refuse", "omit"]


def to_model_messages(
    messages: list[dict[str, Any]],
    format: Format = "ai-sdk",
    *,
    ignore_incomplete_tool_calls: bool = False,
    unanswered: Unanswered = "refuse",
    ai_sdk: int = 6,
) -> Any:
    """Convert UIMessages (JSON dicts, as ``messages()`` returns them) to ``format``.

    ``ignore_incomplete_tool_calls`` applies to ``ai-sdk`` only (as in the
    SDK). ``unanswered`` applies to the provider formats: a tool call with no
    result in the last assistant message raises ``UnansweredToolCallError``
    (``"refuse"``, the default: the turn is paused) or is left out (``"omit"``).
    ``ai_sdk`` is the AI SDK major of the conversation (6 or 7): ``ai-sdk``
    follows that version's converter. Raises ``InvalidInputError`` for an unknown format
    (``InvalidAiSdkVersionError``, one of its kind, for an unknown major with ``ai-sdk``).
    """
    if format == "ai-sdk":
        from chatledger.domain.convert import ai_sdk as ai_sdk_format

        return ai_sdk_format.convert(
            messages, ignore_incomplete_tool_calls=ignore_incomplete_tool_calls, ai_sdk=ai_sdk
        )
    if format == "anthropic":
        from chatledger.domain.convert import anthropic

        return anthropic.convert(messages, unanswered=unanswered)
    if format == "openai-chat":
        from chatledger.domain.convert import openai_chat

        return openai_chat.convert(messages, unanswered=unanswered)
    if format == "openai-responses":
        from chatledger.domain.convert import openai_responses

        return openai_responses.convert(messages, unanswered=unanswered)
    from chatledger.domain.errors import InvalidInputError

    raise InvalidInputError(
        f"unknown model message format {format if isinstance(format, str) else type(format).__name__!r}; "
        f"use one of {', '.join(FORMATS)}"
    )
